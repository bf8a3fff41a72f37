"""Which model is current: loading one, taking a newly trained or adapted one when the user accepts its offer
(``model_offer.py``: what the offer shows and asks), and fitting the current model's calibrated confidence (CONF) off
the UI thread (Run › Fit confidence…, or the offer's tick box)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6 import QtCore, QtWidgets

from core.common.errors import InputError

from ..heap import freeze_long_lived
from ..workers import Task
from .model_offer import FIGURES, ModelOffer, offer_box
from .shell import Shell


def _read_summary(path) -> dict:
    import json

    from core.model.model_io import read_model_metadata

    return json.loads(read_model_metadata(path).get("summary", "{}"))


def load_for_reading(path) -> tuple:
    """A model file read (``load_model``: the model and its info) and put where the app's reads run: a CUDA GPU when
    PyTorch sees one, as ``welltrace digitize``'s default (``--device auto``) does, else the CPU. Digitising, the
    pre-filled mask and the calibrator's fit then read on that device (:func:`reading_device`)."""
    from core.engine.config import pick_device
    from core.model.model_io import load_model

    model, info = load_model(path)
    model.to(pick_device("auto"))
    return model, info


def reading_device(model) -> str:
    """Where ``model`` (a loaded network; None: the classical tracer, which reads on the CPU) reads: the device its
    weights are on, ``"cuda"`` or ``"cpu"``."""
    if model is None:
        return "cpu"
    return next(model.parameters()).device.type


def _fit_confidence(path: Path, progress=None):
    """Fit the current model's calibrator (``core/evaluation/network_calibrator.py: fit_network_calibrator``, as
    ``welltrace fit-confidence`` runs it), kept beside its file; each log read is a step of the progress bar (and
    the point where Cancel stops it: nothing is written until the fit is done)."""
    from core.evaluation.network_calibrator import CalibratorFit, fit_network_calibrator

    done = None
    for ev in fit_network_calibrator(path, device="auto"):  # the logs read where the app's reads run
        if isinstance(ev, CalibratorFit):
            done = ev
        elif progress is not None:
            progress(ev.done, ev.total)
    return done


def calibration_state(model) -> str:
    """How the confidence of a read by ``model`` (a loaded network) is calibrated: ``"own"`` (by a calibrator fitted
    for it, beside its file), ``"bundled"`` (the bundled network, by the shipped calibrator), ``"stale"`` (one lies
    beside it, fitted before the file changed) or ``"none"`` (the shipped fit applied to another network: Run ›
    Fit confidence… fits one)."""
    from core.digitize.rules.confidence_model import bundled_confidence, calibrator_beside

    own, stale = calibrator_beside(model)
    if own is not None:
        return "own"
    shipped = bundled_confidence()
    if shipped is not None and shipped.about.get("network_sha256_16") == getattr(model, "file_digest", None):
        return "bundled"
    return "stale" if stale else "none"


FIT_HINT = "Run › Fit confidence… fits one for it (about 6 minutes on two CPU cores)"


def with_the_fix(warning: str) -> str:
    """A read's warning as the app shows it: one that says the confidence is not measured for this model
    (``confidence_model.confidence_basis``, ``calibrator_beside``) offers the app's fix instead of the command's."""
    if not warning.startswith("confidence:"):
        return warning
    for command in ("; fit one for it: ", "; refit it: "):
        warning = warning.split(command)[0]
    return f"{warning}. {FIT_HINT}"


