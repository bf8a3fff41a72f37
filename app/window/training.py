"""A training run the app starts: its settings turned into a run, the child process, and what its events say.

The training dock (``app/training_dock.py``) is the view: its form, its buttons and its instruments. This
controller owns the run: the settings a form gives become a :class:`core.engine.train.TrainConfig`
(:meth:`TrainingController.config`), the engine runs in a child process at a lower priority
(``app/trainer_process.py``), and the events it sends are taken here (:meth:`take_events`), where what they say
about the run (steps seen, its last checkpoint, how it ended) is kept for
the view to draw and for the tests to read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PySide6 import QtCore

from core.common.errors import InputError

from ..heap import freeze_long_lived
from ..trainer_process import TrainerProcess


@dataclass
class TrainingContext:
    """What training needs from the rest of the app, asked when it needs it (neither the dock nor the controller
    reaches into the window): the open project's folder, the model the app reads with (a run continues from it
    and is compared with it), and the size of one training step at the scan on show."""

    project_folder: Callable[[], Path | None]
    model_path: Callable[[], Path | None]
    step_size: Callable[[], tuple[int, int] | None]  # (along depth, across) of the scan on show, None: none


@dataclass
class TrainingForm:
    """The settings of a run as the dock's form gives them."""

    source: int  # 0 project scans, 1 synthetic stream, 2 both mixed
    mix: float
    stage: str
    preset: str  # a preset name, or "continue from current model"
    precision: str
    device: str
    steps: int
    crop: int  # 0: whole logs
    checkpointing: str
    tile: str
    ceiling_gib: float
    compile: bool


class TrainingController(QtCore.QObject):
    model_trained = QtCore.Signal(str)  # path of the new model
    crashed = QtCore.Signal(str)  # the child process failed or the run reported an error

    def __init__(self, context: TrainingContext, parent=None):
        super().__init__(parent)
        self.context = context
        self.run_out: str | None = None  # the model file of the run (a resumed run writes the same one)
        self.thread: TrainerProcess | None = None
        self.steps_seen = 0
        self.last_checkpoint: str | None = None
        self.done_event = None
        self.finish_handled = False
        self.fault: dict = {}  # engine fault injection, for tests and demonstrations
        self.scaler_growth_interval = 200

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.isRunning()

    @property
    def ended_unhandled(self) -> bool:
        """The child process has ended and the view has not yet said so."""
        return self.thread is not None and self.thread.isFinished() and not self.finish_handled

    @property
    def can_resume(self) -> bool:
        return self.last_checkpoint is not None and (self.done_event is None or self.done_event.status != "finished")

    def config(self, form: TrainingForm, resume: bool):
        """The run's :class:`TrainConfig` from the form (``resume``: continue the last run from its checkpoint);
        :class:`InputError` where the form asks for what is not there (no project, no current model)."""
        from core.engine.train import TrainConfig

        folder = self.context.project_folder()
        project = str(folder) if (folder is not None and form.source in (0, 2)) else None
        if form.source in (0, 2) and project is None:
            raise InputError(None, "no project is open: open a project folder or train on the synthetic stream")
        out_dir = Path(project) / "models" if project else _user_models_dir()
        out_dir.mkdir(parents=True, exist_ok=True)
        out = self.run_out if resume else None
        if out is None:
            out = str(out_dir / f"model-{time.strftime('%Y%m%d-%H%M%S')}.safetensors")
        self.run_out = out
        preset, init = form.preset, None
        current = self.context.model_path()
        if preset == "continue from current model":
            if not current:
                raise InputError(None, "no current model to continue from")
            init, preset = str(current), "demo"
        return TrainConfig(
            data=project, synthetic=form.source in (1, 2), mix=form.mix, stage=form.stage, preset=preset,
            init_model=init, precision=form.precision, device=form.device, steps=form.steps,
            crop_along=form.crop or None, checkpointing=form.checkpointing, tile=form.tile.strip(),
            ceiling_gib=form.ceiling_gib, out=out, resume=self.last_checkpoint if resume else None,
            eval_every=max(1, form.steps // 4), checkpoint_every=max(1, min(50, form.steps // 4)),
            fault=dict(self.fault), scaler_growth_interval=self.scaler_growth_interval,
            compare_model=str(current) if current else None,
            # the training child is a daemonic process (it dies with the app), and such a process cannot start
            # DataLoader workers: its batches are made in it, and the step's data wait shows in the status line
            workers=0, compile=form.compile,
        )

    def start(self, cfg, resume: bool) -> str | None:
        """Start a run of ``cfg`` in a child process; the reason it could not start, or None."""
        if self.running:
            return "a run is under way"
        if not resume:
            self.steps_seen = 0
        self.done_event = None
        freeze_long_lived()  # whatever the budget prediction loaded (PyTorch) lives as long as the app
        self.thread = TrainerProcess(cfg, self)
        self.thread.crashed.connect(self.crashed)
        self.finish_handled = False
        try:
            self.thread.start()
        except (OSError, RuntimeError) as exc:
            self.thread = None
            return f"cannot start the training process: {exc}"
        return None

    def stop(self) -> bool:
        """Ask the run to stop after its step; whether one was running."""
        if self.thread is None:
            return False
        self.thread.stop_flag.set()
        return True

    def take_events(self) -> list:
        """The events the run sent since the last call, with what they say about the run kept here."""
        events = self.thread.poll() if self.thread is not None else []
        for ev in events:
            if ev.type == "step":
                self.steps_seen += 1
            elif ev.type == "error":
                self.crashed.emit(ev.message)
            elif ev.type == "done":
                self.done_event = ev
                self.last_checkpoint = ev.checkpoint_path or self.last_checkpoint
                if ev.model_path and ev.status in ("finished", "stopped"):
                    self.model_trained.emit(ev.model_path)
        return events

    def wait(self, ms: int) -> None:
        """Stop a running run and wait for its process."""
        if self.running:
            self.stop()
            self.thread.wait(ms)

    def end(self, grace_s: float) -> None:
        """End a running run for good (the app is quitting): stopped after its step within ``grace_s`` seconds, or
        its process ended."""
        if self.running:
            self.thread.end(grace_s)


def _user_models_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("welltrace")) / "models"
