"""Which model is current, and the offer of a newly trained or adapted one.

A model a training run or an adaptation writes is never swapped in silently: a 30-step trial run stopped early
once replaced the bundled model and halved what digitising read. The offer shows the new model's held-out figures
beside the current model's on the same held-out logs, and asks; the current model stays until the user says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from PySide6 import QtCore, QtWidgets

from core.common.errors import InputError

from ..heap import freeze_long_lived
from ..workers import Task
from .shell import Shell

FIGURES = (("val_mask_f1", "mask F1", "{:.3f}"), ("val_curve_r", "curve r", "{:.3f}"),
           ("val_curve_rmse_pct", "RMSE % of scale", "{:.2f}"))


def _read_summary(path) -> dict:
    import json

    from core.model.model_io import read_model_metadata

    return json.loads(read_model_metadata(path).get("summary", "{}"))


@dataclass
class ModelOffer:
    """A new model and what is known of it against the current one."""

    path: Path
    origin: str  # "training run" or "adaptation"
    new: dict = field(default_factory=dict)  # held-out figures (FIGURES' keys) of the new model
    current: dict = field(default_factory=dict)  # the current model's, on the same held-out logs
    current_name: str | None = None
    held_out: str = ""  # what the figures were measured on

    def table(self) -> str:
        """The figures side by side, as lines of text ("not measured" where a figure is missing)."""
        def cell(scores: dict, key: str, fmt: str) -> str:
            v = scores.get(key)
            return "not measured" if v is None or v != v else fmt.format(v)

        rows = [f"{'':<18}{self.path.name:<34}{self.current_name or 'no current model'}"]
        for key, label, fmt in FIGURES:
            rows.append(f"{label:<18}{cell(self.new, key, fmt):<34}"
                        f"{cell(self.current, key, fmt) if self.current_name else '-'}")
        return "\n".join(rows)

    def question(self) -> str:
        worse = ""
        r_new, r_cur = self.new.get("val_curve_r"), self.current.get("val_curve_r")
        if r_new is not None and r_cur is not None and r_new < r_cur:
            worse = "\nThe new model reads the held-out logs WORSE than the current one.\n"
        return (f"The {self.origin} wrote a new model. Held-out figures{self.held_out}:\n\n{self.table()}\n{worse}\n"
                f"Use {self.path.name} for pre-fill and digitise? (Either way it stays on disk; File › Load model… "
                "takes it later.)")


def _breakable(name: str) -> str:
    """A file name that may wrap after its dashes, dots and underscores (a 33-character model name in a column of
    figures pushed the dialog past a laptop's screen)."""
    from html import escape

    out = escape(name)
    for ch in ("-", ".", "_"):
        out = out.replace(ch, ch + "&#8203;")
    return out


def offer_html(offer: ModelOffer) -> str:
    """The figures as a table whose columns wrap, instead of fixed-width text that cannot (the dialog's text was
    cut at the right at 1280 × 720)."""
    def cell(scores: dict, key: str, fmt: str) -> str:
        v = scores.get(key)
        return "not measured" if v is None or v != v else fmt.format(v)

    current = _breakable(offer.current_name) if offer.current_name else "no current model"
    rows = [f"<tr><th></th><th align='left'>new: {_breakable(offer.path.name)}</th>"
            f"<th align='left'>current: {current}</th></tr>"]
    for key, label, fmt in FIGURES:
        rows.append(f"<tr><td>{label}</td><td>{cell(offer.new, key, fmt)}</td>"
                    f"<td>{cell(offer.current, key, fmt) if offer.current_name else '-'}</td></tr>")
    _, _, rest = offer.question().partition(offer.table())
    tail = "<br>".join(line for line in rest.strip().splitlines() if line.strip())
    return f"<table cellspacing='6'>{''.join(rows)}</table><p>{tail}</p>"


def _fit_confidence(path: Path, progress=None):
    """Fit the current model's calibrator (``core/evaluation/network_calibrator.py: fit_network_calibrator``, as
    ``welltrace fit-confidence`` runs it), kept beside its file; each log read is a step of the progress bar (and
    the point where Cancel stops it: nothing is written until the fit is done)."""
    from core.evaluation.network_calibrator import CalibratorFit, fit_network_calibrator

    done = None
    for ev in fit_network_calibrator(path):
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


FIT_HINT = "Run › Fit confidence… fits one for it (about 10 minutes on two CPU cores)"


def with_the_fix(warning: str) -> str:
    """A read's warning as the app shows it: one that says the confidence is not measured for this model
    (``confidence_model.confidence_basis``, ``calibrator_beside``) offers the app's fix instead of the command's."""
    if not warning.startswith("confidence:"):
        return warning
    for command in ("; fit one for it: ", "; refit it: "):
        warning = warning.split(command)[0]
    return f"{warning}. {FIT_HINT}"


def offer_box(parent: QtWidgets.QWidget | None, offer: ModelOffer) -> tuple[QtWidgets.QMessageBox, object]:
    """The question as a message box (the figures in a table), and its accept button."""
    box = QtWidgets.QMessageBox(parent)
    box.setWindowTitle("WellTrace — a new model")
    box.setIcon(QtWidgets.QMessageBox.Icon.Question)
    head, _, _ = offer.question().partition("\n\n")
    box.setText(head)
    box.setInformativeText(offer_html(offer))
    use = box.addButton(f"Use {offer.path.name}", QtWidgets.QMessageBox.ButtonRole.AcceptRole)
    keep = box.addButton("Keep the current model", QtWidgets.QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(keep)
    box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
    return box, use


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
        from core.model.model_io import load_model

        try:
            model, _info = load_model(path)
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
        # read and built off the UI thread: 15–45 ms on two cores, while a run's last events are still drawn
        from core.model.model_io import load_model

        self.task = Task(load_model, offer.path, owner=self, progress=False)
        self.task.succeeded.connect(lambda loaded, p=offer.path: self._use(loaded[0], p))
        self.task.failed.connect(self.shell.show_error)
        self.task.start()

    def _use(self, model, path: Path) -> None:
        if self.shell.closing:  # the window is closing: a late result touches nothing
            return
        self.model, self.name, self.path = model, path.name, path
        freeze_long_lived()  # PyTorch's modules, loaded with the first model
        state = calibration_state(model)
        if state in ("none", "stale"):  # the offer of the fix, where the confidence is not measured for this model
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
        from core.evaluation.confidence_fit import FIT_COUNT, FIT_FAMILIES
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
        logs = FIT_COUNT * len(FIT_FAMILIES)
        task = Task(_fit_confidence, self.path, owner=self)
        self.fit_task = task
        self.shell.start_task(task, self._confidence_fitted,
                              f"fitting the confidence for {self.name}: reading {logs} synthetic logs with it "
                              "(about 10 minutes on two CPU cores)…", "fitting the confidence cancelled: nothing written")

    def _confidence_fitted(self, done) -> None:
        if self.shell.closing:
            return
        self.shell.task_done(f"the confidence of {done.network} is calibrated on it now ({done.samples} samples of "
                             f"{done.logs} logs): {done.out}")
        self.changed.emit()
