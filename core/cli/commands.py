"""Subcommands of the engine (train, digitize, eval).

Kept apart from ``cli.py`` so the parser module stays small; each handler
imports its engine module lazily so ``welltrace --help`` starts fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.common.errors import InputError


def positive_number(text: str) -> float:
    """An argparse type: a finite number above zero (``--max-memory nan`` or ``inf`` is refused by name)."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number above zero, got {text!r}")
    return value


MIN_TILE_PX = 64  # a window shorter than this along depth is narrower than the networks' stride allows


def tile_px(text: str) -> int:
    """An argparse type: a window length along depth in px, at least :data:`MIN_TILE_PX`."""
    import argparse

    if not text.isdigit() or int(text) < MIN_TILE_PX:
        raise argparse.ArgumentTypeError(f"expected a window length of at least {MIN_TILE_PX} px, got {text!r}")
    return int(text)


def scheduler_address(text: str) -> str:
    """An argparse type: a Dask scheduler's address, ``PROTOCOL://HOST:PORT`` or ``HOST:PORT``."""
    import argparse
    import re

    if not re.fullmatch(r"(?:(?:tcp|tls|ucx|ws|wss)://)?(?:\[[0-9a-fA-F:]+\]|[\w.-]+):\d{1,5}|inproc://\S+", text):
        raise argparse.ArgumentTypeError(f"{text!r} is no scheduler address (tcp://HOST:PORT, e.g. "
                                         "tcp://10.0.0.5:8786)")
    return text


def _fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} GiB"


def cmd_train(args) -> int:
    from core.common.errors import UsageError
    from core.engine.train import TrainConfig, Trainer

    if args.steps is not None and args.epochs is not None:
        raise UsageError("give --steps or --epochs, not both")
    out = Path(args.out)
    if out.suffix != ".safetensors":
        raise UsageError(f"--out {out}: model files end in .safetensors")
    try:
        sw, sh = (int(v) for v in args.stream_size.lower().split("x"))
    except ValueError:
        raise UsageError(f"--stream-size {args.stream_size!r}: expected WIDTHxHEIGHT, e.g. 1600x384") from None
    from core.synth.styles import DEFAULT_FAMILIES, parse_families

    try:
        styles = parse_families(args.styles)
        if args.exclude_styles:
            dropped = parse_families(args.exclude_styles)
            styles = tuple(f for f in styles if f not in dropped)
    except ValueError as exc:
        raise UsageError(f"--styles/--exclude-styles: {exc}") from None
    if not styles:
        raise UsageError("--exclude-styles leaves no print-style family to train on")
    cfg = TrainConfig(
        stream_size=(sw, sh), styles=None if set(styles) == set(DEFAULT_FAMILIES) else styles,
        data=args.data if args.data != "synthetic" else None, synthetic=args.data == "synthetic" or args.synthetic,
        stage=args.stage, preset=args.preset, init_model=args.init, precision=args.precision, device=args.device,
        steps=args.steps if args.steps is not None else (None if args.epochs else 100), epochs=args.epochs,
        lr=args.lr, effective_batch=args.batch, micro_batch=min(4, args.batch), crop_along=args.crop or None, checkpointing=args.checkpointing, tile=args.tile,
        ceiling_gib=args.ceiling, out=str(out), resume=args.resume, seed=args.seed, eval_every=args.eval_every,
        fp32_modules=[m for m in (args.fp32_modules or "").split(",") if m], freeze_encoder=args.freeze_encoder,
        workers=args.workers, compile=args.compile,
    )
    from core.engine.distributed import join_from_env

    world = join_from_env(args.device)  # a world of one unless torchrun started this process
    try:
        return _run_training(Trainer(cfg, world=world), args.events if world.is_main else None,
                             quiet=not world.is_main)
    finally:
        world.close()


