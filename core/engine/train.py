"""The training loop: a generator of typed events that the CLI and the GUI both drive.

Numerics (docs/design.md, The engine): one autocast region around the forward pass; the loss
in fp32; parameters and AdamW state fp32; fp16 runs ``torch.amp.GradScaler``
and unscales before clipping, and every step reports its scale and whether it
was skipped; bf16 and fp32 run no scaler. A NaN/Inf loss stops the run and
keeps the last good checkpoint; an out-of-memory step takes the next lever
(checkpointing, then tiling) and carries on; Stop saves a checkpoint from
which Resume continues the same run.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from pathlib import Path
from typing import Iterator

import torch

from core.common.errors import InputError
from core.common.events import DoneEvent, ErrorEvent, EvalEvent, Event, StepEvent, WarningEvent
from core.common.sysmem import proc_status
from core.model import precision as prec
from core.model.model_io import load_model, save_checkpoint, save_model
from core.model.network import build, preset, stage_names

from .budget import plan_run
from .config import TrainConfig, pick_device, seed_everything  # noqa: F401 - the engine's public names
from .data import Augment, training_data
from .distributed import SINGLE, World
from .faults import Faults
from .health import FailureWatch, grad_health
from .loader import BatchLoader
from .losses import loss_for
from .memory import SavedTensorMeter, read_peaks, reset_peaks, state_bytes, workers_resident
from .run_notes import opening_events
from .run_state import restore, run_state


def _schedule(total: int):
    warm = max(1, int(0.05 * total))

    def f(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        t = min(1.0, (step - warm) / max(1, total - warm))
        return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * t))

    return f


# the synthetic generator's peak memory per pixel of one log it draws: 75.3 bytes at most over its 13 print-style
# families (3 seeds each, 1600 x 384 px, numpy's allocations measured with tracemalloc; the colour family's, the grey
# ones 20-40), rounded up
STREAM_BYTES_PER_PX = 80


def check_stream_memory(cfg: TrainConfig) -> None:
    """Refuse, before the first log is drawn, a synthetic stream whose logs cannot be made in the memory there is
    (or under ``--ceiling``): ``--stream-size 200000x100000`` grew to 20 GB until the kernel killed it."""
    if not cfg.synthetic:
        return
    from core.common.sysmem import available_memory
    from core.common.vocabulary import GIB

    width, height = cfg.stream_size
    need = STREAM_BYTES_PER_PX * width * height
    room = int(cfg.ceiling_gib * GIB) if cfg.ceiling_gib else available_memory()
    if room and need > room:
        def size(n: float) -> str:
            return f"{n / GIB:,.1f} GiB" if n >= GIB else f"{n / 2**20:,.1f} MiB"

        where = f"the {size(room)} ceiling" if cfg.ceiling_gib else f"the {size(room)} available"
        raise InputError(None, f"--stream-size {width}x{height}: drawing one synthetic log of that size takes about "
                         f"{size(need)}, more than {where}; draw smaller logs (the crop along depth is what a step "
                         "trains on) or raise the ceiling")


def _is_oom(exc: BaseException) -> bool:
    return isinstance(exc, torch.OutOfMemoryError) or (isinstance(exc, RuntimeError) and "out of memory" in str(exc))


class Trainer:
    """Holds the run's state; :meth:`run` is the event generator."""

    def __init__(self, cfg: TrainConfig, stop: threading.Event | None = None, world: World = SINGLE):
        self.cfg = cfg
        self.stop = stop or threading.Event()
        self.world = world
        self.faults = Faults(cfg.fault, world.rank)
        if cfg.stage not in ("binary", "multiclass"):
            raise InputError(None, f"--stage must be binary or multiclass, not {cfg.stage!r}")
        try:
            # the ranks of a process group train where it was formed: each on its own GPU under NCCL, on the CPU
            # under Gloo (a rank that asked for cuda:1 on a one-GPU machine failed in resolve)
            self.device = world.device() or pick_device(cfg.device)
            self.precision = prec.resolve(cfg.precision, self.device)
        except ValueError as exc:
            raise InputError(None, str(exc)) from None
        classes = 1 if cfg.stage == "binary" else 4
        seed_everything(cfg.seed)
        check_stream_memory(cfg)
        self.train_logs, self.val_logs, self.sampler = training_data(cfg, world)
        self.loader = BatchLoader(self.sampler, cfg.workers, pin_memory=self.device.type == "cuda")
        if cfg.init_model:
            self.model, _info = load_model(cfg.init_model)
            if self.model.cfg.classes != classes:
                raise InputError(cfg.init_model, f"model has {self.model.cfg.classes} classes; the {cfg.stage} "
                                 f"stage needs {classes}")
        else:
            try:
                self.model = build(preset(cfg.preset, classes))
            except ValueError as exc:
                raise InputError(None, str(exc)) from None
        if cfg.fp32_modules:
            try:
                prec.keep_fp32(self.model, cfg.fp32_modules)
            except ValueError as exc:
                raise InputError(None, f"--fp32-modules: {exc}") from None
        self.model.to(self.device)
        self.net = self._wrap(self.model)
        self.eager_net, self.compile_note = self.net, None  # what a failed compile falls back to, and why
        if cfg.compile:
            from .compiled import compile_network, unsupported

            self.compile_note = unsupported(self.device, self.precision.mode)
            if self.compile_note is None:
                self.net = compile_network(self.net)
        self.model.set_checkpointing(cfg.checkpointing == "on")
        self.tile = int(cfg.tile) if str(cfg.tile).isdigit() else None
        self.crop = self.tile or cfg.crop_along
        self.plan = None
        if cfg.checkpointing == "auto" or cfg.tile == "auto":
            plan_run(self)
        elif cfg.ceiling_gib:  # levers set by hand: a ceiling no lever can meet is refused before the first step
            plan_run(self, feasible_only=True)  # (--ceiling-gib 0.00001 trained without a word)
        self.loss_fn = loss_for(classes)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.total_steps = self._total_steps()
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, _schedule(self.total_steps))
        self.scaler = self.precision.make_scaler(cfg.scaler_growth_interval)
        self.step = 0
        self.watch = FailureWatch()
        self.ckpt_path = Path(cfg.checkpoint) if cfg.checkpoint else (Path(cfg.out).with_suffix(".ckpt") if cfg.out else None)
        self.last_good_ckpt: str | None = None
        self.resumed_from_world = world.size
        self._saved_at = -1
        self._encoder_frozen = False
        if not 0.0 <= cfg.freeze_encoder <= 1.0:
            raise InputError(None, f"--freeze-encoder {cfg.freeze_encoder:g}: a share of the steps, from 0 to 1")
        if cfg.resume:
            restore(self, cfg.resume)

    def retarget(self, total_steps: int, eval_every: int) -> None:
        """A new step budget for a run under way (a time-boxed caller sizes it from a timed first step):
        the learning-rate schedule is rebuilt for it and continues from the step reached."""
        self.total_steps = max(1, int(total_steps))
        self.scheduler.lr_lambdas[0] = _schedule(self.total_steps)
        self.cfg.eval_every = max(1, int(eval_every))

    def _freeze_encoder(self, frozen: bool) -> None:
        """Freeze (or thaw) the encoder's weights: frozen, they get no gradient and AdamW leaves them be."""
        if frozen == self._encoder_frozen:
            return
        from core.model.network import encoder_parameters

        for p in encoder_parameters(self.model):  # the raw net (self.net may wrap it)
            p.requires_grad_(not frozen)
        self._encoder_frozen = frozen

    def _wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        """The module the training forward runs through: DistributedDataParallel over ``model`` when the world has
        several ranks (it broadcasts rank 0's weights now and all-reduces gradients in backward), else ``model``.
        ``self.model`` stays the bare network for evaluation, checkpoints and the model file."""
        if not self.world.distributed:
            return model
        from torch.nn.parallel import DistributedDataParallel

        # gradient_as_bucket_view: the all-reduce buckets are the .grad tensors, not a second copy of them
        return DistributedDataParallel(model, device_ids=[self.device.index] if self.device.type == "cuda" else None,
                                       gradient_as_bucket_view=True)

    @property
    def logs_per_rank(self) -> int:
        """Multiclass: logs each rank accumulates per optimizer step; the global batch stays ``effective_batch``
        whatever the number of ranks, so a run's hyperparameters do not change with the world size."""
        return max(1, math.ceil(self.cfg.effective_batch / self.world.size))

    # -- bookkeeping ---------------------------------------------------------
    def _total_steps(self) -> int:
        cfg = self.cfg
        if cfg.steps is not None:
            if cfg.steps < 1:
                raise InputError(None, "--steps must be at least 1")
            return cfg.steps
        return max(1, (cfg.epochs or 1) * self.steps_per_epoch)

    @property
    def steps_per_epoch(self) -> int:
        """Optimizer steps that show every training log once across all ranks."""
        n = max(1, len(self.train_logs))
        per_step = self.world.size * (self.logs_per_rank if self.cfg.stage == "multiclass" else 1)
        return max(1, math.ceil(n / per_step))

    def save_checkpoint(self) -> str | None:
        """Rank 0 writes (the replicas are identical); every rank records the path it will resume from."""
        if not self.ckpt_path:
            return None
        if self.last_good_ckpt == str(self.ckpt_path) and self._saved_at == self.step:
            return self.last_good_ckpt  # already written at this step (a periodic save on the last step)
        if self.world.is_main:
            save_checkpoint(self.ckpt_path, run_state(self))
        self.world.barrier()  # nobody reads the file before it is complete
        self.last_good_ckpt, self._saved_at = str(self.ckpt_path), self.step
        return self.last_good_ckpt

    # -- one optimizer step -----------------------------------------------------
    def _micro_batches(self):
        if self.cfg.stage == "binary":
            sizes = [1]
        else:
            n = self.logs_per_rank
            mb = max(1, min(self.cfg.micro_batch, n))
            sizes = [min(mb, n - i) for i in range(0, n, mb)]
        return self.loader.batches(sizes, Augment(crop_along=self.crop))

    def _one_step(self) -> StepEvent:
        cfg = self.cfg
        t0 = time.perf_counter()
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        reset_peaks(self.device)
        batches = self._micro_batches()
        n_pix = sum(float(v.sum()) for _, _, v in batches)
        loss_total = 0.0
        meter = SavedTensorMeter(self.model, stage_names(self.model))
        if self.faults:
            self.faults.before_step(self.step)
        with meter:
            for i, (x, y, valid) in enumerate(batches):
                # pinned batches (CUDA) copy without blocking: the copy overlaps the step's first kernels
                x, y, valid = (t.to(self.device, non_blocking=True) for t in (x, y, valid))
                if self.device.type == "cuda":
                    x = x.contiguous(memory_format=torch.channels_last)
                # DDP: all-reduce the gradients once, after the last micro-batch, not after each
                sync = (self.net.no_sync() if self.world.distributed and i < len(batches) - 1
                        else contextlib.nullcontext())
                with sync:
                    with self.precision.autocast():
                        logits = self.net(x)
                    loss = self.loss_fn(logits, y, valid)  # fp32, outside autocast
                    weight = float(valid.sum()) / max(1.0, n_pix)
                    if self.faults:
                        loss = self.faults.loss(loss, self.step)
                    loss_total += float(loss.detach()) * weight
                    scaled = loss * weight
                    (self.scaler.scale(scaled) if self.scaler else scaled).backward()
        activations = meter.count.as_dict()
        loss_total = self.world.mean(loss_total, self.device)  # NaN on one rank is NaN on all: they stop together
        if not math.isfinite(loss_total) and self.scaler is None:
            raise FloatingPointError(f"loss is {loss_total} at step {self.step}")
        if self.scaler is not None:
            self.scaler.unscale_(self.optimizer)
        health = grad_health(self.model, cfg.per_layer_norms)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip)
        lr = self.optimizer.param_groups[0]["lr"]
        if self.scaler is not None:
            before = self.scaler.get_scale()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            after = self.scaler.get_scale()
            skipped = after < before
            # the gradients were all-reduced, so every rank's scaler saw the same Inf and decided alike; check it,
            # since replicas that step apart would silently drift
            any_skip, all_skip = self.world.flags(skipped, self.device)
            if any_skip != all_skip:
                raise RuntimeError(f"ranks disagree on skipping step {self.step + 1} (fp16 overflow); the replicas "
                                   "are no longer in step")
            scale = after
        else:
            self.optimizer.step()
            skipped, scale, before = False, None, None
        if not skipped:
            self.scheduler.step()
        memory = {**state_bytes(self.model, self.optimizer), "activations": activations["total"],
                  "activations_by_dtype": activations["by_dtype"], "activations_by_stage": activations["by_stage"],
                  "input_shape": list(batches[0][0].shape), **read_peaks(self.device),
                  # the process's resident size on every device (on CUDA the host side of the run) and its data
                  # workers': the app's gauge shows the training's memory from these, not the app's own
                  **({} if self.device.type == "cpu" else {"rss": proc_status().get("VmRSS", 0)}),
                  **workers_resident()}
        ev = StepEvent(step=self.step + 1, loss=loss_total, lr=lr, precision=self.precision.mode, loss_scale=scale,
                       skipped=bool(skipped), grad=health, memory=memory, wall_time=time.perf_counter() - t0,
                       epoch=self.step // self.steps_per_epoch, data_wait_s=self.loader.wait_s)
        self._scale_before = before
        return ev

    def _next_lever(self) -> str | None:
        if not self.model.checkpointing:
            self.model.set_checkpointing(True)
            return "gradient checkpointing on"
        if self.crop is None or self.crop > 256:
            self.crop = 512 if self.crop is None else max(256, self.crop // 2)
            return f"tiling along depth in strips of {self.crop} px"
        return None

    # -- the run ---------------------------------------------------------------
    def run(self) -> Iterator[Event]:
        """The run's events; its batch workers stop when it ends, however it ends."""
        try:
            yield from self._run()
        finally:
            self.loader.close()

    def _run(self) -> Iterator[Event]:
        cfg = self.cfg
        yield from opening_events(self)
        status = "finished"
        while self.step < self.total_steps:
            if self.stop.is_set():
                status = "stopped"
                break
            self._freeze_encoder(self.step < int(self.total_steps * cfg.freeze_encoder))
            try:
                ev = self._one_step()
            except FloatingPointError as exc:
                yield ErrorEvent(self.step, f"{exc}; stopped, the last good checkpoint is kept")
                status = "nan"
                break
            except Exception as exc:  # noqa: BLE001 - _recover re-raises what it cannot recover from
                stopped = yield from self._recover(exc)
                if stopped:
                    status = stopped
                    break
                continue
            if not math.isfinite(ev.loss) and not ev.skipped:
                yield ErrorEvent(self.step, f"loss is {ev.loss} at step {ev.step}; stopped, the last good checkpoint "
                                 "is kept")
                status = "nan"
                break
            self.step += 1
            yield ev
            for w in self.watch.observe(ev, self._scale_before):
                yield w
            if cfg.eval_every and self.step % cfg.eval_every == 0 and self.step < self.total_steps:
                yield self.evaluate()
            if cfg.checkpoint_every and self.step % cfg.checkpoint_every == 0:
                self.save_checkpoint()
        yield from self._closing_events(status)

    def _recover(self, exc: BaseException):
        """A step that raised: a failed compile trains on eagerly, an out-of-memory takes the next lever (events;
        returns None to go on), every lever taken ends the run (returns its status); anything else is raised."""
        from .compiled import is_compile_failure

        if self.net is not self.eager_net and is_compile_failure(exc):
            self.net, self.compile_note = self.eager_net, f"compiling failed: {' '.join(str(exc).split())[:240]}"
            yield WarningEvent(self.step, "compile_fallback", f"{self.compile_note}; training goes on "
                               "without compiling", "")
            return None
        if not _is_oom(exc) or self.world.distributed:
            # with several ranks one rank cannot change levers alone: the others wait in the all-reduce
            raise exc
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        lever = self._next_lever()
        if lever is None:
            yield ErrorEvent(self.step, "out of memory with every lever taken; use a smaller log or preset")
            return "oom"
        yield WarningEvent(self.step, "lever", f"out of memory at step {self.step + 1}: took the next lever, "
                           f"{lever}, and carried on", "set a ceiling to plan the levers before the run")
        return None

    def _closing_events(self, status: str) -> Iterator[Event]:
        """The run's end: its final evaluation (a stopped run's model is measured too), checkpoint and model
        file, and the done event with the summary the model file carries."""
        cfg = self.cfg
        summary: dict = {"steps": self.step, "precision": self.precision.mode, "preset": self.model.cfg.preset}
        if cfg.synthetic:  # which print styles the model saw: held-out figures depend on it (eval-styles)
            from core.synth.styles import DEFAULT_FAMILIES

            summary["styles"] = list(dict.fromkeys(cfg.styles or DEFAULT_FAMILIES))  # a family drawn twice, once
        if cfg.init_model:
            summary["init_model"] = Path(cfg.init_model).name
        if cfg.compile:
            summary["compiled"] = self.net is not self.eager_net
        if status == "finished" or (status == "stopped" and self.step > 0 and cfg.out):
            # a stopped run's model is measured too: whoever is offered it must see what it reads
            ev_final = self.evaluate()
            yield ev_final
            summary.update({"val_mask_f1": ev_final.mask_f1, "val_curve_r": ev_final.curve_r,
                            "val_curve_rmse_pct": ev_final.curve_rmse_pct, "val_logs": len(self.val_logs)})
            if cfg.compare_model:
                summary["compared"] = {"model": Path(cfg.compare_model).name, **self.score_other(cfg.compare_model)}
        ckpt = self.last_good_ckpt if status == "nan" else self.save_checkpoint()
        model_path = None
        if cfg.out and status in ("finished", "stopped"):
            if self.world.is_main:
                save_model(cfg.out, self.model, self.precision.mode, summary)
                model_path = cfg.out
            self.world.barrier()
        yield DoneEvent(self.step, status, model_path, ckpt, summary)

    def score_other(self, path: str) -> dict:
        """Another model's held-out figures on this run's validation logs: the model it may replace, measured on
        the same logs as the run's own (``val_*`` figures), so the two can be set side by side."""
        from .evaluate import evaluate_logs

        try:
            other, _info = load_model(path)
        except InputError as exc:
            return {"error": exc.one_line()}
        if other.cfg.classes != self.model.cfg.classes:
            return {"error": f"{other.cfg.classes} classes, this run's model {self.model.cfg.classes}: not comparable"}
        other.to(self.device)
        res = evaluate_logs(other, self.val_logs, self.precision, self.device, self.loss_fn)
        return {"val_mask_f1": res["mask_f1"], "val_curve_r": res.get("curve_r"),
                "val_curve_rmse_pct": res.get("curve_rmse_pct")}

    def evaluate(self) -> EvalEvent:
        from .evaluate import combine_scores, score_log

        # each rank scores its share of the validation logs; the gathered scores give every rank the same metrics
        mine = [score_log(self.model, lg, self.precision, self.device, self.loss_fn)
                for lg in self.val_logs[self.world.rank :: self.world.size]]
        scores = [e for part in self.world.gather(mine) for e in part]
        order = {lg.name: i for i, lg in enumerate(self.val_logs)}
        res = combine_scores(sorted(scores, key=lambda e: order.get(e["name"], 0)))
        return EvalEvent(step=self.step, epoch=self.step // self.steps_per_epoch, **res)
