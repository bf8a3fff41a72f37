"""A calibration proposed from the scan itself: its log sections' depths, its tracks, the curves its scale box prints."""