def _run_training(trainer, events_path: str | None, quiet: bool) -> int:
    """Drive the trainer's events to the terminal and the events file. Under torchrun only rank 0 prints and
    writes; the other ranks are quiet but for errors."""
    from core.common.progress import progress_bar

    # events are a live log (line-buffered, readable while the run goes on), not an atomic document
    fh = open(events_path, "w", encoding="utf-8", buffering=1) if events_path else None
    status = "finished"
    try:
        with progress_bar(trainer.total_steps, "train", unit="step", disable=quiet) as bar:
            bar.update(trainer.step)
            for ev in trainer.run():
                if fh:
                    fh.write(ev.to_json() + "\n")
                if ev.type == "error":
                    print(f"welltrace: rank {trainer.world.rank}: {ev.message}" if trainer.world.distributed
                          else f"welltrace: {ev.message}", file=sys.stderr)
                elif ev.type == "done":
                    status = ev.status
                if quiet:
                    continue
                if ev.type == "step":
                    scale = "none" if ev.loss_scale is None else f"{ev.loss_scale:g}"
                    bar.set_postfix_str(f"loss {ev.loss:.4f} scale {scale} act {_fmt_bytes(ev.memory['activations'])}")
                    bar.update(1)
                elif ev.type == "warning":
                    kind = "note" if ev.code == "no_scaler" else "warning"
                    print(f"{kind}: {ev.message}" + (f" ({ev.advice})" if ev.advice else ""), file=sys.stderr)
                elif ev.type == "epoch":
                    r = "-" if ev.curve_r is None else f"{ev.curve_r:.4f}"
                    print(f"step {ev.step}: val loss {ev.val_loss:.4f}  mask F1 {ev.mask_f1:.3f}  "
                          f"IoU {ev.mask_iou:.3f}  curve r {r}")
                elif ev.type == "done":
                    ranks = f" on {trainer.world.size} ranks" if trainer.world.distributed else ""
                    print(f"{ev.status} after {ev.step} steps{ranks}; model {ev.model_path or '-'}; "
                          f"checkpoint {ev.checkpoint_path or '-'}")
    finally:
        if fh:
            fh.close()
    return 0 if status in ("finished", "stopped") else 1


def cmd_digitize(args) -> int:
    if len(args.scan) > 1 or Path(args.scan[0]).is_dir():
        return cmd_digitize_many(args)
    if not Path(args.scan[0]).exists():
        raise InputError(args.scan[0], "no such scan or folder")
    for flag, value in (("--calib", args.calib), ("--out", args.out)):
        if not value:
            raise InputError(None, f"digitising one scan needs {flag} (a folder or several scans take each "
                             "scan's NAME.calib.json and write NAME.digitized.las)")
    for flag, value in (("--jobs", args.jobs), ("--scheduler", args.scheduler)):
        if value:
            raise InputError(None, f"{flag} is for a folder or several scans")
    args.scan = args.scan[0]
    return _digitize_one(args)


