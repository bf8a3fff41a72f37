"""Names and units every layer shares: the mask's line-style classes and the byte unit figures are given in."""

from __future__ import annotations

# the mask's classes (NAME.mask.png, the multiclass network's outputs): 0 paper, then one per line style
CLASS_NAMES = ("background", "solid", "dashed", "dotted")
GIB = 1024**3  # memory figures are given in GiB (2^30 bytes), as the OS and CUDA report them
