"""A traced curve (``Trace``) and the parameters every tracer reads (``TraceParams``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from core.digitize.evidence.style import UnclaimedStyles


@dataclass
class Trace:
    mnemonic: str
    position: np.ndarray  # per depth column: sub-pixel position across the amplitude axis (NaN = gap)
    wraps: np.ndarray  # per column: whole track widths wrapped
    confidence: np.ndarray  # per column: how far the reading can be trusted, in [0, 1] (``column_confidence``)
    observed: np.ndarray  # per column: evidence above the threshold
    level_unsure: np.ndarray | None = None  # per column of a backup-scale curve: whether its scale is uncertain
    # per column: a bit for every pass that took the value away, doubted it or filled it there
    # (``core/digitize/rules/passes.py``)
    flags: np.ndarray | None = None
    # per column: what the calibrated confidence is computed from (``core/digitize/rules/confidence.py``)
    signals: dict[str, np.ndarray] | None = None
    # (the positions as read, the positions smoothed over a stroke: ``rules/stroke_values.smoothed_rows``): written where the
    # position is still the one read, once every pass and the calibrated confidence have read it (``written_smoothed``)
    smoothed: tuple[np.ndarray, np.ndarray] | None = None

    def __post_init__(self):
        if self.flags is None:
            self.flags = np.zeros(np.shape(self.position)[0], np.uint32)


@dataclass
class TraceParams:
    jump_cost: float = 0.04  # per pixel of jump across the track between neighbouring columns, along the curve's ink
    # ... and across paper or a grid line (``travel_costs``); equal to ``jump_cost``: the first tracer's flat cost
    gap_jump_cost: float = 0.25
    support_cols: int = 1  # columns either side whose evidence supports a steep move (dashed, dotted: more)
    eps: float = 1e-3
    threshold: float = 0.3  # evidence that counts as seeing the curve
    max_gap_px: int = 16  # gaps (dash gaps, crossings) bridged along depth
    refine_radius: int = 3
    refine_runs: bool = True  # centre the path on the whole run of rows a steep stroke inks (``rules/stroke_values.refined_rows``)
    stroke_gaps: bool = True  # ... the value's run followed across the breaks a network leaves in it (``steep_gap``)
    # ... and the value written on the quadratic fitted over the column and three either side of one stroke, once the
    # passes and the calibrated confidence have read the column's own (``rules/stroke_values.smoothed_rows``)
    smooth_values: bool = True
    hidden_returns: bool = True  # a return from a backup scale the path cut short, taken from the ink (trace/missed_returns.py)
    wrap_min_jump_px: int = 6  # moves shorter than this are never read as a wrap
    wrap_ink_gap_px: int = 16  # a direct move leaves no longer run of rows without ink than this ...
    wrap_ink_gap_share: float = 0.25  # ... and a longer one than this share of the track is a wrap
    grid_floor: float = 0.15  # evidence on a certain grid line keeps this share (see core/digitize/page/grid.py)
    # whether evidence on a grid line counts as seeing the curve. A network's class map says "a curve of this
    # style is here" wherever it is high, on a grid line too, so the damping only steers the path and a flat
    # curve lying along a grid line (a caliper in gauge hole) is read, not written NULL: the demo model's
    # curves were 14-22 % NULL per family with the damped test, 0-8 % with this, r as good or better
    # (eval-styles, 8 logs a family). Class-blind ink on a grid line is the grid's own: there the damped
    # evidence decides, and a stretch on a grid line counts only between observations (``_grid_supported``)
    observe_on_grid: bool = False
    # the evidence floor of a dashed or dotted curve: its gaps are expected, and with a floor of 1e-3 (−log 6.9 a
    # column) a path in a dash gap detoured to any other curve's faint evidence up to ~60 px away and back, the
    # spikes of dashed traces; 0.08 measured best of 0.02–0.25 (eval-styles worst family r 0.940 → 0.967)
    broken_eps: float = 0.08
    # a network's map of a style no curve of the track is drawn in: whose evidence it joins (``unclaimed_styles``);
    # "none" for evidence that is not a network's (a hand-painted mask is followed as painted)
    unclaimed_styles: UnclaimedStyles = UnclaimedStyles.NONE
    broken_support_cols: int = 4  # a dashed or dotted curve's steep stretch is supported by its dashes this near
    # whether a reading must be one the ink supports: stretches riding a border, a grid line or another curve's
    # stroke are NULL (``core/digitize/rules/riding.py``) and a wrap counts only where the trace is seen at both edges
    # (``core/digitize/trace/wraps.py``); off for a hand-painted mask, which is followed as painted
    ink_checks: bool = True
    # the confidence written: the calibrated probability of a fitted model (``core/digitize/rules/confidence_model.py``:
    # a network's maps, which it was fitted on), or the evidence's capped by the doubts (``confidence.capped_by_flags``:
    # the classical tracer's ink, a painted mask); None: by the evidence (``model_params`` calibrates a network's),
    # False for the fit itself (``core/evaluation/confidence_fit.py``)
    calibrated: bool | None = None
    # the calibrator fitted for the network whose maps are traced (``confidence_model.calibrator_beside``: kept beside
    # its model file, naming its digest), set by the pipeline; None: the shipped one (``confidence_model.calibrator_for``)
    calibrator: object | None = field(default=None, repr=False, compare=False)
    # the passes after the path switched off, by name (``core/digitize/rules/passes.py``): to measure what each buys
    passes_off: frozenset[str] = frozenset()
    hidden_px: float = 4.0  # a curve NULL between two points this near a neighbour ran under it (``_fill_hidden``) ...
    hidden_apart_cols: int = 48  # ... when it is seen apart from the neighbour within this many columns either side

    def runs(self, name: str) -> bool:
        """Whether the pass ``name`` runs (it is not in ``passes_off``)."""
        return name not in self.passes_off

    def broken(self) -> "TraceParams":
        """These params for a dashed or dotted curve: its gaps are expected (``broken_eps``) and a steep stretch
        of it is ink in its dashes only (``broken_support_cols``)."""
        return replace(self, eps=self.broken_eps, support_cols=self.broken_support_cols)


MODEL_UNCLAIMED_STYLES = UnclaimedStyles.BROKEN


# a network's map counts as seeing its curve from 0.12 (ink: 0.3), over gaps of up to 24 columns (ink: 16). On
# prints it was not trained on the bundled model is often sure there is a curve at 0.1-0.3 (thin 1-px pens under
# a dark grid, faint curves): at 0.3 those stretches were NULL where the trace lay on the curve (eval-styles, 5
# logs a family: dense 10.7 -> 4.4 % NULL, dotted_fax 8.9 -> 4.3 %, fax 9.9 -> 7.2 %, r the same or better,
# RMSE within 0.25 points)
MODEL_THRESHOLD = 0.12


MODEL_MAX_GAP_PX = 24


def model_params(params: TraceParams | None = None) -> TraceParams:
    """``params`` for tracing a network's class maps: they see curves, not ink, so a curve on a grid line is
    seen (``TraceParams.observe_on_grid``). Digitising and training-time validation both trace with these,
    so the figures a run is chosen by are the figures the LAS files get."""
    return replace(params or TraceParams(), observe_on_grid=True, unclaimed_styles=MODEL_UNCLAIMED_STYLES,
                   threshold=MODEL_THRESHOLD, max_gap_px=MODEL_MAX_GAP_PX,
                   calibrated=True if params is None or params.calibrated is None else params.calibrated)