def cmd_digitize_many(args) -> int:
    """Several scans or folders: each with its calibration beside it, in worker processes or on a Dask cluster;
    up-to-date LAS files skipped, a bad scan reported and the rest digitised, a summary table written."""
    import time

    from core.common.atomic import require_writable
    from core.common.progress import progress_bar
    from core.digitize.batch import SUMMARY_NAME, ScanOutcome, jobs_for, scans_in, up_to_date, write_summary
    from core.digitize.batch_run import RunOptions, run_cluster, run_local, thread_split

    one_scan = [flag for flag, given in (("--calib", args.calib), ("--from-mask", args.from_mask),
                                         ("--mask-out", args.mask_out), ("--qc", args.qc),
                                         ("--section", args.section is not None), ("--well", args.well),
                                         ("--tile", args.tile), ("--whole-picture", args.whole_picture),
                                         ("--reference", args.reference)) if given]
    if one_scan:
        raise InputError(None, f"{', '.join(one_scan)}: for one scan; with a folder or several scans each scan "
                         "takes its own NAME.calib.json and writes NAME.digitized.las and its QC picture")
    if bool(args.model) == bool(args.classical):
        raise InputError(None, "give exactly one of --model MODEL or --classical")
    for flag, value in (("--jobs", args.jobs), ("--threads", args.threads)):
        if value is not None and value < 1:
            raise InputError(None, f"{flag} must be at least 1")
    if args.model and not Path(args.model).is_file():
        raise InputError(args.model, "no such model file")
    out_dir = Path(args.out) if args.out else None
    if out_dir is not None:
        if out_dir.exists() and not out_dir.is_dir():
            raise InputError(args.out, "with several scans --out is a folder for their LAS files")
        out_dir.mkdir(parents=True, exist_ok=True)
    scans = [p.absolute() for p in scans_in(args.scan)]  # a cluster's workers resolve paths elsewhere
    jobs = jobs_for(scans, out_dir.absolute() if out_dir else None, qc=not args.no_qc)
    summary = Path(args.summary) if args.summary else (out_dir or scans[0].parent) / SUMMARY_NAME
    require_writable([summary] + [j.las for j in jobs])
    model = Path(args.model) if args.model else None
    todo = [j for j in jobs if args.force or not up_to_date(j, model)]
    outcomes = [ScanOutcome(j.scan.name, "up to date", las=[str(j.las)]) for j in jobs if j not in todo]
    workers, threads = thread_split(args.jobs or 1, args.threads)
    ceiling = None if args.max_memory is None else int(args.max_memory * 1024**3 / workers)
    # on a cluster each task takes the threads asked for, else its worker's default (that machine's cores)
    options = RunOptions(args.model, args.precision, (args.threads or 0) if args.scheduler else threads, ceiling)
    where = f"the Dask cluster at {args.scheduler}" if args.scheduler else \
        f"{workers} worker process(es) × {threads} thread(s)"
    print(f"{len(jobs)} scan(s): {len(todo)} to digitise on {where}, {len(jobs) - len(todo)} up to date",
          file=sys.stderr)
    t0 = time.perf_counter()
    with progress_bar(len(todo), "digitize", unit="scan") as bar:
        stream = run_cluster(todo, options, args.scheduler) if args.scheduler else run_local(todo, options, workers)
        for outcome in _refusing(stream, args.scheduler):
            outcomes.append(outcome)
            bar.update(1)
            if outcome.failed:
                bar.write(f"{outcome.scan}: failed: {outcome.error}", file=sys.stderr)
    order = {j.scan.name: i for i, j in enumerate(jobs)}
    outcomes.sort(key=lambda o: order.get(o.scan, len(order)))
    write_summary(summary, outcomes)
    failed = [o.scan for o in outcomes if o.failed]
    done = sum(o.status == "written" for o in outcomes)
    print(f"digitised {done} scan(s) in {time.perf_counter() - t0:.1f} s, {len(jobs) - len(todo)} up to date, "
          f"{len(failed)} failed; summary: {summary}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 2
    return 0


def _refusing(stream, scheduler: str | None):
    """The outcomes, a cluster that cannot be reached (or Dask not installed) refused in one line."""
    try:
        yield from stream
    except (OSError, TimeoutError, RuntimeError) as exc:
        if not scheduler:
            raise
        raise InputError(scheduler, f"the Dask scheduler cannot be used: {exc}") from None


def _digitize_one(args) -> int:
    from core.common.progress import progress_bar
    from core.digitize.pipeline import digitize_sections, in_scan_frame, las_path_for, write_result
    from core.io.calibration import Calibration
    from core.io.scan import load_scan, save_gray_png

    if sum(map(bool, (args.model, args.classical, args.from_mask))) != 1:
        raise InputError(None, "give exactly one of --model MODEL, --classical or --from-mask MASK.png")
    scan = load_scan(args.scan)
    calib = Calibration.load(args.calib)
    if not calib.curves:
        raise InputError(args.calib, "add at least one curve: the calibration names none (a proposal from "
                         "`welltrace calibrate --propose` holds depths and tracks only; see docs/file-formats.md)")
    from core.common.atomic import require_writable

    outputs = [args.out, args.mask_out, args.qc]
    if args.section is None:  # each section's LAS beside the main one (OUT.repeat.las …)
        outputs += [str(las_path_for(args.out, s)) for s in calib.section_files() if s]
    require_writable(outputs)  # before the long work, not after it
    mask = None
    if args.from_mask:
        from core.io.scan import load_mask

        mask = load_mask(args.from_mask, scan.image.shape)
    model = precision = None
    device = "cpu"
    if args.model:
        from core.engine.train import pick_device
        from core.model import precision as prec
        from core.model.model_io import load_model

        model, info = load_model(args.model)
        device = pick_device(args.device)
        model.to(device)
        precision = prec.for_inference(args.precision, info["precision"], device)
    import torch

    with progress_bar(1, "digitize", unit="window") as bar, torch.no_grad():
        def prog(i, n):
            bar.total = n
            bar.n = i
            bar.refresh()
        tile = args.tile
        ceiling = None if args.max_memory is None else int(args.max_memory * 1024**3)
        parts = digitize_sections(scan.image, calib, None if args.section is None else args.section - 1,
                                  source=args.scan, mask=mask, rgb=scan.rgb, model=model, precision=precision,
                                  device=device, tile=tile, progress=prog, whole_picture=args.whole_picture,
                                  memory_ceiling=ceiling, reference=args.reference)
    source = (Path(args.model).name if args.model else f"mask {Path(args.from_mask).name}" if args.from_mask
              else None)
    from core.common.atomic import outputs_together

    reports = []
    with outputs_together():  # every LAS, the mask and the QC pages of this run land together or not at all
        for suffix, sec, res in parts:
            for w in res.warnings:
                print(f"warning: {w}", file=sys.stderr)
            out = args.out if args.section is not None else las_path_for(args.out, suffix)
            write_result(out, res, calib, str(Path(args.scan).name), source,
                         well={"WELL": args.well} if args.well else None)
            n = res.depth.size
            where = "" if sec is None else f" [{sec.kind} pass, {'rows' if calib.depth_axis == 'y' else 'columns'} " \
                                           f"{sec.start}–{sec.stop}]"
            reports.append(f"wrote {out}{where}: {len(res.values)} curves × {n} samples "
                           f"({res.depth[0]:g}–{res.depth[-1]:g} {calib.depth_unit}); evidence "
                           f"{res.timings['evidence_s']:.2f} s" + (f" ({res.memory['path']} path)" if res.memory else "")
                           + f", grid {res.timings['grid_s']:.2f} s, trace {res.timings['trace_s']:.2f} s")
        if args.mask_out:
            save_gray_png(args.mask_out, in_scan_frame(parts, calib, scan.image.shape).mask)
        pages = []
        if args.qc:
            from core.digitize.qc_picture import write_qc

            pages = write_qc(args.qc, scan.rgb if scan.rgb is not None else scan.image, calib, parts,
                             Path(args.scan).name, source or "")
    for line in reports:
        print(line)
    if pages:
        print(f"wrote the QC picture: {pages[0]}" + (f" … {pages[-1].name} ({len(pages)} pages)"
                                                      if len(pages) > 1 else ""))
    plans = [res.memory for _, _, res in parts if res.memory]
    if plans:
        from core.common.sysmem import proc_status

        m = max(plans, key=lambda p: p["predicted_peak"])
        print(f"memory: {sum(p['windows'] for p in plans)} window(s) of {m['window_px']} px along depth; peak "
              f"resident {proc_status().get('VmHWM', 0) / 1024**3:.2f} GiB, predicted "
              f"{m['predicted_peak'] / 1024**3:.2f} GiB for reading the scan, ceiling {m['ceiling'] / 1024**3:.1f} GiB")
    return 0


def cmd_eval(args) -> int:
    from core.digitize.metrics import compare_las, summarise
    from core.io.calibration import Calibration
    from core.io.las_io import read_las

    pred, truth = read_las(args.pred), read_las(args.truth)
    ranges = None
    if args.calib:
        cal = Calibration.load(args.calib)
        ranges = {c.mnemonic.upper(): c.value_range for c in cal.curves}
    metrics = compare_las(pred, truth, ranges)
    if not metrics:
        raise InputError(args.pred, f"no curve in common with {args.truth}")
    if args.json:
        print(json.dumps({"curves": [m.as_dict() for m in metrics], "summary": summarise(metrics)},
                         indent=2, default=lambda v: None))
        return 0
    print(f"{'curve':<8}{'n':>7}{'r':>8}{'R²':>8}{'MAE':>10}{'RMSE':>10}{'RMSE%':>8}{'≤2%':>7}{'NULL':>7}{'offset':>8}")
    for m in metrics:
        print(f"{m.mnemonic:<8}{m.n:>7}{m.r:>8.4f}{m.r2:>8.3f}{m.mae:>10.4g}{m.rmse:>10.4g}{m.rmse_pct:>8.2f}"
              f"{m.within_2pct:>7.1%}{m.null_fraction:>7.1%}{m.best_offset:>+8d}")
    s = summarise(metrics)
    print(f"median r {s['median_r']:.4f}, median RMSE {s['median_rmse_pct']:.2f} % of range")
    return 0


def _budget_levers(args, cfg, device, ceiling):
    from core.engine.budget import Levers, default_16bit, plan

    mode = default_16bit(device) if args.precision == "auto" else args.precision
    pl = plan(cfg, args.width, args.height, ceiling, precision=mode, checkpointing=args.checkpointing,
              tile=args.tile, batch=args.batch, precision_fixed=args.precision != "auto")
    if args.checkpointing == "auto" or args.tile == "auto":
        lev = pl.levers or Levers(mode, args.checkpointing != "off", None)
    else:
        lev = Levers(mode, args.checkpointing == "on", int(args.tile) if args.tile.isdigit() else None)
    return pl, lev


def cmd_budget(args) -> int:
    from core.common.errors import UsageError
    from core.engine.budget import GIB, device_ceiling, device_rules, machine_description, measure_step, predict
    from core.engine.train import pick_device
    from core.model.network import preset

    if args.width < 16 or args.height < 16:
        raise UsageError("--width and --height must be at least 16 px")
    if args.tile not in ("auto", "off") and not args.tile.isdigit():
        raise UsageError(f"--tile must be auto, off or a strip length in px, not {args.tile!r}")
    device = pick_device(args.device)
    cfg = preset(args.preset)
    ceiling = int(args.ceiling * GIB) if args.ceiling else device_ceiling(device)
    with device_rules(device):  # traced under the device's autocast rules (CUDA's cast other ops than the CPU's)
        pl, lev = _budget_levers(args, cfg, device, ceiling)
        terms = predict(cfg, args.width, args.height, lev, args.batch)
    out = {
        "machine": machine_description(device), "preset": cfg.preset, "width": args.width, "height": args.height,
        "batch": args.batch, "levers": {"precision": lev.precision, "checkpointing": lev.checkpointing,
                                        "tile": lev.tile},
        "terms": terms.as_dict(), "total": terms.total, "ceiling": ceiling, "fits": terms.total <= ceiling,
        "plan": pl.as_dict(), "spill_width": pl.spill,
    }
    if args.measure:
        m = measure_step(cfg, args.width, args.height, lev, args.batch, device)
        out["measured"] = m["terms"]
        out["measured_peak"] = m.get("peak") or m.get("rss_peak_delta")
        pred = terms.as_dict()
        out["error"] = {k: (pred[k] - v) / v for k, v in m["terms"].items() if k in pred and v}
        # like with like: the terms the prediction has. What it does not model (CUDA's workspace: peak less the
        # terms) shows in the peak's error, on every device the same way
        total_m = sum(v for k, v in m["terms"].items() if k in pred)
        out["error"]["total"] = (terms.total - total_m) / total_m
        if out["measured_peak"]:
            out["error"]["peak"] = (terms.total - out["measured_peak"]) / out["measured_peak"]
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"machine  {out['machine']}")
    print(f"step     {args.width} × {args.height}, batch {args.batch}, preset {cfg.preset}: {lev.describe()}")
    print(f"{'term':<13}{'predicted':>14}" + (f"{'measured':>14}{'error':>9}" if args.measure else ""))
    for k, v in terms.as_dict().items():
        line = f"{k:<13}{_fmt_bytes(v):>14}"
        if args.measure and k in out["measured"]:
            line += f"{_fmt_bytes(out['measured'][k]):>14}{out['error'].get(k, 0):>+9.1%}"
        print(line)
    line = f"{'total':<13}{_fmt_bytes(terms.total):>14}"
    if args.measure:
        line += f"{_fmt_bytes(sum(out['measured'].values())):>14}{out['error']['total']:>+9.1%}"
    print(line)
    if args.measure and out.get("measured_peak"):
        kind = "CUDA peak" if device.type == "cuda" else "RSS peak rise"
        print(f"{kind:<13}{'':>14}{_fmt_bytes(out['measured_peak']):>14}{out['error']['peak']:>+9.1%}")
    print(f"ceiling  {_fmt_bytes(ceiling)}: {'fits' if out['fits'] else 'does NOT fit'}"
          f" (headroom {_fmt_bytes(ceiling - terms.total)})")
    print(f"plan     {pl.as_dict()['summary']}")
    for st in pl.steps:
        print(f"         - {st['levers']}: {_fmt_bytes(st['predicted_total'])} {'fits' if st['fits'] else 'too big'}")
    print("spill    widest log that fits (px along depth):")
    for mode, d in pl.spill.items():
        print(f"         {mode:<5} plain {d['plain']:>9,}   with checkpointing {d['checkpointing']:>9,}")
    return 0


