"""Axes that show values as they are.

pyqtgraph rescales an axis with an SI prefix by default. Log units are LAS
mnemonics, not SI units: it would turn OHMM into kOHMM, V/V into mV/V and a
depth in FT into kFT, and print "(x0.001)" beside a binary GiB. A reader of a
well log must see the unit the LAS file carries, so every plot in the app
turns the prefixes off.
"""

from __future__ import annotations

AXES = ("left", "bottom", "right", "top")


def plain_axes(plot) -> None:
    """Turn pyqtgraph's automatic SI prefixes off on every axis of a PlotWidget or PlotItem."""
    for name in AXES:
        plot.getAxis(name).enableAutoSIPrefix(False)
