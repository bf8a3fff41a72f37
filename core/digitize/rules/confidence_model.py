"""The calibrated confidence: the probability that a written value lies within 5 % of its printed scale.

A column's signals (``core/digitize/rules/signals.py``: the evidence, its runner-up, the neighbours and lines beside
it, the passes' flags, the margins of the decisions behind it) go through a logistic regression, and its score
through an isotonic map onto the share of values that were right: both fitted with scikit-learn on prints held out
from the network's training (``core/evaluation/confidence_fit.py``, ``tools/fit_confidence.py``), checked on the
foreign prints (never fitted on them). The fitted numbers are a small JSON file shipped with the project
(``resources/models/confidence.json``): data, read at run time with numpy alone; no pickle, no scikit-learn needed to
digitise. A confidence of 0.8 then means what it says: of the values written at 0.8, about eight in ten are right.

The regression is additive but not linear in the continuous signals it names (:attr:`ConfidenceModel.splines`): each
such signal enters as a cubic B-spline basis over knots at its fitted quantiles (:func:`spline_basis`), held constant
beyond the outer knots, so a signal's effect may bend and saturate (a slope's: of the columns whose truth moves under
0.005 of the track a column 1 % are more than 0.05 off, at 0.07-0.12 half of them; a line linear in the slope's
logarithm could not follow both) and never runs off past what the fit saw. The knots are data in the same file. A 0/1 feature may instead be a stratum
(:attr:`ConfidenceModel.strata`): no weight in the regression, the values it raises reading the score through an
isotonic map of their own (another style's ink under the path: surer than the rest at a weak score, less sure at a
strong one, which no weight can say).

The model is fitted on one network's maps (the bundled model's; the file names its digest): another network's
evidence is not on the same scale, and its confidences are the same formula's, not a measured probability. A model
trained or adapted here gets its own with ``welltrace fit-confidence --model M`` (``core/evaluation/network_calibrator.py:
fit_network_calibrator``), kept beside the model file (:func:`sidecar_path`: ``M.confidence.json``) and read with it
(:func:`calibrator_beside`) while it names the file's digest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

FORMAT = "welltrace-confidence/1"  # a regression linear in every feature
FORMAT_SPLINES = "welltrace-confidence/2"  # ... or additive, some features through a spline basis (the knots kept)
FORMAT_STRATA = "welltrace-confidence/3"  # ... and some 0/1 features reading the score through their own isotonic map
# (an earlier reader, which would read every value through the one map, refuses the file)
SPLINE_DEGREE = 3  # cubic: its effect and its first two derivatives continuous at the knots
BUNDLED_CONFIDENCE = Path(__file__).resolve().parents[3] / "resources" / "models" / "confidence.json"
# a model's own calibrator lies beside its file: ``stage.safetensors`` -> ``stage.confidence.json``
SIDECAR_SUFFIX = ".confidence.json"
FIT_COMMAND = "welltrace fit-confidence --model"  # what fits one (``core/cli/commands/fit_confidence.py``)

# the flags of the doubting passes the model reads, each a 0/1 column of the design
PASS_FLAGS = ("backup_level", "ink_level", "hidden_fill", "identity", "steep", "unclaimed_stroke", "released_ruling",
              "line_detour", "borrowed_map", "pen_naming")
# the passes that say a decision could not be made (a wrapping curve's scale, which curve is which after a meeting):
# a value they flag is no surer than the share of such values that were right where the model was fitted
# (``core/evaluation/confidence_fit.py``): the regression, additive in its features, let a scale the tracer knew it
# had guessed read 0.98 (KGS's GR over 486-598 ft, its warning naming the stretch)
# ``released_ruling``: a path lying straight along a ruled line the grid released, the curve or the ruling
# ``line_detour``: a path that jumps onto such a line, stays on it and jumps back: the curve or the ruling again
# ``pen_naming``: two broken pens read from one map whose marks do not say which is which (``borrowed_map``). No fit
# log raises it, so its cap is a coin's (``confidence_fit.decision_caps``), and a coin it is: on the fit logs with the
# network's confusion simulated (``tools/dotted_as_dashed.py``: the dotted map moved into the dashed one, seed 515151,
# 20 logs of five families) the values it flags were right 50.3 % of the time, yet written at a mean CONF of 0.65
# and 25 % of them at 0.9 or more (right 60.6 % there) while the model read no flag (docs/accuracy.md, #60's
# twentieth round)
# ``borrowed_map``: a curve read from the other broken pen's map at all, its pens named or not: no fit log raises it
# either, and on the same simulated logs the borrowed values whose marks did name the pens clearly (7 curves, no
# ``pen_naming``) were right 44.6 % of the time, 41 % of them written at 0.9 or more (right 51.0 % there)
DECISION_FLAGS = ("backup_level", "ink_level", "identity", "released_ruling", "line_detour", "borrowed_map",
                  "pen_naming")
# a trace within this share of the track of a border, and spanning less than it over ``signals.WIGGLE_COLS`` columns
# either side, lies still on the border: the border's ink there reads as a pen's (the held-out families at the
# evaluation's seed: 212 such samples, 66 % right, 97 % of them written confident; docs/accuracy.md, issue #60)
STILL_SHARE = 0.01
# another line style's evidence at a trace's row at or over this reads as that style's ink under the path
# (``signals.ink_at_path``; the feature ``other_style_seen``): chosen on the fit's logs (seed 515151, logs 0-19), of
# 0.003, 0.01, 0.03 and 0.1 the one whose stratum's own map lowers confidently wrong most on all four synthetic fit
# families (docs/accuracy.md, #60's eighteenth round, helper B)
OTHER_STYLE_SEEN = 0.01
# the pen's pattern under the path (``signals.ink_duty``: the share of the path's still columns inked over
# ``signals.DUTY_COLS`` columns, ``duty``, and over the whole log, ``curve_duty``) differs from the curve's own by more
# than this, |ln((duty + DUTY_FLOOR) / (curve_duty + DUTY_FLOOR))|, where the path has left its pen's stroke for one
# of another pattern (a solid pen on a dashed stroke: broken locally; a broken pen on a solid one: unbroken): the
# feature ``pattern_mismatch``, a stratum of the fit (``confidence_fit.STRATA_FEATURES``). Chosen on the fit's logs
# (seed 515151, logs 0-19): of 0.2-0.8 and windows of 16, 48 and 96 columns, the one whose stratum lowers confidently
# wrong most over the four synthetic fit families (docs/accuracy.md, #60's nineteenth round, helper A)
PATTERN_MISMATCH = 0.4
DUTY_FLOOR = 0.05  # a duty of 0 (no ink over the window) is read as this much more: the ratio stays finite


def design(signals: dict[str, np.ndarray], klass: int, log_scale: bool, wrap: bool) -> tuple[np.ndarray, list[str]]:
    """The model's inputs per column (columns, features) from a trace's signals and its curve's kind, and their
    names: the signals as they are, but for the few that act on a log scale (a slope, a margin) and the interactions
    that carry a meaning of their own (a wrapping curve's scale not pinned by a crossing, a trace lying still on its
    track's border: :data:`STILL_SHARE`; the pen's pattern under the path unlike the curve's own:
    :data:`PATTERN_MISMATCH`)."""
    s = {k: np.asarray(v, np.float64) for k, v in signals.items()}
    n = next(iter(s.values())).size
    one = np.ones(n)
    cols = {
        "strength": s["strength"],
        "support": s["support"],
        "rival": s["rival"],
        "rival_over_strength": np.clip(s["rival"] - s["strength"], -1.0, 1.0),
        "neighbour": s["neighbour"],
        "same_style": s["same_style"],
        "edge": s["edge"],
        "on_line": s["on_line"],
        "log_slope": np.log(s["slope"] + 1e-3),
        "log_wiggle": np.log(s["wiggle"] + 1e-3),
        "log_curve_wiggle": np.log(s["curve_wiggle"] + 1e-3),
        "log_stroke": np.log(100.0 * s["stroke"] + 1.0),  # in hundredths of the track: a stroke no width is 0
        "unseen": s["unseen"],
        "to_null": s["to_null"],
        "run_cols": s["run_cols"],
        "run_strength": s["run_strength"],
        "curve_strength": s["curve_strength"],
        "curve_null": s["curve_null"],
        "backup": s["backup"],
        "dashed": one * (klass == 2),
        "dotted": one * (klass == 3),
        "log_scale": one * bool(log_scale),
        "wrap": one * bool(wrap),
        # a wrapping curve's stretch by what bounds it, one cell each (a crossing and nothing open is the base): the
        # log's ends alone (the scale is the rule's guess), an unresolved move but no crossing, a crossing on one side
        # and an unresolved move on the other. As two overlapping features (unpinned, open) the weight the second
        # cell needs (open +3.7 logits against unpinned's -6.5) was lent to the third: random_08's CALI read its
        # unseen dots a scale off at 1.00 (docs/accuracy.md, #60's tenth round)
        "wrap_unpinned": one * bool(wrap) * (1.0 - s["level_pinned"]) * (1.0 - s["level_open"]),
        "wrap_unpinned_open": one * bool(wrap) * (1.0 - s["level_pinned"]) * s["level_open"],
        "wrap_open": one * bool(wrap) * s["level_pinned"] * s["level_open"],
        "log_identity_margin": np.log1p(s["identity_margin"]),
        "still_on_border": ((s["edge"] < STILL_SHARE) & (s["wiggle"] < STILL_SHARE)).astype(np.float64),
        "other_style_seen": (s["other_style"] >= OTHER_STYLE_SEEN).astype(np.float64),
        "pattern_mismatch": (np.abs(np.log((s["duty"] + DUTY_FLOOR) / (s["curve_duty"] + DUTY_FLOOR)))
                             > PATTERN_MISMATCH).astype(np.float64),
    }
    for name in PASS_FLAGS:
        cols[name] = s[name]
    return np.stack(list(cols.values()), axis=1), list(cols)


def clamped_knots(inner: np.ndarray, degree: int = SPLINE_DEGREE) -> np.ndarray:
    """The knot vector of a B-spline basis over the sorted, distinct knots ``inner``: its ends repeated ``degree``
    times more, so the basis spans exactly [first, last] (``len(inner) + degree - 1`` functions)."""
    inner = np.asarray(inner, np.float64)
    return np.concatenate([np.full(degree, inner[0]), inner, np.full(degree, inner[-1])])


def spline_basis(v: np.ndarray, knots: np.ndarray, degree: int = SPLINE_DEGREE) -> np.ndarray:
    """(values, functions): the B-spline basis of the knot vector ``knots`` (:func:`clamped_knots`) at ``v``, by the
    Cox-de Boor recursion; a value beyond the outer knots reads as the nearest outer knot (the effect held constant
    past what the fit saw), NaN as the first. The functions sum to 1 at every value."""
    t = np.asarray(knots, np.float64)
    n = t.size - degree - 1
    lo, hi = t[degree], t[n]
    v = np.clip(np.nan_to_num(np.asarray(v, np.float64), nan=lo), lo, hi)
    # degree 0: the span each value falls in, the last closed on the right
    span = np.clip(np.searchsorted(t, v, side="right") - 1, degree, n - 1)
    b = np.zeros((v.size, t.size - 1))
    b[np.arange(v.size), span] = 1.0
    for d in range(1, degree + 1):
        left_w = t[d:-1] - t[: -d - 1]
        right_w = t[d + 1:] - t[1:-d]
        with np.errstate(divide="ignore", invalid="ignore"):
            left = np.where(left_w > 0, (v[:, None] - t[: -d - 1]) / left_w, 0.0)
            right = np.where(right_w > 0, (t[d + 1:] - v[:, None]) / right_w, 0.0)
        b = left * b[:, :-1] + right * b[:, 1:]
    return b


@dataclass
class ConfidenceModel:
    """A fitted calibrator: its terms (:func:`design`'s features, those named in ``splines`` through their spline
    basis), standardisation, logistic regression, isotonic map."""

    features: list[str]
    mean: np.ndarray  # per term (:attr:`terms`)
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    iso_x: np.ndarray  # the isotonic map's knots: scores ...
    iso_y: np.ndarray  # ... and the share right at each
    about: dict = field(default_factory=dict)  # what it was fitted on and measured with
    caps: dict[str, float] = field(default_factory=dict)  # per decision flag: the share right of the values it flags
    splines: dict[str, np.ndarray] = field(default_factory=dict)  # per feature read through a basis: its knot vector
    # per 0/1 feature: the isotonic map (scores, shares right) the score of a value it raises is read through, in place
    # of ``iso_x``/``iso_y``: the share right at a score is not the same with it and without (a weight added to the
    # score cannot say that where the difference changes sign along the score: ``signals.py``'s ``other_style``)
    strata: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @property
    def terms(self) -> list[str]:
        """The regression's inputs: each feature as it is, or its spline basis's functions (``NAME#k``)."""
        return expanded_terms(self.features, self.splines)

    def expand(self, x: np.ndarray) -> np.ndarray:
        """(rows, terms): a design's rows (``design``) as the regression reads them."""
        return expand(x, self.features, self.splines)

    def score(self, x: np.ndarray) -> np.ndarray:
        return ((self.expand(x) - self.mean) / self.scale) @ self.coef + self.intercept

    def probability(self, x: np.ndarray) -> np.ndarray:
        """The probability a column is right, per row of a design (``design``): the isotonic map of the regression's
        score (a stratum's own map where its feature is raised: :attr:`strata`), no higher than a decision flag's share
        right where one is raised (:data:`DECISION_FLAGS`)."""
        score = self.score(x)
        p = np.interp(score, self.iso_x, self.iso_y)
        for name, (sx, sy) in self.strata.items():
            p = np.where(x[:, self.features.index(name)] > 0.5, np.interp(score, sx, sy), p)
        p = np.clip(p, 0.0, 1.0)
        for name, cap in self.caps.items():
            p = np.where(x[:, self.features.index(name)] > 0.5, np.minimum(p, cap), p)
        return p

    def predict(self, signals: dict[str, np.ndarray], klass: int, log_scale: bool, wrap: bool) -> np.ndarray:
        x, names = design(signals, klass, log_scale, wrap)
        if names != self.features:
            raise ValueError(f"the confidence model reads {self.features}, the tracer gives {names}: refit it "
                             "(tools/fit_confidence.py)")
        return self.probability(x).astype(np.float32)

    def as_dict(self) -> dict:
        fmt = FORMAT_STRATA if self.strata else FORMAT_SPLINES if self.splines else FORMAT
        out = {"format": fmt, "features": self.features}
        if self.splines:
            out.update(spline_degree=SPLINE_DEGREE, splines={k: v.tolist() for k, v in self.splines.items()})
        if self.strata:
            out["strata"] = {k: {"isotonic_x": x.tolist(), "isotonic_y": y.tolist()} for k, (x, y) in self.strata.items()}
        return {**out, "mean": self.mean.tolist(), "scale": self.scale.tolist(), "coef": self.coef.tolist(),
                "intercept": float(self.intercept), "isotonic_x": self.iso_x.tolist(), "isotonic_y": self.iso_y.tolist(),
                "decision_caps": self.caps, "about": self.about}

    @classmethod
    def from_dict(cls, d: dict) -> "ConfidenceModel":
        if d.get("format") not in (FORMAT, FORMAT_SPLINES, FORMAT_STRATA):
            raise ValueError(f"not a confidence model ({FORMAT}, {FORMAT_SPLINES}, {FORMAT_STRATA}): format "
                             f"{d.get('format')!r}")
        splines = {str(k): np.asarray(v, np.float64) for k, v in d.get("splines", {}).items()}
        if splines and d.get("spline_degree", SPLINE_DEGREE) != SPLINE_DEGREE:
            raise ValueError(f"a confidence model's splines are of degree {SPLINE_DEGREE}, not {d['spline_degree']}")
        for name, t in splines.items():
            if name not in d["features"] or t.size < 2 * SPLINE_DEGREE + 2 or np.any(np.diff(t) < 0):
                raise ValueError("a confidence model's splines name its features, each a sorted knot vector of "
                                 f"{2 * SPLINE_DEGREE + 2} knots or more")
        arr = {k: np.asarray(d[k], np.float64) for k in ("mean", "scale", "coef", "isotonic_x", "isotonic_y")}
        if not (arr["mean"].size == arr["scale"].size == arr["coef"].size
                == len(expanded_terms(list(d["features"]), splines))):
            raise ValueError("a confidence model's mean, scale and coefficients must have one value per feature "
                             "(per spline function of a feature read through a basis)")
        if arr["isotonic_x"].size != arr["isotonic_y"].size or arr["isotonic_x"].size < 2:
            raise ValueError("a confidence model's isotonic map needs two knots or more, as many scores as shares")
        caps = {str(k): float(v) for k, v in d.get("decision_caps", {}).items()}
        if any(k not in d["features"] or not 0.0 <= v <= 1.0 for k, v in caps.items()):
            raise ValueError("a confidence model's decision caps name its features, each a share in [0, 1]")
        strata = {str(k): (np.asarray(v["isotonic_x"], np.float64), np.asarray(v["isotonic_y"], np.float64))
                  for k, v in d.get("strata", {}).items()}
        if any(k not in d["features"] or x.size != y.size or x.size < 2 for k, (x, y) in strata.items()):
            raise ValueError("a confidence model's strata name its features, each an isotonic map of two knots or more")
        return cls(list(d["features"]), arr["mean"], arr["scale"], arr["coef"], float(d["intercept"]),
                   arr["isotonic_x"], arr["isotonic_y"], dict(d.get("about", {})), caps, splines, strata)

    def save(self, path: str | Path) -> None:
        from core.common.atomic import atomic_write_bytes

        atomic_write_bytes(path, (json.dumps(self.as_dict(), indent=1) + "\n").encode())

    @classmethod
    def load(cls, path: str | Path) -> "ConfidenceModel":
        return cls.from_dict(json.loads(Path(path).read_text()))


def expanded_terms(features: list[str], splines: dict[str, np.ndarray]) -> list[str]:
    """The regression's terms for ``features``, each named in ``splines`` as its basis's functions (``NAME#k``)."""
    out = []
    for name in features:
        if name in splines:
            out += [f"{name}#{k}" for k in range(splines[name].size - SPLINE_DEGREE - 1)]
        else:
            out.append(name)
    return out


def expand(x: np.ndarray, features: list[str], splines: dict[str, np.ndarray]) -> np.ndarray:
    """(rows, terms): the design ``x`` (columns ``features``) with each feature named in ``splines`` read through its
    spline basis (:func:`spline_basis`), in place of the feature, the others as they are."""
    x = np.asarray(x, np.float64)
    if not splines:
        return x
    return np.concatenate([spline_basis(x[:, k], splines[name]) if name in splines else x[:, k:k + 1]
                           for k, name in enumerate(features)], axis=1)


@lru_cache(maxsize=1)
def bundled_confidence() -> ConfidenceModel | None:
    """The shipped calibrator, or None where the file is missing (the capped confidence is written instead)."""
    return ConfidenceModel.load(BUNDLED_CONFIDENCE) if BUNDLED_CONFIDENCE.is_file() else None


def sidecar_path(model_path: str | Path) -> Path:
    """Where the calibrator fitted for the model file ``model_path`` lies: beside it, its name's last suffix replaced
    (:data:`SIDECAR_SUFFIX`: ``stage8.safetensors`` -> ``stage8.confidence.json``)."""
    p = Path(model_path)
    return p.with_name((p.stem if p.suffix else p.name) + SIDECAR_SUFFIX)


@lru_cache(maxsize=8)
def _load_sidecar(path: str, mtime_ns: int, size: int) -> ConfidenceModel:
    """A calibrator file read once per version of it (its time and size in the key: a refit is read again)."""
    return ConfidenceModel.load(path)


def calibrator_beside(network) -> tuple[ConfidenceModel | None, str | None]:
    """The calibrator fitted for ``network`` (a model ``load_model`` read: its ``file_path`` and ``file_digest``),
    kept beside its file (:func:`sidecar_path`), and a warning where one lies there that is not used: (it, None)
    where it names the network's digest; (None, a warning) where it names another (the model file changed since it
    was fitted: refit) or cannot be read; (None, None) where there is none (the shipped calibrator then, as before).
    """
    path, digest = getattr(network, "file_path", None), getattr(network, "file_digest", None)
    if path is None or digest is None:
        return None, None
    side = sidecar_path(path)
    try:
        st = side.stat()
    except OSError:
        return None, None
    try:
        own = _load_sidecar(str(side), st.st_mtime_ns, st.st_size)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # a JSON error is a ValueError
        return None, (f"confidence: {side} beside the model cannot be read ({str(exc).splitlines()[0][:160]}): it is "
                      f"not used; refit it: {FIT_COMMAND} {path}")
    fitted = str(own.about.get("network_sha256_16", ""))
    if fitted != digest:
        return None, (f"confidence: {side.name} beside the model was fitted on network {fitted or '(unnamed)'}, and "
                      f"{Path(path).name} now holds another ({digest}: the model changed since); it is not used (CONF is "
                      f"the shipped fit's: the LAS header's confidence line says on which network); refit it: "
                      f"{FIT_COMMAND} {path}")
    # the tracer's signals are the shipped calibrator's (a new signal is shipped with its refit): a calibrator fitted
    # by an earlier release reads other features, and would refuse the tracer's design mid-read (``predict``)
    shipped = bundled_confidence()
    if shipped is not None and own.features != shipped.features:
        return None, (f"confidence: {side.name} beside the model was fitted by another release of WellTrace (it "
                      f"reads {len(own.features)} signals, this one's tracer gives {len(shipped.features)}); it is not "
                      f"used (CONF is the shipped fit's); refit it: {FIT_COMMAND} {path}")
    return own, None


def calibrator_for(params) -> ConfidenceModel | None:
    """The calibrator a trace with ``params`` (``TraceParams``) writes its confidence with: for a network's maps the
    one fitted for that network (``params.calibrator``: :func:`calibrator_beside`, set by the pipeline) where it has
    one, else the shipped one; None (the evidence capped by the doubts) for the classical tracer's ink, a painted
    mask (followed as painted: no ink checks) and the fit itself."""
    if not (params.calibrated and params.ink_checks):
        return None
    return params.calibrator if params.calibrator is not None else bundled_confidence()


def confidence_basis(model: ConfidenceModel | None, network_digest: str | None,
                     network_path: str | Path | None = None) -> tuple[str, str | None]:
    """What a read's confidence is, for the LAS header, and a warning where it is not what the header of a bundled
    read says: the calibrated probability on the network the calibrator (``model``, :func:`calibrator_for`) was
    fitted on (the bundled one, or a model's own calibrator beside its file); the same formula on another network's
    evidence (a model trained or adapted here with no calibrator of its own: not a probability measured for it; the
    warning says how to fit one for the file ``network_path``); or, with no calibrator, the evidence capped by the
    doubts, not a probability."""
    if model is None:
        return "the evidence capped by the passes' doubts (not a calibrated probability)", None
    fitted = str(model.about.get("network_sha256_16", ""))
    name = str(model.about.get("network", "the bundled network"))
    if network_digest is None or network_digest == fitted:
        return f"probability within 5 % of the scale, calibrated on {name} ({fitted})", None
    basis = (f"calibrated on {name} ({fitted}) and applied to another network ({network_digest}): "
             f"not a probability measured for it")
    warning = (f"confidence: the calibrator was fitted on {name} ({fitted}); this network ({network_digest}) is "
               f"another, so CONF is that fit applied to its evidence, not a probability measured for it "
               f"(docs/accuracy.md: on a network fine-tuned from the bundled one it stayed within a calibration "
               f"error of 0.041 on the held-out sets); fit one for it: {FIT_COMMAND} "
               f"{network_path if network_path is not None else 'MODEL'}")
    return basis, warning