def cmd_bench(args) -> int:
    from core.engine.train import pick_device
    from core.model.network import preset
    from core.model.precision import MODES

    device = pick_device(args.device)
    cfg = preset(args.preset)
    modes = [m.strip() for m in args.precisions.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES or m == "auto"]
    if bad:
        raise InputError(None, f"--precisions: unknown mode {', '.join(bad)} (fp32, bf16, fp16)")
    if device.type == "cuda":
        import torch

        torch.backends.cudnn.benchmark = args.cudnn_benchmark
    from core.model.autocast_rules import autocast_rules

    if args.rules == "cuda" and device.type != "cpu":
        raise InputError(None, "--rules cuda emulates CUDA's autocast rules on the CPU: use it with --device cpu")
    with autocast_rules(args.rules or ("cuda" if device.type == "cuda" else "cpu")):
        if args.forward_only:
            return _bench_forward_only(args, cfg, device, modes)
        return _bench_steps(args, cfg, device, modes)


def _fp32_share(by_dtype: dict) -> float:
    total = sum(by_dtype.values())
    return by_dtype.get("fp32", 0) / total if total else float("nan")


def _bench_steps(args, cfg, device, modes) -> int:
    import statistics

    from core.engine.budget import Levers, machine_description, measure_step
    from core.model.autocast_rules import active_rules

    rows = {}
    for mode in modes:
        m = measure_step(cfg, args.width, args.height, Levers(mode, args.checkpointing), 1, device,
                         repeats=args.warmup + args.steps)
        times = m["step_times"][args.warmup:]
        rows[mode] = {"activations": m["terms"]["activations"], "activations_by_dtype": m["activations_by_dtype"],
                      "peak": m.get("peak") or m.get("rss_peak_delta"), "step_time_median": statistics.median(times),
                      "step_times": times}
    base = rows.get("fp32")
    for r in rows.values():
        if base:
            r["activation_ratio"] = r["activations"] / base["activations"]
            r["time_ratio"] = r["step_time_median"] / base["step_time_median"]
            if r["peak"] and base["peak"]:
                r["peak_ratio"] = r["peak"] / base["peak"]
        r["fp32_share"] = _fp32_share(r["activations_by_dtype"])
    out = {"machine": machine_description(device), "preset": cfg.preset, "width": args.width,
           "height": args.height, "checkpointing": args.checkpointing, "autocast_rules": active_rules(),
           "results": rows}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"machine  {out['machine']}")
    print(f"step     {args.width} × {args.height}, batch 1, preset {cfg.preset}, median of {args.steps} after "
          f"{args.warmup} warm-up, {out['autocast_rules']} autocast rules")
    peak_name = "CUDA peak" if device.type == "cuda" else "RSS rise"  # CPU: peak resident size over the step's start
    print(f"{'mode':<6}{'activations':>14}{'ratio':>8}{'fp32 share':>12}{peak_name:>14}{'step s':>10}{'ratio':>8}")
    for mode, r in rows.items():
        print(f"{mode:<6}{_fmt_bytes(r['activations']):>14}{r.get('activation_ratio', float('nan')):>8.3f}"
              f"{r['fp32_share']:>12.3f}{_fmt_bytes(r['peak']):>14}{r['step_time_median']:>10.3f}"
              f"{r.get('time_ratio', float('nan')):>8.2f}")
    return 0


