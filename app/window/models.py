"""Which model is current, and the offer of a newly trained or adapted one.

A model a training run or an adaptation writes is never swapped in silently: a 30-step trial run stopped early
once replaced the bundled model and halved what digitising read. The offer shows the new model's held-out figures
beside the current model's on the same held-out logs, and asks; the current model stays until the user says so.

The same offer fits the new model's calibrated confidence (CONF): a tick box, ticked where scikit-learn is installed,
says how long it takes here, and accepting the model starts the fit as Run › Fit confidence… runs it (off the UI
thread, with progress and Cancel). Offered, not started on its own: the fit holds the window's one long task and both
cores for minutes, and a model the user keeps on disk but does not use needs none; the user who takes the model
takes its fit with the same click.
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
    # its calibrated confidence, fitted when the model is accepted (the offer's tick box): :meth:`plan_fit` says how
    # long that takes here, or why it cannot be (``fit_blocked``: scikit-learn missing, fitted already)
    fit_wanted: bool = False
    fit_s: float | None = None
    fit_kept: int = 0  # logs whose maps an earlier fit of this model kept (re-traced, not read again)
    fit_blocked: str | None = None
    fit_done: bool = False  # blocked because its calibrator is there already (the tick box says "done")
    fit_planned: bool = False

    def plan_fit(self) -> None:
        """How long fitting this model's calibrator takes here (``network_calibrator.fit_estimate_s``), or why it
        cannot be fitted; the tick box ticked where it can."""
        from types import SimpleNamespace

        from core.digitize.rules.confidence_model import calibrator_beside
        from core.evaluation.network_calibrator import FIT_EXTRA, fit_estimate_s, scikit_learn_missing
        from core.model.model_io import model_digest

        if self.fit_planned:
            return
        self.fit_planned = True
        try:
            own, _stale = calibrator_beside(SimpleNamespace(file_path=self.path, file_digest=model_digest(self.path)))
            if own is not None:
                self.fit_done, self.fit_blocked = True, "its confidence (CONF) is fitted for it already"
            elif scikit_learn_missing():
                self.fit_blocked = f"its confidence (CONF) cannot be fitted here: scikit-learn is not installed ({FIT_EXTRA})"
            else:
                self.fit_s, self.fit_kept = fit_estimate_s(self.path)
        except OSError as exc:  # the file went away since the run wrote it: the loading says so
            self.fit_blocked = f"its file cannot be read: {exc.strerror or exc}"
        self.fit_wanted = self.fit_blocked is None

    def fit_text(self) -> str:
        """The tick box's words (short: a tick box does not wrap): the fit and how long it takes here."""
        if self.fit_blocked:
            return "Fit its confidence (CONF): " + ("done" if self.fit_done else "not possible here")
        from core.evaluation.network_calibrator import about_minutes

        return f"Fit its confidence (CONF) when it is taken: {about_minutes(self.fit_s)}"

    def fit_detail(self) -> str:
        """What the tick box does, or why it cannot be ticked: a paragraph of the offer, which wraps."""
        if self.fit_blocked:
            return self.fit_blocked[:1].upper() + self.fit_blocked[1:] + "."
        kept = f" {self.fit_kept} of its logs were read by an earlier fit, cut short: it resumes there." \
            if self.fit_kept else ""
        return ("CONF is a measured probability only for the network its calibrator was fitted on. Ticked, taking "
                "this model fits its own from synthetic logs read with it, in the background with progress and "
                f"Cancel (a fit cancelled resumes where it stopped; Run › Fit confidence… fits it later).{kept}")

    def accept(self, fit: bool = True) -> bool:
        """The user's yes (tests: ``ModelController.decide``), with the tick box as ``fit`` says."""
        self.plan_fit()
        self.fit_wanted = fit and self.fit_blocked is None
        return True

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
    cut at the right at 1280 × 720); then what the tick box of its confidence's fit does, once planned."""
    from html import escape

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
    fit = f"<p>{escape(offer.fit_detail())}</p>" if offer.fit_planned else ""
    return f"<table cellspacing='6'>{''.join(rows)}</table><p>{tail}</p>{fit}"


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


FIT_HINT = "Run › Fit confidence… fits one for it (about 6 minutes on two CPU cores)"


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
    offer.plan_fit()
    box.setInformativeText(offer_html(offer))
    use = box.addButton(f"Use {offer.path.name}", QtWidgets.QMessageBox.ButtonRole.AcceptRole)
    keep = box.addButton("Keep the current model", QtWidgets.QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(keep)
    fit = QtWidgets.QCheckBox(offer.fit_text(), box)  # owned by the box: a Python-owned one is freed on return
    fit.setChecked(offer.fit_wanted)
    fit.setEnabled(offer.fit_blocked is None)
    fit.toggled.connect(lambda on: setattr(offer, "fit_wanted", on and offer.fit_blocked is None))
    box.setCheckBox(fit)
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
        # read and built off the UI thread: 15–45 ms on two cores, while a run's last events are still drawn
        from core.model.model_io import load_model

        self.task = Task(load_model, offer.path, owner=self, progress=False)
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
        from core.evaluation.network_calibrator import about_minutes, fit_estimate_s

        logs = FIT_COUNT * len(FIT_FAMILIES)
        seconds, kept = fit_estimate_s(self.path)
        resumed = f", {kept} of them read before" if kept else ""
        task = Task(_fit_confidence, self.path, owner=self)
        self.fit_task = task
        self.shell.start_task(task, self._confidence_fitted,
                              f"fitting the confidence for {self.name}: reading {logs} synthetic logs with it"
                              f"{resumed} ({about_minutes(seconds)})…",
                              "fitting the confidence cancelled: nothing written (the logs read so far are kept: "
                              "Run › Fit confidence… resumes there)")

    def _confidence_fitted(self, done) -> None:
        if self.shell.closing:
            return
        resumed = f", {done.cached_logs} of them from the maps an earlier fit kept" if done.cached_logs else ""
        self.shell.task_done(f"the confidence of {done.network} is calibrated on it now ({done.samples} samples of "
                             f"{done.logs} logs{resumed}): {done.out}")
        self.changed.emit()
