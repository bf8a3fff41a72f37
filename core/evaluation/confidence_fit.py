"""Fitting the calibrated confidence (``core/digitize/rules/confidence_model.py``) on prints held out from the network.

Every LAS sample of a digitised log with a truth is a case: its nearest column's signals (the design the calibrator
reads at run time) and whether the value written there lies within 5 % of its printed scale of the truth. The logs
are fresh draws of the synthetic families the bundled network never trained on (:data:`FIT_FAMILIES`, from a seed of
their own: :data:`FIT_SEED`, not the evaluation's), so the confidence is fitted on prints as unfamiliar to the network
as a user's; the foreign prints (``../shared/data/foreign``) check it and are never fitted on.

The fit is scikit-learn's: a logistic regression on the standardised design (``C`` :data:`REGULARISATION`, its
classes weighted as they come; the features of :data:`SPLINE_FEATURES` through a cubic spline basis with knots at
quantiles of their fitted values, :data:`SPLINE_QUANTILES`: additive, not linear, in them), then an isotonic
regression of the share right on the regression's score, so the
number written is the share of values right at that score on the fitted prints, whatever the regression's own
curve. A value a decision flag names (a wrapping curve's scale, which curve is which: the tracer says it could not
tell) is no surer than the share of such values right in the fit. :func:`leave_one_family_out` measures the fit on each family with the others alone: how it carries to a
print style it was not fitted on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from core.digitize.rules.confidence_model import (
    DECISION_FLAGS,
    ConfidenceModel,
    clamped_knots,
    design,
    expand,
    expanded_terms,
)
from core.evaluation.styles import WRONG_SHARE, CaseLog, family_logs, family_set_name

# held out from the bundled network's training (stage 7). ``neighbours`` (every track two or three close curves of
# distinct line styles: the sixteenth round's training-only family, which stage 7 never saw) shows the fit the kind of
# confidently wrong value the held-out sets keep most of, a pen read on a close neighbour's stroke of another style.
# Against the four families alone on the same logs, confidently wrong falls or stays on every held-out set on each of
# eight draws (three disjoint, five at random), at up to 6.6 points of a family's yield; the colour prints' yield falls
# under 95 % on two of the eight. The shipped draw (logs 0-19), refitted with the pass ``line_detour``'s flag, against
# the fit before it: `random` 1.298 -> 0.708 %, its real shapes 1.533 -> 0.830 %, `dense` 1.317 -> 1.125 %, the
# foreign hard prints 0.755 -> 0.555 % with their yield 60.75 -> 62.35 % but their ECE 0.042 -> 0.059
# (docs/accuracy.md, #60: "Seventeenth round, helper D" and "(lead)"). A network
# trained with it in its stream (stage 8) is fitted on it too: fresh logs at the fit's seed, of a style it knows
FIT_FAMILIES = ("log_decades", "dotted_fax", "dense", "random", "neighbours")
FIT_SEED = 515151  # neither the evaluation's seed (styles.EVAL_SEED) nor any training stream's
# logs a family: 10 held too few of what fails (no trace lying still on a border; 40 logs against 80: the held-out
# families' confidently wrong share 1.3-3.0 % of their written samples -> 0.9-2.4 %, docs/accuracy.md); 40 lowered
# it further on the families but took the foreign colour prints' yield under 95 %
FIT_COUNT = 20
FIT_SIZE = (1600, 480)
# the logistic regression's C on standardised terms: 0.01 (scikit-learn's default is 1) with the slope's spline, the
# better of 1, 0.01 and 0.001 on the fit's leave-one-family-out figures and the held-out families' first 12 logs
REGULARISATION = 0.01
# the continuous features read through a cubic spline basis (``confidence_model.spline_basis``; the others stay
# linear), its knots at these quantiles of the fitted values (repeated values merged). The slope alone: a column's
# share more than 0.05 off is 1 % on strokes moving under 0.005 of the track a column, 6 % at 0.02-0.04, half at
# 0.07-0.12 (docs/accuracy.md, #60's twelfth round), a curve a term linear in the slope's logarithm cannot follow.
# Its effect is held constant under the median slope (0.004 of the track: the first knot), where a stroke's slope
# says nothing of its error; knots up the tail, where it bends. Splines of the evidence's strengths (its own, the
# runner-up's, the run's and the curve's) lowered the families' confidently wrong most and took the foreign prints'
# with them (hard 0.7 -> 2.7 %, colour's yield 99 -> 81 %): the network's strengths on the synthetic prints, not a
# shape that carries (docs/accuracy.md, #60: "Thirteenth round, helper B")
SPLINE_FEATURES: tuple[str, ...] = ("log_slope",)
SPLINE_QUANTILES = (0.5, 0.75, 0.9, 0.95, 0.99, 1.0)
# a decision flag raised on fewer fitted values than this has no share of its own: a coin's (the tracer could not tell)
MIN_FLAGGED = 30
# the 0/1 features kept out of the regression (no weight) whose raised values read the score through their own isotonic
# map, fitted on them alone (``ConfidenceModel.strata``); every value else reads the map fitted on all, as before.
# ``other_style_seen``: another style's ink under the path (``signals.py``: ``other_style``). On the fit's three
# disjoint draws (logs 0-19, 20-39, 40-59) its own map lowers confidently wrong on every held-out set at 0.6-2.7
# points of yield; a weight for it in the regression, or a map of its own for the rest too, raised the families'
# confidently wrong with their yield (docs/accuracy.md, #60's eighteenth round, helper B)
# ``pattern_mismatch``: the pen's pattern under the path unlike the curve's own (``confidence_model.PATTERN_MISMATCH``),
# last: a value raising both reads its map. Against the stratum of ``other_style_seen`` alone on the same logs, on
# each of the three disjoint draws confidently wrong falls or stays on every held-out set (``broken_fast`` 2.08 ->
# 1.94 % on the shipped one) at up to 1.9 points of a set's yield, and the foreign hard prints' ECE falls 0.061 ->
# 0.053, 0.050 -> 0.043, 0.048 -> 0.036 (docs/accuracy.md, #60's nineteenth round, helper A)
STRATA_FEATURES: tuple[str, ...] = ("other_style_seen", "pattern_mismatch")
# a stratum raised on fewer fitted values than this reads the map of all (too few for a map of its own)
MIN_STRATUM = 1000


@dataclass
class Samples:
    """Cases for the calibrator: a design row per written sample, whether it was right, and where it came from."""

    x: np.ndarray
    right: np.ndarray
    group: np.ndarray  # the set each sample came from (a family, a folder)
    features: list[str] = field(default_factory=list)

    @classmethod
    def join(cls, parts: list["Samples"]) -> "Samples":
        return cls(np.concatenate([p.x for p in parts]), np.concatenate([p.right for p in parts]),
                   np.concatenate([p.group for p in parts]), parts[0].features if parts else [])


def result_samples(lg: CaseLog, res, group: str) -> Samples:
    """The written samples of one digitised log (``res``, a ``DigitizeResult`` read with ``model_params``: its traces
    carry their signals) with a truth: each sample's nearest column's design row and whether it is right."""
    xs, ys, names = [], [], []
    px = lg.calibration.pixel_at(lg.depth)
    for tr, spec in zip(res.traces, lg.calibration.curves):
        truth = lg.truth.get(spec.mnemonic)
        if truth is None or not tr.signals:
            continue
        pred = np.interp(lg.depth, res.depth, res.values[spec.mnemonic], left=np.nan, right=np.nan)
        pf, tf = spec.unwrapped_fraction(pred), spec.unwrapped_fraction(truth)
        written = np.isfinite(pf) & np.isfinite(tf)
        if not written.any():
            continue
        col = np.clip(np.rint(px[written]), 0, tr.position.size - 1).astype(np.int64)
        x, names = design({k: v[col] for k, v in tr.signals.items()}, spec.klass, spec.log, spec.wrap)
        xs.append(x)
        ys.append(np.abs(pf - tf)[written] <= WRONG_SHARE)
    if not xs:
        return Samples(np.zeros((0, 0)), np.zeros(0, bool), np.zeros(0, "<U1"))
    n = sum(len(y) for y in ys)
    return Samples(np.concatenate(xs), np.concatenate(ys), np.full(n, group), names)


def log_samples(model, sets: Iterable[tuple[str, str, Iterable[CaseLog]]], params=None, cache=None, device="cpu"
                ) -> Iterator[tuple[str, CaseLog, Samples, bool, float]]:
    """Per log of ``sets`` ((group, evidence-cache set name, logs) each), digitised with ``model`` on ``device`` (from
    ``cache``'s maps where it has them: ``core/evaluation/evidence_cache.py``): its group, the log, its samples,
    whether its maps came from the cache and the seconds it took."""
    import torch

    from core.evaluation.styles import _digitize

    for group, set_name, logs in sets:
        logs = iter(logs)
        while True:
            t0 = time.perf_counter()  # the log drawn (rendered), read or re-traced, scored
            lg = next(logs, None)
            if lg is None:
                break
            cached = cache is not None and model is not None and cache.path(set_name, lg.name).is_file()
            with torch.no_grad():
                res = _digitize(lg, model, True, params, cache, set_name, device)
            yield group, lg, result_samples(lg, res, group), cached, time.perf_counter() - t0


def collect(model, sets: Iterable[tuple[str, str, Iterable[CaseLog]]], params=None, cache=None,
            progress: Callable[[str], None] | None = None) -> Samples:
    """The samples of every log of ``sets`` ((group, evidence-cache set name, logs) each), digitised with ``model``
    (from ``cache``'s maps where it has them: ``core/evaluation/evidence_cache.py``)."""
    parts, seconds, last = [], 0.0, None
    for group, _lg, s, _cached, dt in log_samples(model, sets, params, cache):
        if progress and last is not None and group != last:
            progress(f"{last}: {seconds:.0f} s")
            seconds = 0.0
        last, seconds = group, seconds + dt
        if s.right.size:
            parts.append(s)
    if progress and last is not None:
        progress(f"{last}: {seconds:.0f} s")
    return Samples.join(parts)


def family_sets(families=FIT_FAMILIES, count: int = FIT_COUNT, seed: int = FIT_SEED, size=FIT_SIZE,
                las_dir: str | None = None):
    """(group, cache set name, logs) for ``count`` fresh logs of each family."""
    w, h = size
    return [(f, family_set_name(f, w, h, seed, las_dir), family_logs(f, count, w, h, seed, las_dir)) for f in families]


def spline_knots(samples: Samples, features=None, quantiles=SPLINE_QUANTILES) -> dict[str, np.ndarray]:
    """Per feature of ``features`` (:data:`SPLINE_FEATURES`) the knot vector of its spline basis: its fitted values'
    ``quantiles``, repeated values merged; a feature with fewer than three distinct knots (a flag, a value nearly
    always the same) stays linear."""
    out = {}
    for name in SPLINE_FEATURES if features is None else features:
        inner = np.unique(np.quantile(samples.x[:, samples.features.index(name)], quantiles))
        if inner.size >= 3:
            out[name] = clamped_knots(inner)
    return out


def fit(samples: Samples, about: dict | None = None, splines=None, regularisation: float = REGULARISATION,
        quantiles=SPLINE_QUANTILES) -> ConfidenceModel:
    """The calibrator fitted on ``samples`` (module docstring); ``splines``: the features read through a spline basis
    (:data:`SPLINE_FEATURES` where None), the knots at ``quantiles`` of their fitted values."""
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    knots = spline_knots(samples, splines, quantiles)
    x, y = expand(samples.x, samples.features, knots), samples.right.astype(np.int64)
    terms = expanded_terms(samples.features, knots)
    apart = np.array([t in STRATA_FEATURES for t in terms])  # a stratum's flag: no weight (mean 0, scale 1, coef 0)
    mean = np.where(apart, 0.0, x.mean(axis=0))
    scale = np.where(apart, 1.0, x.std(axis=0))
    scale = np.where(scale > 1e-9, scale, 1.0)  # a feature constant over the fit (a flag never raised) reads 0
    z = ((x - mean) / scale)[:, ~apart]
    lr = LogisticRegression(C=regularisation, max_iter=5000).fit(z, y)
    coef = np.zeros(len(terms))
    coef[~apart] = lr.coef_[0]
    score = lr.decision_function(z)

    def isotonic(sel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        iso = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(score[sel], y[sel])
        kx, ky = np.asarray(iso.X_thresholds_, np.float64), np.asarray(iso.y_thresholds_, np.float64)
        if kx.size < 2:  # every sample alike: a flat map
            kx, ky = np.array([score[sel].min() - 1.0, score[sel].max() + 1.0]), np.full(2, y[sel].mean())
        return kx, ky

    knots_x, knots_y = isotonic(np.ones(y.size, bool))
    strata, stratified = {}, {}
    for name in STRATA_FEATURES:
        if name in samples.features:
            raised = samples.x[:, samples.features.index(name)] > 0.5
            stratified[name] = int(raised.sum())
            if raised.sum() >= MIN_STRATUM:
                strata[name] = isotonic(raised)
    caps, flagged = decision_caps(samples)
    info = {"samples": int(y.size), "right": float(y.mean()), "groups": sorted(set(samples.group.tolist())),
            "decision_flagged": flagged, "strata_raised": stratified,
            "fitted_with": "scikit-learn LogisticRegression(C=%g) + IsotonicRegression" % regularisation
            + (f"; {', '.join(knots)} through a cubic spline basis" if knots else "")}
    if knots:
        info["spline_quantiles"] = list(quantiles)
    return ConfidenceModel(samples.features, mean, scale, coef, float(lr.intercept_[0]),
                           knots_x, knots_y, {**info, **(about or {})}, caps, knots, strata)


def decision_caps(samples: Samples) -> tuple[dict[str, float], dict[str, int]]:
    """Per decision flag (``DECISION_FLAGS``) of ``samples``' design: the share right of the values it flags (a coin's,
    0.5, where it flags fewer than :data:`MIN_FLAGGED`), and how many it flags."""
    caps, flagged = {}, {}
    for name in DECISION_FLAGS:
        if name in samples.features:
            on = samples.x[:, samples.features.index(name)] > 0.5
            flagged[name] = int(on.sum())
            caps[name] = float(samples.right[on].mean()) if on.sum() >= MIN_FLAGGED else 0.5
    return caps, flagged


def with_caps(model: ConfidenceModel, samples: Samples) -> ConfidenceModel:
    """``model``'s regression and isotonic map as fitted, read on ``samples``' design (a feature the model lacks, a
    decision flag added since it was fitted, enters with no weight), and every decision flag's cap measured on
    ``samples``: a new decision flag held to its share right without refitting what the others' weights were fitted
    on (``tools/fit_confidence.py --caps-only``)."""
    missing = [n for n in model.features if n not in samples.features]
    if missing:
        raise ValueError(f"the samples lack the model's features {', '.join(missing)}: refit the whole model")
    have = {name: k for k, name in enumerate(model.terms)}  # an added feature enters as one linear term
    terms = expanded_terms(list(samples.features), model.splines)

    def pick(values: np.ndarray, default: float) -> np.ndarray:
        return np.array([values[have[n]] if n in have else default for n in terms], np.float64)

    caps, flagged = decision_caps(samples)
    added = [n for n in samples.features if n not in model.features]
    about = {**model.about, "decision_flagged": flagged, "caps_measured_on": int(samples.right.size),
             "features_added_unweighted": added}
    return ConfidenceModel(list(samples.features), pick(model.mean, 0.0), pick(model.scale, 1.0),
                           pick(model.coef, 0.0), model.intercept, model.iso_x, model.iso_y, about, caps,
                           dict(model.splines), dict(model.strata))


SHIFTS = tuple(np.round(np.arange(-3.0, 3.01, 0.25), 2))  # logits tried by :func:`shift_gains`


def with_shift(model: ConfidenceModel, feature: str, logits: float) -> ConfidenceModel:
    """``model`` with ``logits`` added to its regression's score wherever the 0/1 feature ``feature`` is raised, every
    other weight as fitted (the standardised weight and the intercept moved together, so nothing else moves)."""
    k = model.terms.index(feature)  # a 0/1 feature is one linear term
    coef = model.coef.copy()
    coef[k] += logits * model.scale[k]
    return ConfidenceModel(list(model.features), model.mean, model.scale, coef,
                           model.intercept + logits * float(model.mean[k]), model.iso_x, model.iso_y,
                           {**model.about, "shifted": {**model.about.get("shifted", {}), feature: logits}},
                           dict(model.caps), dict(model.splines), dict(model.strata))


def shift_gains(model: ConfidenceModel, samples: Samples, feature: str, shifts=SHIFTS) -> dict[float, dict[str, float]]:
    """Per shift of ``feature``'s weight (:func:`with_shift`), each group's gain in the Brier score of the confidence over
    ``samples`` (the sum of squared errors saved, per million of all the samples): a proper score, which credits a
    wrong value taken down and charges a right one by how sure each was written."""
    base = model.probability(samples.x)
    raised = samples.x[:, samples.features.index(feature)] > 0.5
    out = {}
    for shift in shifts:
        p = np.where(raised, with_shift(model, feature, float(shift)).probability(samples.x), base)
        saved = (base - samples.right) ** 2 - (p - samples.right) ** 2
        out[float(shift)] = {g: float(1e6 * saved[samples.group == g].sum() / samples.right.size)
                             for g in sorted(set(samples.group.tolist()))}
    return out


def chosen_shift(gains: dict[float, dict[str, float]]) -> float | None:
    """The shift that gains on every group, the largest gain in all among those (None where none gains on every group):
    a weight moved for one print style at another's cost is the eighth round's lesson (docs/accuracy.md)."""
    every = {s: sum(g.values()) for s, g in gains.items() if s != 0.0 and all(v > 0.0 for v in g.values())}
    return max(every, key=every.get) if every else None


def leave_one_family_out(samples: Samples, **how) -> dict[str, np.ndarray]:
    """Each group's probabilities from a calibrator fitted on the other groups alone (``how``: :func:`fit`'s)."""
    out = {}
    for g in sorted(set(samples.group.tolist())):
        rest = samples.group != g
        m = fit(Samples(samples.x[rest], samples.right[rest], samples.group[rest], samples.features), **how)
        out[g] = m.probability(samples.x[~rest])
    return out


def network_samples(model_path: str | Path, cache_folder: str | Path | None = None,
                    progress: Callable[[str], None] | None = None) -> Samples:
    """The fit families' samples as the network of ``model_path`` reads them (``cache_folder``: keep its maps)."""
    from core.digitize.trace.params import TraceParams
    from core.evaluation.evidence_cache import EvidenceCache
    from core.model.model_io import load_model

    model, _ = load_model(model_path)
    cache = EvidenceCache(cache_folder, model_path) if cache_folder else None
    return collect(model, family_sets(), TraceParams(calibrated=False), cache, progress)  # signals, no calibrator


def fit_about(model_path: str | Path, count: int = FIT_COUNT, families=FIT_FAMILIES, size=FIT_SIZE,
              digest: str | None = None) -> dict:
    """What a calibrator fitted for the network of ``model_path`` says of itself: which network (its file's name
    and digest: ``confidence_model.calibrator_beside`` uses it only for that digest) and which draw of logs."""
    from core.model.model_io import model_digest

    return {"network": Path(model_path).name, "network_sha256_16": digest or model_digest(model_path),
            "families": list(families), "seed": FIT_SEED, "logs_per_family": int(count), "size": list(size),
            "date": time.strftime("%Y-%m-%d")}


def fit_for(model_path: str | Path, samples: Samples) -> ConfidenceModel:
    """The calibrator of ``samples``, saying which network and draw it was fitted on."""
    return fit(samples, fit_about(model_path))