def _bench_forward_only(args, cfg, device, modes) -> int:
    """Activations saved by one forward per mode, beside the prediction (no backward, no timing of a step)."""
    from core.engine.budget import Levers, machine_description, measure_forward, predict
    from core.model.autocast_rules import active_rules

    rows = {}
    for mode in modes:
        lev = Levers(mode, args.checkpointing)
        m = measure_forward(cfg, args.width, args.height, lev, 1, device)
        m["predicted"] = predict(cfg, args.width, args.height, lev).activations
        m["prediction_error"] = (m["predicted"] - m["activations"]) / m["activations"]
        m["fp32_share"] = _fp32_share(m["activations_by_dtype"])
        rows[mode] = m
        if not args.json:
            print(f"  {mode}: {_fmt_bytes(m['activations'])} in {m['forward_time']:.0f} s", file=sys.stderr)
    if "fp32" in rows:
        for r in rows.values():
            r["activation_ratio"] = r["activations"] / rows["fp32"]["activations"]
    out = {"machine": machine_description(device), "preset": cfg.preset, "width": args.width,
           "height": args.height, "checkpointing": args.checkpointing, "forward_only": True,
           "autocast_rules": active_rules(), "results": rows}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"machine  {out['machine']}")
    print(f"forward  {args.width} × {args.height}, batch 1, preset {cfg.preset}"
          f"{', gradient checkpointing' if args.checkpointing else ''}, {out['autocast_rules']} autocast rules: "
          "bytes saved for backward")
    print(f"{'mode':<6}{'measured':>14}{'ratio':>8}{'fp32 share':>12}{'predicted':>14}{'error':>9}{'forward s':>11}")
    for mode, r in rows.items():
        print(f"{mode:<6}{_fmt_bytes(r['activations']):>14}{r.get('activation_ratio', float('nan')):>8.3f}"
              f"{r['fp32_share']:>12.3f}{_fmt_bytes(r['predicted']):>14}{r['prediction_error']:>9.2%}"
              f"{r['forward_time']:>11.1f}")
    return 0


