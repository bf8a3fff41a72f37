"""Synthetic raster well logs: the training data of the whole product.

- ``log.py``: one log, its truth curves drawn exactly into ink and a class mask;
- ``styles.py`` and the family modules: how a print looks (grid, pens, scanner);
- ``page.py``: drawing the grid, text and curves; ``colour_page.py``: colour prints;
- ``shapes.py``: curve shapes from real LAS files; ``catalogue.py``: curve names and scales;
- ``artefacts.py``: what copying and scanning do to paper;
- ``dataset.py``: writing logs and sets (a set is a valid project).
"""

from .catalogue import BACKUP_SIDE, CURVE_COLORS, LINEAR_CURVES, LOG_CURVES
from .dataset import GENERATOR_VERSION, parse_curve_range, write_log, write_set
from .log import STYLES, SyntheticLog, generate_log

__all__ = ["BACKUP_SIDE", "CURVE_COLORS", "GENERATOR_VERSION", "LINEAR_CURVES", "LOG_CURVES", "STYLES",
           "SyntheticLog", "generate_log", "parse_curve_range", "write_log", "write_set"]
