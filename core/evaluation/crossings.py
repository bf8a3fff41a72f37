"""The crossing test set (``welltrace eval-crossings``): tracks of 2–3 crossing curves, every pairing of line
styles, scored.

Each log draws every one of its tracks with exactly the curves of one pairing
(solid 1, dashed 2, dotted 3: distinct styles, same-style pairs, triples),
none wrapping, with shapes whose ranges overlap so that they cross. Traced
from their true masks (``--from-mask``: the tracer's ceiling, what a user's
hand-corrected label gives) or from a model's evidence, and scored per
pairing against the truth: median r and RMSE, the worst curve, and for
same-style groups the *separation*: where the curves are more than 8 px
apart, the share of columns where their traces lie on two different curves
(within 3 px each), whatever their names. r measures identity too, which at
a meeting of two same-style curves the image often cannot give
(``core/digitize/trace/crossings.py``); separation measures what the tracer can.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.digitize.job.pipeline import digitize
from core.digitize.output.metrics import CurveScores, compare_curve
from core.synth import generate_log

PAIRINGS: tuple[tuple[int, ...], ...] = ((1, 2), (1, 3), (2, 3), (1, 1), (2, 2), (3, 3), (1, 2, 3), (1, 1, 2))
# colour logs: curves of one line style told apart by their inks (each curve of a track has its own)
COLOUR_PAIRINGS: tuple[tuple[int, ...], ...] = ((1, 1), (1, 1, 1), (1, 2), (2, 2))
CROSSING_SEED = 515151  # never a training stream's seed
APART_PX = 8.0  # same-style curves farther apart than this must be traced on two different curves ...
ON_CURVE_PX = 3.0  # ... each within this of one


@dataclass
class PairingScore(CurveScores):
    pairing: tuple[int, ...]
    curves: list[dict] = field(default_factory=list)  # per curve: log, mnemonic, class, r, rmse_pct
    separated: int = 0  # same-style columns traced on two different curves
    apart: int = 0  # same-style columns where the curves are apart

    @property
    def separation(self) -> float | None:
        return self.separated / self.apart if self.apart else None

    def worst(self) -> dict | None:
        ok = [c for c in self.curves if np.isfinite(c["r"])]
        return min(ok, key=lambda c: c["r"]) if ok else None

    def as_dict(self) -> dict:
        return {"pairing": "+".join(map(str, self.pairing)), "median_r": self.median_r,
                "median_rmse_pct": self.median_rmse_pct, "separation": self.separation,
                "curves": len(self.curves), "worst": self.worst()}


def crossing_logs(pairing: tuple[int, ...], count: int, style: str = "uniform", width: int = 1600,
                  height: int = 384, seed: int = CROSSING_SEED):
    """``count`` logs whose every track carries exactly ``pairing``'s line styles, alternately tall and wide."""
    for i in range(count):
        s = int(np.random.SeedSequence([seed, *pairing, len(pairing), i]).generate_state(1)[0])
        yield generate_log(s, width, height, ("x", "y")[i % 2], style=style, classes=pairing,
                           name=f"{'+'.join(map(str, pairing))}_{i:02d}")


def _separation(lg, res) -> tuple[int, int]:
    specs = lg.calibration.curves
    cols = res.traces[0].position.size
    depth = lg.calibration.depth_at(np.arange(cols, dtype=np.float64))
    good = total = 0
    groups: dict[tuple, list[int]] = {}
    for k, s in enumerate(specs):
        groups.setdefault((s.klass, s.track), []).append(k)
    for ks in groups.values():
        if len(ks) != 2:
            continue
        truth = np.array([specs[k].position_of(np.interp(depth, lg.depth, lg.truth[specs[k].mnemonic]))[0] for k in ks])
        traced = np.array([res.traces[k].position for k in ks])
        apart = np.abs(truth[0] - truth[1]) > APART_PX
        nearest = np.argmin(np.abs(traced[:, None, :] - truth[None, :, :]), axis=1)  # (2, cols)
        dist = np.min(np.abs(traced[:, None, :] - truth[None, :, :]), axis=1)
        on = np.isfinite(traced).all(0) & (dist < ON_CURVE_PX).all(0) & (nearest[0] != nearest[1])
        good += int((apart & on).sum())
        total += int(apart.sum())
    return good, total


def evaluate_pairing(pairing: tuple[int, ...], model=None, count: int = 6, style: str = "uniform",
                     width: int = 1600, height: int = 384, seed: int = CROSSING_SEED, from_mask: bool | None = None,
                     colour: bool = True) -> PairingScore:
    """Trace ``count`` logs of one pairing from their true masks (default when ``model`` is None) or from
    evidence (the model's, or the classical ink with ``from_mask=False``); ``colour``: give the tracer the
    colour pixels of a colour log (off: the same logs as a grey scan)."""
    score = PairingScore(tuple(pairing))
    from_mask = model is None if from_mask is None else from_mask
    for lg in crossing_logs(pairing, count, style, width, height, seed):
        res = digitize(lg.image, lg.calibration, model=model, mask=lg.mask if from_mask else None, source=lg.name,
                       rgb=lg.rgb if colour else None)
        for spec in lg.calibration.curves:
            pred = np.interp(lg.depth, res.depth, res.values[spec.mnemonic], left=np.nan, right=np.nan)
            m = compare_curve(spec.mnemonic, lg.depth, pred, lg.truth[spec.mnemonic], spec.value_range)
            score.curves.append({"log": lg.name, "mnemonic": spec.mnemonic, "class": spec.klass,
                                 "r": float(m.r), "rmse_pct": float(m.rmse_pct)})
        good, total = _separation(lg, res)
        score.separated += good
        score.apart += total
    return score