def cmd_parity(args) -> int:
    from core.engine.budget import default_16bit
    from core.engine.parity import layer_profile, run_parity, worst
    from core.engine.train import TrainConfig, pick_device

    device = pick_device(args.device)
    mode16 = args.mode if args.mode != "auto" else default_16bit(device)
    cfg = TrainConfig(data=args.data if args.data != "synthetic" else None, synthetic=args.data == "synthetic",
                      preset=args.preset, steps=args.steps, crop_along=args.crop or None, seed=args.seed,
                      device=str(device), stage=args.stage)
    if args.layers:
        keep = [m for m in (args.fp32_modules or "").split(",") if m]
        res = layer_profile(cfg, mode16, keep, args.threshold)
        if args.json:
            print(json.dumps(res, indent=2))
            return 0
        for label, rows in res["reports"].items():
            print(f"{mode16} vs fp32, {label}: worst modules by output error (threshold {args.threshold:g})")
            print(f"  {'module':<34}{'rel. error':>12}{'grad underflow':>16}")
            for r in worst(rows):
                flag = "  <- flagged" if r["flagged"] else ""
                print(f"  {r['module']:<34}{r['rel_error']:>12.2e}{r['grad_underflow']:>16.2%}{flag}")
        print(f"flagged: {', '.join(res['flagged']) or 'none'}")
        return 0
    res = run_parity(cfg, mode16)
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"{'metric':<16}{'fp32':>10}{mode16:>10}{'rel. diff':>11}")
    for k in ("mask_f1", "curve_r", "curve_rmse_pct", "val_loss"):
        a, b, d = res["fp32"][k], res[mode16][k], res["relative_difference"][k]
        fa = "-" if a is None else f"{a:.4f}"
        fb = "-" if b is None else f"{b:.4f}"
        fd = "-" if d is None else f"{d:.2%}"
        print(f"{k:<16}{fa:>10}{fb:>10}{fd:>11}")
    if res["drifted"]:
        print(f"warning: {mode16} drifts from fp32 by more than 1 % in {', '.join(res['drifted'])}", file=sys.stderr)
    return 0


