"""Curve metrics against ground truth: per curve on the common depth range.

Pearson r, R², MAE and RMSE in curve units and in % of the scale range, the
share of samples within 2 % of the range, the share of NULL samples, and the
depth offset (in samples) that maximises r within ± a few samples, reported
and never silently applied.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from core.common.runs import true_runs
from core.io.las_io import LasData


@dataclass
class CurveMetrics:
    mnemonic: str
    n: int  # samples on the common depth range
    r: float
    r2: float
    mae: float
    rmse: float
    mae_pct: float
    rmse_pct: float
    within_2pct: float
    null_fraction: float
    best_offset: int  # samples; positive: the prediction lies deeper than the truth
    best_offset_r: float
    range: float

    def as_dict(self) -> dict:
        return asdict(self)


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    if a.size < 3 or np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def compare_curve(mnemonic: str, depth: np.ndarray, pred: np.ndarray, truth: np.ndarray,
                  value_range: float | None = None, max_offset: int = 5) -> CurveMetrics:
    """Metrics of ``pred`` against ``truth`` on the same depths; NaN in pred = NULL."""
    t_ok = np.isfinite(truth)
    rng = value_range if value_range else float(np.nanmax(truth) - np.nanmin(truth)) if t_ok.any() else 1.0
    rng = rng or 1.0
    null = float(np.mean(~np.isfinite(pred[t_ok]))) if t_ok.any() else 1.0
    ok = t_ok & np.isfinite(pred)
    p, t = pred[ok], truth[ok]
    if p.size == 0:
        nan = float("nan")
        return CurveMetrics(mnemonic, int(t_ok.sum()), nan, nan, nan, nan, nan, nan, 0.0, null, 0, nan, rng)
    err = p - t
    mae, rmse = float(np.mean(np.abs(err))), float(np.sqrt(np.mean(err**2)))
    ss_tot = float(np.sum((t - t.mean()) ** 2))
    r2 = 1.0 - float(np.sum(err**2)) / ss_tot if ss_tot > 0 else float("nan")
    r = _pearson(p, t)
    best, best_r = 0, r
    for k in range(-max_offset, max_offset + 1):
        if k == 0:
            continue
        a = pred[max(0, k): pred.size + min(0, k)]
        b = truth[max(0, -k): truth.size + min(0, -k)]
        m = np.isfinite(a) & np.isfinite(b)
        rk = _pearson(a[m], b[m])
        if np.isfinite(rk) and (not np.isfinite(best_r) or rk > best_r + 1e-9):
            best, best_r = k, rk
    return CurveMetrics(mnemonic, int(t_ok.sum()), r, r2, mae, rmse, 100 * mae / rng, 100 * rmse / rng,
                        float(np.mean(np.abs(err) <= 0.02 * rng)) * (1 - null), null, best, best_r, rng)


EXCURSION_SHARE = 0.10  # an excursion leaves the true line by more than this share of the track ...
EXCURSION_SAMPLES = 50  # ... and comes back within this many samples (a longer stretch off the line is a misread)


def excursions(pred_fraction: np.ndarray, truth_fraction: np.ndarray, share: float = EXCURSION_SHARE,
               max_samples: int = EXCURSION_SAMPLES) -> int:
    """Out-and-back departures of a trace from its curve, both in track fractions on the same depths.

    An excursion is a run of samples more than ``share`` of the track off the truth, at most ``max_samples``
    long, with samples on the line on both sides: the trace left its line (along a depth line, onto a grid
    line or another curve) and came back. NULL samples neither start nor end one. Such boxes cost little r
    each but are what a petrophysicist sees first on a replotted log."""
    ok = np.isfinite(pred_fraction) & np.isfinite(truth_fraction)
    off = np.abs(pred_fraction[ok] - truth_fraction[ok]) > share
    if off.size < 3:
        return 0
    a, b = true_runs(off)
    inner = (a > 0) & (b < off.size) & (b - a <= max_samples)
    return int(inner.sum())


def compare_las(pred: LasData, truth: LasData, ranges: dict[str, float] | None = None) -> list[CurveMetrics]:
    """Each truth curve present in the prediction, on the truth's depths within the common range."""
    lo = max(pred.depth.min(), truth.depth.min())
    hi = min(pred.depth.max(), truth.depth.max())
    sel = (truth.depth >= lo - 1e-9) & (truth.depth <= hi + 1e-9)
    depth = truth.depth[sel]
    out = []
    pred_names = {m.upper() for m in pred.mnemonics}
    for tc in truth.curves:
        if tc.mnemonic.upper() not in pred_names:
            continue
        pc = pred.curve(tc.mnemonic)
        pv = _resample(pred.depth, pc.values, depth)
        out.append(compare_curve(tc.mnemonic, depth, pv, tc.values[sel], (ranges or {}).get(tc.mnemonic.upper())))
    return out


def _resample(src_depth: np.ndarray, values: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Values at ``depth``; exact where the grids coincide, NULL-aware interpolation otherwise."""
    if src_depth.size == depth.size and np.allclose(src_depth, depth):
        return values.astype(np.float64)
    idx = np.searchsorted(src_depth, depth).clip(1, src_depth.size - 1)
    d0, d1 = src_depth[idx - 1], src_depth[idx]
    v0, v1 = values[idx - 1], values[idx]
    w = np.clip((depth - d0) / np.maximum(d1 - d0, 1e-12), 0, 1)
    return v0 + w * (v1 - v0)  # NaN on either side stays NaN


def summarise(metrics: list[CurveMetrics]) -> dict:
    rs = [m.r for m in metrics if np.isfinite(m.r)]
    rm = [m.rmse_pct for m in metrics if np.isfinite(m.rmse_pct)]
    return {"curves": len(metrics), "median_r": float(np.median(rs)) if rs else float("nan"),
            "median_rmse_pct": float(np.median(rm)) if rm else float("nan"),
            "median_null": float(np.median([m.null_fraction for m in metrics])) if metrics else float("nan"),
            "mean_null": float(np.mean([m.null_fraction for m in metrics])) if metrics else float("nan")}


def median_of(rows: list[dict], key: str) -> float:
    """The median of ``row[key]`` over the rows where it is finite (NaN when none is): a score table's
    median r or RMSE, with curves that could not be scored left out rather than counted."""
    v = [r[key] for r in rows if np.isfinite(r[key])]
    return float(np.median(v)) if v else float("nan")


class CurveScores:
    """The medians of a score table: ``curves`` holds one dict per scored curve, with "r" and "rmse_pct"."""

    curves: list[dict]

    @property
    def median_r(self) -> float:
        return median_of(self.curves, "r")

    @property
    def median_rmse_pct(self) -> float:
        return median_of(self.curves, "rmse_pct")

    @property
    def mean_null_pct(self) -> float:
        """The share of the depths written NULL, in %, averaged over the curves: r and RMSE are taken where a
        value was written, so a tracer that leaves the hard stretches NULL reads better on them than it is."""
        v = [r["null"] for r in self.curves if "null" in r and np.isfinite(r["null"])]
        return 100.0 * float(np.mean(v)) if v else float("nan")
