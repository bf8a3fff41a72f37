"""WellTrace engine: scans, calibration, synthetic logs, training, budget, digitising, LAS.

Nothing in this package imports Qt; the GUI in ``app`` is a view over it.
"""

__version__ = "0.1.0"
