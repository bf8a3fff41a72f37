"""Which map a curve is traced on: its line style's, taking in the styles no curve of its track is drawn in.

A multiclass network gives one map per line style (1 solid, 2 dashed, 3 dotted or dash-dot). On a print it
was not trained on it is sure there is a curve long before it is sure of the pen, so the calibration's word on
which pens a track holds decides where an unclaimed style's probability goes (:func:`unclaimed_styles`).
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np

from core.io.calibration import CurveSpec

# how alike two line styles look (1 solid, 2 dashed, 3 dotted or dash-dot): a network that is unsure of a
# pen reads a dashed stretch as dotted far more often than as solid
STYLE_DISTANCE = {(1, 2): 2, (1, 3): 3, (2, 3): 1}


class UnclaimedStyles(StrEnum):
    """Whose evidence a style no curve of the track is drawn in joins (:func:`unclaimed_styles`)."""

    NONE = "none"  # nobody's: each curve follows its own style's map alone (the classical ink, a user's mask)
    BROKEN = "broken"  # between dashed and dotted only, the pens a network confuses on a print it never saw
    ALL = "all"  # from any style to the nearest one drawn in the track


def unclaimed_styles(spec: CurveSpec, curves: list[CurveSpec],
                     mode: UnclaimedStyles = UnclaimedStyles.BROKEN) -> list[tuple[int, float]]:
    """The line styles no curve of ``spec``'s track is drawn in whose probability ``spec``'s evidence takes
    in, with their weights.

    A network reading a print it was not trained on is sure there is a curve long before it is sure of
    the pen: on log-decade prints a dashed GR read as dotted over half its length, and the trace of the
    dashed class was NULL there (p 0.005 on the curve, 0.95 for dotted). The calibration says which pens a
    track holds: a style no curve of the track is drawn in claims nothing there, so its probability goes
    to the curve of the nearest style (``STYLE_DISTANCE``; shared on a tie), as ``mode`` allows."""
    if mode == UnclaimedStyles.NONE:
        return []
    present = {c.klass for c in curves if c.shares_track_with(spec)} | {spec.klass}
    out = []
    for absent in {1, 2, 3} - present:
        if mode == UnclaimedStyles.BROKEN and {absent, spec.klass} != {2, 3}:
            continue
        dist = {k: STYLE_DISTANCE[tuple(sorted((absent, k)))] for k in present}
        nearest = [k for k, d in dist.items() if d == min(dist.values())]
        if spec.klass in nearest:
            out.append((absent, 1.0 / len(nearest)))
    return out


class MergedEvidence:
    """A class's map with the probabilities of unclaimed styles added (``unclaimed_styles``), read band by band
    like the maps it sums (a coded map decodes only the rows sliced)."""

    ndim = 2
    dtype = np.dtype(np.float32)

    def __init__(self, maps: dict[int, np.ndarray], klass: int, extra: list[tuple[int, float]]):
        self.maps, self.klass, self.extra = maps, klass, extra

    @property
    def shape(self) -> tuple[int, int]:
        return self.maps[self.klass].shape

    def __getitem__(self, key) -> np.ndarray:
        out = np.array(self.maps[self.klass][key], np.float32)
        for k, w in self.extra:
            out += w * np.asarray(self.maps[k][key], np.float32)
        return np.minimum(out, 1.0, out=out)

    def astype(self, dtype, copy: bool = True) -> np.ndarray:
        return self[:, :].astype(dtype, copy=False)

    def band(self, rows: slice) -> "MergedEvidence":
        """The rows ``rows`` merged the same way, nothing read yet: each map's band, a view where the map has one
        (``CodedMap.band``). Read at any pixels it gives what the whole band read gives there: the sums are per
        pixel."""
        maps = {k: (m.band(rows) if hasattr(m, "band") else m[rows])
                for k, m in self.maps.items() if k == self.klass or any(k == e for e, _ in self.extra)}
        return MergedEvidence(maps, self.klass, self.extra)


def merged_codes(m) -> tuple | None:
    """A merged band's codes as the compiled tracer reads them (``rules/track_scans.py: merged_damped_product``): its
    own map's codes, a tuple of each unclaimed style's and their weights (float32, as NumPy weighs a float32 map by a
    Python float); None unless ``m`` is a :class:`MergedEvidence` of coded maps."""
    from core.digitize.evidence.coded_map import CodedMap

    if not isinstance(m, MergedEvidence) or not all(isinstance(m.maps[k], CodedMap) for k, _ in m.extra) \
            or not isinstance(m.maps[m.klass], CodedMap):
        return None
    return (m.maps[m.klass].codes, tuple(m.maps[k].codes for k, _ in m.extra),
            np.array([w for _, w in m.extra], np.float32))


def style_evidence(evidence_by_class: dict, spec: CurveSpec, curves: list[CurveSpec], mode: UnclaimedStyles):
    """The map ``spec`` is traced on: its class's, taking in the unclaimed styles' (``unclaimed_styles``)."""
    extra = [(k, w) for k, w in unclaimed_styles(spec, curves, mode) if k in evidence_by_class]
    own = evidence_by_class[spec.klass]
    return MergedEvidence(evidence_by_class, spec.klass, extra) if extra else own
