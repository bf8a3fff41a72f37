"""WellTrace desktop application (PySide6 + pyqtgraph): a view and controller over ``core``."""
