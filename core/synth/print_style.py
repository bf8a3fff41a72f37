"""One concrete look of a paper log: what a print shop or logging company chose, and what scanning did."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PrintStyle:
    family: str
    tracks: int = 2  # tracks across the log (1–4)
    depth_column: bool = True
    api_layout: bool = True  # with two tracks: track 1 | depth | track 2
    log_track_share: float = 0.35  # chance a track after the first is logarithmic
    decades: tuple[int, int] = (2, 4)  # log tracks: 2..4 decades (inclusive)
    divisions: int = 10  # linear tracks: grid lines per track width
    heavy_every: int | None = 5  # every k-th linear division is heavier (None: uniform)
    grid_strength: float = 140.0  # ink coverage 0..255 of a minor grid line
    grid_width: int = 1
    heavy_gain: float = 1.6  # a heavy line's strength ÷ a minor one's (capped at 255)
    heavy_width: int = 2
    depth_line_px: float = 9.0  # least spacing of minor depth lines
    border_strength: float = 230.0
    border_width: int = 2
    pen_widths: tuple[int, ...] = (1, 2, 2, 3, 3, 4)
    pen_strength: tuple[int, int] = (200, 256)
    dash_scale: float = 1.0  # dash and gap lengths × this
    curves_per_track: tuple[int, int] = (1, 3)
    numbers_in_tracks: bool = False  # depth numbers printed inside the tracks (over the grid)
    annotations: int = 0  # words / stamps printed over the tracks
    scanned: bool = True
    artefacts: dict = field(default_factory=dict)  # probabilities and ranges of the scanner artefacts
    colour: bool = False  # drawn in colour: an ink per curve, a coloured grid, shading (colour_page.py)
    # log tracks: the mantissas ruled in each decade (1 is the decade line itself); 1..9 on most prints, 1, 2, 5 or
    # only the decade lines on some. The 7, 8, 9 and 10 lines bunch a few pixels apart and read as one dark band
    decade_lines: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9)
    # chances of the line styles a track draws (solid, dashed, dotted or dash-dot); None: each style alike
    line_styles: tuple[float, float, float] | None = None
    close_curves: float = 0.0  # chance that a track's curves run close (deep/medium/shallow resistivity, LTEN over DT)
    faint_curve: float = 0.0  # chance that one curve of a track is drawn fainter and thinner than the others
    # -- conventions the domain family (randomised.py) draws on their own; the defaults are the named families'
    pen_range: tuple[float, float] | None = None  # pen weights drawn from this range in px (fractional); None: pen_widths
    wide_dashes: bool = False  # dash and dot patterns from the whole space (page.wide_dash_pattern), not the house set
    cross_scale: float = 0.0  # chance a curve's scale (linear / log) is not its track's grid (a GR over log decades)
    broken_track: float = 0.0  # chance a track draws broken pens only (1-3 dashed or dotted, a style may repeat)
    skew_px: float = 0.8  # the most a point moves under the scanner's skew (0.5 deg over 1,000 px is 8.7 px)
    # -- the worn archive prints of fast logs (hard_families.broken_fast); off for every other family, whose logs
    # are then drawn exactly as before (same seed, same pixels)
    fast_shapes: float = 0.0  # chance a curve is a fast, spiky log (shapes.fast_shape), not a pen-smoothed one
    coarse_depth: bool = False  # few px per depth unit: 1.5-4 px a foot (5-12 a metre), not 2.5-8 (8-24)

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}
