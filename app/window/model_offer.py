"""The offer of a newly trained or adapted model: what it shows and what it asks.

A model a training run or an adaptation writes is never swapped in silently: a 30-step trial run stopped early
once replaced the bundled model and halved what digitising read. The offer shows the new model's held-out figures
beside the current model's on the same held-out logs, and asks; the current model stays until the user says so
(``models.py``: ``ModelController.offer``).

The same offer fits the new model's calibrated confidence (CONF): a tick box, ticked where scikit-learn is installed,
says how long it takes here, and accepting the model starts the fit as Run › Fit confidence… runs it (off the UI
thread, with progress and Cancel). Offered, not started on its own: the fit holds the window's one long task and both
cores for minutes, and a model the user keeps on disk but does not use needs none; the user who takes the model
takes its fit with the same click.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from PySide6 import QtCore, QtWidgets

FIGURES = (("val_mask_f1", "mask F1", "{:.3f}"), ("val_curve_r", "curve r", "{:.3f}"),
           ("val_curve_rmse_pct", "RMSE % of scale", "{:.2f}"))


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
    fit_on_gpu: bool = False  # the fit reads on a CUDA GPU (``models.load_for_reading``): no minutes are said for it
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
                from core.engine.config import pick_device

                self.fit_s, self.fit_kept = fit_estimate_s(self.path)
                self.fit_on_gpu = pick_device("auto").type == "cuda"
        except OSError as exc:  # the file went away since the run wrote it: the loading says so
            self.fit_blocked = f"its file cannot be read: {exc.strerror or exc}"
        self.fit_wanted = self.fit_blocked is None

    def fit_text(self) -> str:
        """The tick box's words (short: a tick box does not wrap): the fit and how long it takes here."""
        if self.fit_blocked:
            return "Fit its confidence (CONF): " + ("done" if self.fit_done else "not possible here")
        from core.evaluation.network_calibrator import fit_time_words

        return f"Fit its confidence (CONF) when it is taken: {fit_time_words(self.fit_s, self.fit_on_gpu)}"

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
