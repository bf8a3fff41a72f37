"""The main window's controllers, one concern each, mixed into :class:`app.main_window.MainWindow`."""