def add_engine_commands(sub) -> None:
    """Register the engine's subcommands on the ``welltrace`` parser."""
    t = sub.add_parser("train", help="train the segmentation network (headless)")
    t.add_argument("data", help="a project or synthetic folder, or 'synthetic' for the on-the-fly stream")
    t.add_argument("--out", required=True, help="model file to write (.safetensors)")
    t.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16", "fp16"))
    t.add_argument("--stage", default="binary", choices=("binary", "multiclass"))
    t.add_argument("--preset", default="demo", choices=("tiny", "demo", "full"))
    t.add_argument("--init", metavar="MODEL", help="continue from this model file")
    t.add_argument("--steps", type=int)
    t.add_argument("--epochs", type=int)
    t.add_argument("--lr", type=float, default=2e-3)
    t.add_argument("--stream-size", default="1600x384", help="synthetic stream logs: WIDTHxHEIGHT (canonical frame)")
    t.add_argument("--batch", type=int, default=16, help="multiclass: logs per optimizer step (default 16)")
    t.add_argument("--crop", type=int, default=1024, help="random crop along depth in px (0: whole logs)")
    t.add_argument("--compile", action="store_true", help="torch.compile the network: the first step compiles "
                   "(about a minute on a CPU, cached for later runs), the steps after run fused kernels")
    t.add_argument("--workers", type=int, default=2, metavar="N", help="worker processes that make the batches "
                   "ahead of the steps (default 2; 0: in the training process); a step event's data_wait_s says how "
                   "long a step waited for them")
    t.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    t.add_argument("--checkpointing", default="off", choices=("auto", "on", "off"))
    t.add_argument("--tile", default="off", help="auto, off or a strip length in px")
    t.add_argument("--ceiling", type=float, metavar="GIB", help="memory ceiling for planning the levers")
    t.add_argument("--events", metavar="FILE", help="write the training events as JSON lines")
    t.add_argument("--resume", metavar="CKPT", help="continue a run from its checkpoint")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--eval-every", type=int, default=0, help="evaluate every N steps (0: at the end)")
    t.add_argument("--synthetic", action="store_true", help="mix the synthetic stream into a folder's data")
    t.add_argument("--styles", help="print-style families of the synthetic stream, comma-separated (default: all)")
    t.add_argument("--exclude-styles", help="families left out of the stream (leave-one-family-out training)")
    t.add_argument("--fp32-modules", help="comma-separated module names kept in fp32")
    t.add_argument("--freeze-encoder", type=float, default=0.0, metavar="SHARE",
                   help="train the decoder only for this share of the steps first (fine-tuning; default 0)")
    t.set_defaults(func=cmd_train)

    d = sub.add_parser("digitize", help="trace a scan's curves and write them as LAS (or a folder of scans)")
    d.add_argument("scan", nargs="+", help="the scanned log (PNG, JPEG, BMP or TIFF); several scans or a folder "
                   "digitise each with its NAME.calib.json into NAME.digitized.las and its QC picture")
    d.add_argument("--calib", help="its calibration (NAME.calib.json: depth picks, curves, sections); one scan only")
    d.add_argument("--out", help="the LAS file to write (a repeat pass goes beside it as OUT.repeat.las); with "
                   "several scans, a folder for their LAS files (default: beside each scan)")
    d.add_argument("--model", help="a trained model (.safetensors), e.g. resources/models/demo.safetensors")
    d.add_argument("--classical", action="store_true", help="the classical tracer (no model)")
    d.add_argument("--from-mask", metavar="MASK", help="trace this class mask (e.g. a hand-corrected label)")
    d.add_argument("--mask-out", metavar="PNG", help="also write the class mask the curves were traced from (the "
                   "scan's size; 0 background, 1 solid, 2 dashed, 3 dotted)")
    d.add_argument("--precision", default="model", choices=("model", "auto", "fp32", "bf16", "fp16"),
                   help="inference precision (default: the one the model was trained in; fp32 for an fp16 model "
                   "on a CPU)")
    d.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help="where the network runs (auto: a CUDA GPU when there is one)")
    d.add_argument("--tile", metavar="PX", type=tile_px, help="window length along depth for the network (default "
                   f"1024, the training crop; shortened where --max-memory requires; at least {MIN_TILE_PX})")
    d.add_argument("--max-memory", type=positive_number, metavar="GIB",
                   help="memory ceiling for reading the scan (default: 90%% of the memory available now)")
    d.add_argument("--whole-picture", action="store_true",
                   help="read the whole scan in one forward (memory grows with its area: ~0.6 GiB a megapixel); "
                   "to compare against the windowed maps")
    d.add_argument("--reference", action="store_true",
                   help="read the scan as releases before 0.2 did (every row, PyTorch's default layout): slower, to "
                   "compare the fast path's LAS against")
    d.add_argument("--qc", metavar="PNG", help="also draw the LAS values back over the scan, page by page "
                   "(NAME-p01.png… when the log is longer than a page): the picture to check the LAS by")
    d.add_argument("--well", help="well name for the LAS header")
    d.add_argument("--section", type=int, metavar="N", help="trace only the calibration's section N (1-based) and "
                   "write it to --out (default: every section: the main pass to OUT.las, a repeat pass to "
                   "OUT.repeat.las, any other to OUT.sectionN.las)")
    many = d.add_argument_group("several scans or a folder")
    many.add_argument("--jobs", type=int, metavar="N", help="worker processes (default 1); the threads are shared "
                      "among them")
    many.add_argument("--threads", type=int, metavar="N", help="threads in all (default: every core); with "
                      "--scheduler, threads per task (default: the worker machine's own)")
    many.add_argument("--force", action="store_true", help="digitise again scans whose LAS is newer than the scan, "
                      "its calibration and the model (skipped otherwise)")
    many.add_argument("--no-qc", action="store_true", help="write no QC pictures")
    many.add_argument("--summary", metavar="CSV", help="the summary table (default: digitize-summary.csv in --out "
                      "or beside the first scan)")
    many.add_argument("--scheduler", metavar="ADDRESS", type=scheduler_address, help="a Dask distributed scheduler (tcp://HOST:8786) whose "
                      "workers digitise one scan a task; they must see the scans' paths (pip install "
                      "'welltrace[cluster]')")
    d.set_defaults(func=cmd_digitize)

    b = sub.add_parser("budget", help="predict (and --measure) the memory of one training step and plan the levers")
    b.add_argument("--width", type=int, required=True, help="px along depth")
    b.add_argument("--height", type=int, required=True, help="px across the tracks")
    b.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16", "fp16"))
    b.add_argument("--checkpointing", default="auto", choices=("auto", "on", "off"))
    b.add_argument("--tile", default="auto", help="auto, off or a strip length in px")
    b.add_argument("--ceiling", type=float, metavar="GIB", help="memory ceiling (default: the device's memory)")
    b.add_argument("--batch", type=int, default=1)
    b.add_argument("--preset", default="demo", choices=("tiny", "demo", "full"))
    b.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    b.add_argument("--measure", action="store_true", help="also run one real step and show the errors")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_budget)

    k = sub.add_parser("bench", help="measure one training step per precision: activations, peak, time")
    k.add_argument("--width", type=int, default=12800)
    k.add_argument("--height", type=int, default=640)
    k.add_argument("--precisions", default="fp32,bf16,fp16")
    k.add_argument("--preset", default="demo", choices=("tiny", "demo", "full"))
    k.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    k.add_argument("--steps", type=int, default=3, help="timed steps (median reported)")
    k.add_argument("--warmup", type=int, default=1)
    k.add_argument("--checkpointing", action="store_true")
    k.add_argument("--forward-only", action="store_true",
                   help="count the activations of one forward per mode beside the prediction (no step, no timing)")
    k.add_argument("--no-cudnn-benchmark", dest="cudnn_benchmark", action="store_false")
    k.add_argument("--rules", choices=("cpu", "cuda"), help="autocast rules (default: the device's); cuda on the CPU "
                   "emulates CUDA's (upsampling and norms in fp32): what a GPU step saves, measured without a GPU")
    k.add_argument("--json", action="store_true")
    k.set_defaults(func=cmd_bench)

    q = sub.add_parser("parity", help="train fp32 and a 16-bit mode from one seed and compare (or --layers)")
    q.add_argument("data", help="a project or synthetic folder, or 'synthetic'")
    q.add_argument("--steps", type=int, default=30)
    q.add_argument("--mode", default="auto", choices=("auto", "bf16", "fp16"))
    q.add_argument("--preset", default="tiny", choices=("tiny", "demo", "full"))
    q.add_argument("--stage", default="binary", choices=("binary", "multiclass"))
    q.add_argument("--crop", type=int, default=512)
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    q.add_argument("--layers", action="store_true", help="per-module output error and gradient underflow")
    q.add_argument("--fp32-modules", help="with --layers: keep these modules in fp32 and show before/after")
    q.add_argument("--threshold", type=float, default=0.05)
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_parity)

    e = sub.add_parser("eval", help="compare a digitised LAS with a truth LAS")
    e.add_argument("pred")
    e.add_argument("truth")
    e.add_argument("--calib", help="calibration whose scale ranges define the %% figures")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_eval)