class ModelController(QtCore.QObject):
    """The current model (for pre-fill and digitise) and the offers of new ones."""

    changed = QtCore.Signal()  # the current model is another one

    def __init__(self, shell: Shell, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.shell = shell
        self.model = None
        self.name: str | None = None
        self.use_classical = False  # Run › Read with the classical tracer (off: the model reads)
        self.path: Path | None = None
        self.task: Task | None = None  # reads a model file off the UI thread
        self.fit_task: Task | None = None  # fits the current model's calibrator (Run › Fit confidence…)
        self.last_offer: ModelOffer | None = None
        self.dialog_parent = parent if isinstance(parent, QtWidgets.QWidget) else None
        # answers an offer at once instead of the (window-modal, non-blocking) dialog; tests set it
        self.decide: Callable[[ModelOffer], bool] | None = None

    def reader(self) -> tuple[object | None, str | None]:
        """The model digitising reads with and its file name; (None, None) for the classical tracer, which reads
        only when the user chose it (Run › Read with the classical tracer). Without a current model the bundled
        one is loaded now: a real scan opened before the demo project was read by the classical tracer, and the
        status bar said so only afterwards."""
        from core.model.bundled import BUNDLED_MODEL

        if self.use_classical:
            return None, None
        if self.model is None and BUNDLED_MODEL.exists():
            self.load(BUNDLED_MODEL)
        return self.model, self.name

    def load(self, path: Path) -> bool:
        """Make a model file the current model now (File › Load model…: the user chose it)."""
        try:
            model, _info = load_for_reading(path)
        except InputError as exc:
            self.shell.show_error(exc.one_line())
            return False
        self._use(model, Path(path))
        return True

    def wait(self) -> None:
        """Let a model being read arrive (a batch must use the model the user accepted, not the one before)."""
        if self.task is not None and self.task.isRunning():
            self.task.wait()

    # -- offers ------------------------------------------------------------------------
    def run_finished(self, path: str) -> None:
        """A training run wrote a model: read its held-out figures (and the current model's on the same logs,
        which the run measured when it was told which model is current), then offer it."""
        task = Task(_read_summary, Path(path), owner=self, progress=False)
        task.succeeded.connect(lambda summary, p=Path(path): self._offer_run(p, summary))
        task.failed.connect(self.shell.show_error)
        task.start()

    def _offer_run(self, path: Path, summary: dict) -> None:
        compared = summary.get("compared") or {}
        same = self.path is not None and compared.get("model") == self.path.name
        n = summary.get("val_logs")
        held = f" on the run's {n} held-out log(s)" if n else ""
        if compared.get("error"):
            held += f" (the current model could not be measured: {compared['error']})"
        steps = summary.get("steps")
        origin = f"training run ({steps} steps)" if steps is not None else "training run"
        self.offer(ModelOffer(path, origin, {k: summary.get(k) for k, _, _ in FIGURES},
                              compared if same else {}, self.name, held))

    def adapted(self, path: str, before: dict, after: dict, held_out: str) -> None:
        """An adaptation wrote a model; it measured the model it started from (the current one) and the adapted
        one on the same held-out scans."""
        def figures(scores: dict) -> dict:
            return {f"val_{k}": scores.get(k) for k in ("mask_f1", "curve_r", "curve_rmse_pct")}

        self.offer(ModelOffer(Path(path), "adaptation", figures(after or {}), figures(before or {}), self.name,
                              f" on the held-out scan(s) {held_out}" if held_out else ""))

    def offer(self, offer: ModelOffer) -> None:
        """Put a new model to the user; it becomes the current model only if they accept."""
        if self.shell.closing:
            return
        self.last_offer = offer
        offer.plan_fit()
        if self.decide is not None:
            self._answered(offer, self.decide(offer))
            return
        box, use = offer_box(self.dialog_parent, offer)
        box.finished.connect(lambda _result: self._answered(offer, box.clickedButton() is use))
        box.open()

    def _answered(self, offer: ModelOffer, accepted: bool) -> None:
        if self.shell.closing:
            return
        if not accepted:
            self.shell.show_status(f"kept {self.name or 'no model'}; the new model is at {offer.path}", 10000)
            return
        self.wait()
        # read and built off the UI thread: 15–45 ms on two cores, while a run's last events are still drawn (and
        # on a GPU the device's first use, a second or more)
        self.task = Task(load_for_reading, offer.path, owner=self, progress=False)
        self.task.succeeded.connect(lambda loaded, p=offer.path, fit=offer.fit_wanted: self._use(loaded[0], p, fit))
        self.task.failed.connect(self.shell.show_error)
        self.task.start()

    def _use(self, model, path: Path, fit: bool = False) -> None:
        """``model`` (read from ``path``) is the current model now; ``fit``: the offer's tick box, its calibrator
        fitted next (:meth:`_start_fit`)."""
        if self.shell.closing:  # the window is closing: a late result touches nothing
            return
        self.model, self.name, self.path = model, path.name, path
        freeze_long_lived()  # PyTorch's modules, loaded with the first model
        state = calibration_state(model)
        if fit and state in ("none", "stale"):
            self.changed.emit()
            if self.shell.task_running():
                self.shell.show_status(f"model {path.name} loaded; its confidence (CONF) is fitted once the task "
                                       "under way ends", 15000)
            self._fit_when_free(path)
            return
        elif state in ("none", "stale"):  # the offer of the fix, where the confidence is not measured for this model
            self.shell.show_status(f"model {path.name} loaded; its confidence (CONF) is not calibrated for it: "
                                   f"{FIT_HINT}", 15000)
        else:
            self.shell.show_status(f"model {path.name} loaded", 5000)
        self.changed.emit()

    # -- the calibrated confidence ------------------------------------------------------------
    def fit_confidence(self) -> None:
        """Run › Fit confidence…: fit the calibrated confidence for the current model off the UI thread, kept beside
        its file; the model's next reads use it (``core/digitize/rules/confidence_model.py: calibrator_beside``)."""
        from core.digitize.rules.confidence_model import BUNDLED_CONFIDENCE
        from core.evaluation.network_calibrator import require_scikit_learn

        if self.shell.closing or self.shell.task_running():
            return
        self.wait()
        if self.model is None or self.path is None:
            self.shell.show_error("load a model first (File › Load model…): the confidence is fitted for a model")
            return
        state = calibration_state(self.model)
        if state == "bundled":
            self.shell.show_error(f"{self.name} is the bundled network: its confidence is calibrated already "
                                  f"({BUNDLED_CONFIDENCE.name})")
            return
        try:
            require_scikit_learn()
        except InputError as exc:
            self.shell.show_error(exc.one_line())
            return
        if state == "own" and not self.shell.confirm(f"{self.name} has its calibrator already. Fit it again?"):
            return
        self._start_fit()

    # how often a fit the offer asked for looks whether the window's long task (a digitise, a pre-fill) has ended
    FIT_WAIT_MS = 1000

    def _fit_when_free(self, path: Path) -> None:
        """Start the fit the offer's tick box asked for once the window has no long task under way (it runs one at a
        time); dropped where another model became current since, or the model has its calibrator by then."""
        if self.shell.closing or self.path != path or self.model is None:
            return
        if self.shell.task_running():
            QtCore.QTimer.singleShot(self.FIT_WAIT_MS, lambda: self._fit_when_free(path))
            return
        if calibration_state(self.model) in ("none", "stale"):
            self._start_fit()

    def _start_fit(self) -> None:
        """Fit the current model's calibrator as the window's long task (progress, Cancel); its maps are kept in the
        user's cache until the fit completes, so a fit cancelled or cut short resumes there."""
        from core.evaluation.confidence_fit import FIT_COUNT, FIT_FAMILIES
        from core.evaluation.network_calibrator import fit_estimate_s, fit_time_words

        logs = FIT_COUNT * len(FIT_FAMILIES)
        seconds, kept = fit_estimate_s(self.path)
        resumed = f", {kept} of them read before" if kept else ""
        took = fit_time_words(seconds, reading_device(self.model) == "cuda")
        task = Task(_fit_confidence, self.path, owner=self)
        self.fit_task = task
        self.shell.start_task(task, self._confidence_fitted,
                              f"fitting the confidence for {self.name}: reading {logs} synthetic logs with it"
                              f"{resumed} ({took})…",
                              "fitting the confidence cancelled: nothing written (the logs read so far are kept: "
                              "Run › Fit confidence… resumes there)")

    def _confidence_fitted(self, done) -> None:
        if self.shell.closing:
            return
        resumed = f", {done.cached_logs} of them from the maps an earlier fit kept" if done.cached_logs else ""
        self.shell.task_done(f"the confidence of {done.network} is calibrated on it now ({done.samples} samples of "
                             f"{done.logs} logs{resumed}): {done.out}")
        self.changed.emit()
