"""*Adapt model to this project*: the current model (else the bundled one) fine-tuned on the project's labelled
scans within a time budget (``core/engine/adapt.py``, in ``app/adapt_dialog.py``).

The adapted model is offered to the model controller with its held-out figures beside the base's, never swapped
in and never written over the base; the dialog's *Digitise the rest* asks for the project's unlabelled scans to
be digitised (:attr:`AdaptController.digitize_rest`).
"""

from __future__ import annotations

from typing import Callable

from PySide6 import QtCore, QtWidgets

from core.model.bundled import BUNDLED_MODEL

from .labelling import LabellingController
from .models import ModelController
from .scans import ScanController
from .shell import Shell


class AdaptController(QtCore.QObject):
    digitize_rest = QtCore.Signal()  # the dialog's "digitise the rest": every calibrated scan without labels

    def __init__(self, shell: Shell, scans: ScanController, labelling: LabellingController, models: ModelController,
                 training_running: Callable[[], bool], window: QtWidgets.QWidget | None = None,
                 parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.shell, self.scans, self.labelling, self.models = shell, scans, labelling, models
        self.training_running = training_running  # a training run holds the CPU/GPU: no adapting meanwhile
        self.window = window  # the dialog's parent
        self.dlg = None

    def open_dialog(self) -> None:
        """Show the adapt dialog (the running one, if an adaptation is under way)."""
        project = self.scans.project
        if project is None:
            self.shell.show_error("open a project folder with a few labelled scans first (File › Open project)")
            return
        if self.training_running():
            self.shell.show_error("a training run is going: stop it or let it finish before adapting")
            return
        if self.dlg is not None and self.dlg.running():
            self.dlg.show()
            self.dlg.raise_()
            return
        from ..adapt_dialog import AdaptDialog

        self.labelling.flush()  # the labels on disk are the ones adapted on
        dlg = AdaptDialog(project.folder, self.models.path or BUNDLED_MODEL, self.window)
        dlg.adapted.connect(lambda rep: self.models.adapted(rep.out, rep.before, rep.after,
                                                            ", ".join(rep.held_out_names)))
        dlg.failed.connect(self.shell.show_error)
        dlg.digitize_btn.clicked.connect(self.digitize_rest)
        self.dlg = dlg
        dlg.show()

    def stop(self) -> None:
        """Stop an adaptation under way (closing the window)."""
        if self.dlg is not None and self.dlg.running():
            self.dlg.stop()
