"""The calibrated confidence (core/digitize/rules/confidence_model.py, core/evaluation/confidence_fit.py): a probability
fitted on held-out prints, kept as data (JSON), read with numpy; and the signals it reads (rules/signals.py)."""

import json

import numpy as np
import pytest

from core.digitize.rules.confidence_model import (
    BUNDLED_CONFIDENCE,
    DECISION_FLAGS,
    FORMAT_SPLINES,
    FORMAT_STRATA,
    OTHER_STYLE_SEEN,
    PASS_FLAGS,
    ConfidenceModel,
    bundled_confidence,
    design,
)
from core.digitize.rules.curve import level_anchors
from core.digitize.rules.signals import DUTY_COLS, ink_at_path, ink_duty, rival_strength, stroke_width, trace_signals
from core.digitize.trace.params import Trace
from core.evaluation.confidence_fit import (
    MIN_STRATUM,
    Samples,
    chosen_shift,
    fit,
    leave_one_family_out,
    shift_gains,
    with_caps,
    with_shift,
)
from core.evaluation.styles import confidence_bins, expected_calibration_error
from core.io.calibration import CurveSpec


def _signals(n: int, rng) -> dict[str, np.ndarray]:
    names = ("strength", "support", "rival", "neighbour", "same_style", "edge", "on_line", "slope", "wiggle", "curve_wiggle",
             "stroke", "unseen", "to_null",
             "run_cols", "run_strength", "curve_strength", "curve_null", "backup", "level_pinned", "level_open",
             "identity_margin", "backup_level", "ink_level", "hidden_fill", "identity", "steep", "unclaimed_stroke",
             "released_ruling", "line_detour")
    # no other style's ink under the path, the pen's pattern under it its own: the values read the map of all
    # (``STRATA_FEATURES``); no pen read from another pen's map (flags drawn after these, so the draws above stay
    # the ones the tests' figures were set on)
    return {**{k: rng.random(n).astype(np.float32) for k in names}, "other_style": np.zeros(n, np.float32),
            "duty": np.ones(n, np.float32), "curve_duty": np.ones(n, np.float32),
            "borrowed_map": np.zeros(n, np.float32), "pen_naming": np.zeros(n, np.float32)}


def _samples(rng, n=6000) -> Samples:
    """Cases where a value is right with probability sigmoid(6·strength − 4·rival − 1): a known truth to fit (no pass
    flags a value)."""
    s = _signals(n, rng)
    s.update({k: np.zeros(n, np.float32) for k in PASS_FLAGS})
    x, names = design(s, 1, False, False)
    p = 1 / (1 + np.exp(-(6 * s["strength"] - 4 * s["rival"] - 1)))
    return Samples(x, rng.random(n) < p, np.repeat(np.array(["a", "b", "c"]), n // 3), names), p


def test_a_fitted_confidence_is_the_probability_a_value_is_right():
    rng = np.random.default_rng(3)
    samples, truth_p = _samples(rng)
    m = fit(samples)
    p = m.probability(samples.x)
    assert np.corrcoef(p, truth_p)[0, 1] > 0.95
    fresh, fresh_p = _samples(np.random.default_rng(4))
    q = m.probability(fresh.x)
    assert expected_calibration_error(confidence_bins(q, fresh.right)) < 0.03  # calibrated on draws it never saw
    assert np.all((q >= 0) & (q <= 1))
    for g, r in leave_one_family_out(samples).items():  # each group from a fit on the others
        assert r.shape == (np.sum(samples.group == g),)
    assert m.caps == {name: 0.5 for name in DECISION_FLAGS}  # no value flagged: a coin's


def test_a_decision_the_tracer_could_not_make_caps_the_confidence_at_its_share_right():
    """A wrapping curve's scale that the edges did not settle: the regression, additive in its features, read 0.98 on
    KGS's GR where the warning named the stretch; such a value is no surer than the share of them right."""
    rng = np.random.default_rng(6)
    samples, _ = _samples(rng, 6000)
    flag = samples.features.index("backup_level")
    samples.x[:600, flag] = 1.0
    samples.right[:600] = np.arange(600) % 3 == 0  # a third of the flagged values right
    m = fit(samples)
    assert abs(m.caps["backup_level"] - 1 / 3) < 0.01
    p = m.probability(samples.x)
    assert (p[:600] <= m.caps["backup_level"] + 1e-9).all() and p[600:].max() > 0.9


def test_caps_only_keeps_the_fitted_weights_and_measures_each_decision_flag_s_share_right():
    """``tools/fit_confidence.py --caps-only``: a decision flag added since the calibrator was fitted enters with no
    weight, and is held to the share of the values it flags that are right; every other value reads as before."""
    rng = np.random.default_rng(8)
    samples, _ = _samples(rng, 6000)
    k = samples.features.index("identity")
    full = fit(samples)
    kt = full.terms.index("identity")  # its term among the slope's spline functions
    older = ConfidenceModel([f for f in full.features if f != "identity"], np.delete(full.mean, kt),
                            np.delete(full.scale, kt), np.delete(full.coef, kt), full.intercept, full.iso_x, full.iso_y,
                            splines=full.splines)
    samples.x[:300, k] = 1.0
    samples.right[:300] = np.arange(300) % 4 == 0  # a quarter of the flagged values right
    m = with_caps(older, samples)
    assert m.features == samples.features and m.coef[kt] == 0.0 and m.about["features_added_unweighted"] == ["identity"]
    assert m.caps["identity"] == 0.25 and m.about["decision_flagged"]["identity"] == 300
    p = m.probability(samples.x)
    assert p[:300].max() <= 0.25
    np.testing.assert_allclose(p[300:], older.probability(np.delete(samples.x[300:], k, axis=1)))
    fewer = Samples(np.delete(samples.x, k, axis=1), samples.right, samples.group,
                    [f for f in samples.features if f != "identity"])
    with pytest.raises(ValueError, match="lack the model's features identity"):
        with_caps(full, fewer)  # a model reading what the tracer no longer gives: refit it whole


def test_a_shifted_weight_moves_the_score_by_its_logits_where_its_feature_is_raised_and_nowhere_else():
    """``tools/fit_confidence.py --shift``: one 0/1 feature's weight moved, every other as fitted; the shift chosen is
    the one that gains on every group, and none where a shift that helps one group costs another."""
    rng = np.random.default_rng(11)
    samples, _ = _samples(rng, 6000)
    k = samples.features.index("wrap_open")
    samples.x[:900, k] = 1.0  # raised on group a's first rows ...
    samples.right[:900] = np.arange(900) % 10 == 0  # ... where one value in ten is right
    m = fit(Samples(samples.x[900:], samples.right[900:], samples.group[900:], samples.features))  # never saw it raised
    moved = with_shift(m, "wrap_open", -2.0)
    np.testing.assert_allclose(moved.score(samples.x) - m.score(samples.x), np.where(samples.x[:, k] > 0.5, -2.0, 0.0),
                               atol=1e-9)
    assert moved.about["shifted"] == {"wrap_open": -2.0} and moved.caps == m.caps
    gains = shift_gains(m, samples, "wrap_open", shifts=(-4.0, -2.0, 0.0, 2.0))
    assert gains[0.0] == {"a": 0.0, "b": 0.0, "c": 0.0}
    assert gains[-4.0]["a"] > gains[-2.0]["a"] > 0 > gains[2.0]["a"]  # mostly wrong: the lower, the nearer the truth
    assert gains[-2.0]["b"] == gains[-2.0]["c"] == 0.0  # not raised there
    assert chosen_shift(gains) is None  # it gains on a alone
    assert chosen_shift({-2.0: {"a": 3.0, "b": 0.5}, -1.0: {"a": 2.0, "b": 2.0}, 1.0: {"a": -1.0, "b": 4.0}}) == -1.0


def test_a_wrapping_curves_scale_reads_as_one_of_three_cells_by_what_bounds_its_stretch():
    """What bounds a wrapping curve's stretch enters the calibrator as one cell each, so that the weight a stretch
    bounded by an unresolved move but no crossing needs (a scale half guessed) is not lent to a stretch a crossing
    pins (random_08's CALI: +3.7 logits on every pinned column bounded by an unresolved move, its unseen dots at 1.00)."""
    s = _signals(5, np.random.default_rng(3))
    s["level_pinned"] = np.array([1, 0, 0, 1, 1], np.float32)
    s["level_open"] = np.array([0, 0, 1, 1, 1], np.float32)
    x, names = design(s, 1, False, True)
    cells = [names.index(n) for n in ("wrap_unpinned", "wrap_unpinned_open", "wrap_open")]
    assert x[:, cells].tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]]
    assert not design(s, 1, False, False)[0][:, cells].any()  # a curve that cannot wrap: none


def test_the_model_is_data_read_back_exactly_and_refused_when_it_does_not_fit(tmp_path):
    rng = np.random.default_rng(5)
    samples, _ = _samples(rng, 3000)
    m = fit(samples, {"note": "test"})
    m.save(tmp_path / "c.json")
    back = ConfidenceModel.load(tmp_path / "c.json")
    assert np.array_equal(back.probability(samples.x), m.probability(samples.x)) and back.about["note"] == "test"
    d = json.loads((tmp_path / "c.json").read_text())
    with pytest.raises(ValueError, match="not a confidence model"):
        ConfidenceModel.from_dict({**d, "format": "pickle"})
    with pytest.raises(ValueError, match="one value per feature"):
        ConfidenceModel.from_dict({**d, "coef": d["coef"][:-1]})
    renamed = ConfidenceModel.from_dict({**d, "features": ["x"] + d["features"][1:]})
    with pytest.raises(ValueError, match="refit it"):
        renamed.predict(_signals(10, rng), 1, False, False)


def test_the_shipped_model_reads_what_the_tracer_gives_and_trusts_a_clean_reading_more():
    assert BUNDLED_CONFIDENCE.is_file()
    m = bundled_confidence()
    _, names = design(_signals(3, np.random.default_rng(0)), 1, False, False)
    assert m.features == names  # the JSON and the code agree (a changed signal needs a refit)
    assert m.about["families"] == ["log_decades", "dotted_fax", "dense", "random", "neighbours"]
    clean = {k: np.zeros(1, np.float32) for k in _signals(1, np.random.default_rng(0))}
    clean.update(strength=np.ones(1), support=np.ones(1), neighbour=np.full(1, 0.25), same_style=np.full(1, 0.25),
                 edge=np.full(1, 0.25), to_null=np.ones(1), run_cols=np.ones(1), run_strength=np.ones(1),
                 curve_strength=np.ones(1), level_pinned=np.ones(1), identity_margin=np.full(1, 20.0),
                 slope=np.full(1, 0.002), wiggle=np.full(1, 0.01))
    faint = {**clean, "strength": np.full(1, 0.05), "support": np.full(1, 0.1), "rival": np.full(1, 0.8),
             "run_strength": np.full(1, 0.1), "curve_strength": np.full(1, 0.1), "curve_null": np.full(1, 0.5),
             "unclaimed_stroke": np.ones(1)}
    p_clean, p_faint = m.predict(clean, 1, False, False)[0], m.predict(faint, 1, False, False)[0]
    assert p_clean > 0.95 and p_faint < 0.6 and p_clean > p_faint
    # the same clean reading of a pen whose marks do not say which broken pen it is (the pass pen_naming): no fit log
    # raises the flag, and on the simulated confusion a coin's share of its values were right: no surer than 0.5
    unnamed = {**clean, "pen_naming": np.ones(1)}
    assert m.caps["pen_naming"] == 0.5 and m.predict(unnamed, 2, False, False)[0] <= 0.5
    # ... nor one read from the other broken pen's map, its pens named or not (the pass borrowed_map)
    borrowed = {**clean, "borrowed_map": np.ones(1)}
    assert m.caps["borrowed_map"] == 0.5 and m.predict(borrowed, 3, False, False)[0] <= 0.5


def test_a_wrapping_curves_scale_is_pinned_where_a_crossing_bounds_its_stretch():
    wraps = np.zeros(100, np.int64)
    wraps[40:70] = 1  # up at 40, back at 70: both stretches' scales pinned by a crossing
    unresolved = np.zeros(100, bool)
    anchors = level_anchors(wraps, unresolved)
    assert anchors["level_pinned"].all() and not anchors["level_open"].any()
    anchors = level_anchors(np.zeros(100, np.int64), unresolved)  # no crossing: the main scale is the rule's guess
    assert not anchors["level_pinned"].any()
    unresolved[50:55] = True  # a move neither direct nor seen at the edges: either side may be a scale off
    anchors = level_anchors(np.zeros(100, np.int64), unresolved)
    assert anchors["level_open"].all() and not anchors["level_pinned"].any()


def test_the_runner_up_is_evidence_no_traced_curve_explains():
    ev = np.zeros((100, 50), np.float32)
    ev[30, :] = 0.9  # the traced curve
    ev[70, :] = 0.6  # a stroke of its style nobody traced
    ev[52, :] = 0.8  # a neighbour's stroke, traced
    traced = np.full(50, 30.0)
    rival = rival_strength(ev, 0, 99, [traced, np.full(50, 52.0)], keep_px=4.0)
    assert np.allclose(rival, 0.6)
    assert np.allclose(rival_strength(ev, 0, 99, [traced, np.full(50, 52.0), np.full(50, 70.0)], 4.0), 0.0)


def test_signals_say_where_a_reading_is_beside_a_neighbour_near_an_edge_or_alone():
    spec = CurveSpec("GR", "API", "", 1, (0.0, 200.0), (0.0, 150.0))
    cols = 60
    pos = np.full(cols, 100.0)
    pos[50:] = np.nan
    tr = Trace("GR", pos, np.zeros(cols, np.int64), np.ones(cols, np.float32), np.isfinite(pos))
    tr.signals = {"strength": np.full(cols, 0.8, np.float32)}
    other = np.full(cols, 104.0)
    s = trace_signals(tr, spec, [other], [], np.zeros(cols, np.float32), np.zeros(cols, bool), None, 24)
    assert np.allclose(s["neighbour"][:50], 4 / 200) and np.allclose(s["same_style"], 0.25)
    assert np.allclose(s["edge"][:50], 0.25) and s["to_null"][0] == 1.0 and s["to_null"][49] < 0.05
    assert np.allclose(s["run_cols"][:50], 50 / 400) and np.allclose(s["curve_null"], 10 / 60)
    assert (s["identity_margin"] == 20.0).all()  # alone in its style: as sure as a clear decision


def test_a_trace_lying_still_on_its_border_is_a_feature_of_its_own():
    """A trace still on the track's border (within STILL_SHARE of it, spanning less than that about the column) reads
    the border's ink as much as a curve's; one on the border that moves, or still away from it, does not."""
    from core.digitize.rules.confidence_model import STILL_SHARE

    s = _signals(4, np.random.default_rng(8))
    s["edge"] = np.array([0.0, 0.0, 0.2, 2 * STILL_SHARE], np.float32)
    s["wiggle"] = np.array([0.002, 0.3, 0.002, 0.002], np.float32)
    x, names = design(s, 1, False, False)
    assert x[:, names.index("still_on_border")].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert "still_on_border" in bundled_confidence().features  # the shipped model reads it


def test_a_curves_wiggle_over_the_whole_log_is_its_median_wiggle_where_it_has_a_value():
    """A curve calm over most of its log but for one busy stretch is a calm curve (the median, not the mean), the
    NULL columns say nothing of it, and the shipped model reads it (on a log scale, like the column's wiggle)."""
    spec = CurveSpec("GR", "API", "", 1, (0.0, 200.0), (0.0, 150.0))
    cols = 100
    pos = np.full(cols, 100.0)
    pos[40:44] = [20.0, 180.0, 20.0, 180.0]  # a busy stretch: 0.8 of the track within four columns
    pos[90:] = np.nan
    tr = Trace("GR", pos, np.zeros(cols, np.int64), np.ones(cols, np.float32), np.isfinite(pos))
    tr.signals = {"strength": np.full(cols, 0.8, np.float32)}
    s = trace_signals(tr, spec, [], [], np.zeros(cols, np.float32), np.zeros(cols, bool), None, 24)
    assert np.isclose(s["wiggle"][41], 0.8) and s["wiggle"][0] == 0.0
    assert (s["curve_wiggle"] == 0.0).all()  # 20 busy columns of 90 valued ones: the median is calm
    pos[::2] = np.where(np.arange(cols)[::2] < 90, 110.0, np.nan)  # a curve that swings every column
    s = trace_signals(tr, spec, [], [], np.zeros(cols, np.float32), np.zeros(cols, bool), None, 24)
    assert np.allclose(s["curve_wiggle"], 10 / 200)
    x, names = design(s, 1, False, False)
    assert np.allclose(x[:, names.index("log_curve_wiggle")], np.log(10 / 200 + 1e-3))
    assert "log_curve_wiggle" in bundled_confidence().features  # the shipped model reads it


def test_a_curves_stroke_is_its_width_at_the_path_where_it_was_seen():
    """The run of evidence that holds the path, its median over the seen columns (a blot on a few columns and the
    unseen ones say nothing), in pixels; the shipped model reads it in track widths, a wider stroke less surely."""
    rows, cols = 200, 80
    ev = np.zeros((rows, cols), np.float32)
    pos = np.full(cols, 100.0)
    ev[98:103] = 0.9  # a stroke 5 px wide along the path
    ev[90:110, :8] = 0.9  # a blot over the first 8 columns: 20 px
    ev[140:143] = 0.9  # another stroke apart: not the curve's
    seen = np.ones(cols, bool)
    seen[60:] = False  # unseen: the bridged columns say nothing
    ev[80:120, 60:] = 0.9
    assert stroke_width(ev, pos, seen, 50, 199, 0) == 5.0
    assert stroke_width(ev[40:], pos, seen, 50, 199, 40) == 5.0  # a band of rows from 40 on
    assert stroke_width(np.zeros_like(ev), pos, seen, 50, 199, 0) == 0.0  # no evidence at the path
    spec = CurveSpec("GR", "API", "", 1, (0.0, 200.0), (0.0, 150.0))
    tr = Trace("GR", pos, np.zeros(cols, np.int64), np.ones(cols, np.float32), seen)
    s = trace_signals(tr, spec, [], [], np.zeros(cols, np.float32), np.zeros(cols, bool), None, 24, 5.0)
    assert np.allclose(s["stroke"], 5.0 / spec.track_width)  # in track widths, as the neighbour and the edge
    m = bundled_confidence()
    assert "log_stroke" in m.features
    thin = {k: np.full(1, 0.5, np.float32) for k in _signals(1, np.random.default_rng(0))}
    thin.update({k: np.zeros(1, np.float32) for k in PASS_FLAGS}, stroke=np.full(1, 0.01, np.float32))
    wide = {**thin, "stroke": np.full(1, 0.08, np.float32)}
    assert m.score(design(thin, 1, False, False)[0])[0] > m.score(design(wide, 1, False, False)[0])[0]


def test_a_spline_basis_is_the_b_spline_basis_held_constant_past_its_outer_knots():
    """``spline_basis`` (numpy alone, what the tracer evaluates) is scipy's B-spline design matrix inside the knots, sums
    to 1, and reads a value beyond the outer knots (or NaN) as the nearest outer knot: a slope steeper than any fitted
    is as doubtful as the steepest fitted, never more by extrapolation."""
    from scipy.interpolate import BSpline

    from core.digitize.rules.confidence_model import SPLINE_DEGREE, clamped_knots, spline_basis

    t = clamped_knots(np.array([-6.0, -5.0, -3.5, -3.0, -2.0, 0.0]))
    v = np.array([-6.0, -5.5, -5.0, -4.2, -3.0, -2.7, -1.0, 0.0])
    b = spline_basis(v, t)
    assert b.shape == (v.size, t.size - SPLINE_DEGREE - 1)
    np.testing.assert_allclose(b, BSpline.design_matrix(v, t, SPLINE_DEGREE).toarray(), atol=1e-12)
    np.testing.assert_allclose(b.sum(axis=1), 1.0)
    np.testing.assert_allclose(spline_basis(np.array([-9.0, 3.0, np.nan]), t), b[[0, -1, 0]], atol=1e-12)


def _steep_samples(rng, n=12000) -> tuple[Samples, np.ndarray]:
    """Cases whose odds of being right add a slope's effect as a print's resolution makes it (none on strokes under
    0.02 of the track a column, falling steeply beyond 0.05) to the evidence's strength's (linear in the logit)."""
    s = _signals(n, rng)
    s.update({k: np.zeros(n, np.float32) for k in PASS_FLAGS})
    s["slope"] = np.exp(rng.uniform(np.log(1e-3), np.log(0.5), n)).astype(np.float32)
    x, names = design(s, 1, False, False)
    steep = 1 / (1 + np.exp(-(np.log(s["slope"]) - np.log(0.08)) * 4))  # 0 on flat strokes, 1 on steep ones
    p = 1 / (1 + np.exp(-(3.5 - 6 * steep + 4 * (s["strength"] - 0.5))))
    return Samples(x, rng.random(n) < p, np.repeat(np.array(["a", "b", "c"]), n // 3), names), p


def test_an_additive_model_follows_a_slope_s_effect_that_bends_where_a_linear_one_cannot():
    """The slope through a spline basis (``SPLINE_FEATURES``) beside a strength linear in the logit: on draws the fit
    never saw, the confidence reads the share right in every cell of slope and strength, where the regression linear
    in the slope's logarithm (its one score then mapped by the isotonic) misreads the flat and the steep strokes."""
    rng = np.random.default_rng(21)
    samples, _ = _steep_samples(rng)
    fresh, fresh_p = _steep_samples(np.random.default_rng(22))
    slope = np.digitize(fresh.x[:, fresh.features.index("log_slope")], np.log(np.array([0.02, 0.05, 0.1, 0.2]) + 1e-3))
    cell = 2 * slope + (fresh.x[:, fresh.features.index("strength")] > 0.5)

    def worst_gap(m):  # the largest gap, over the cells, between the mean confidence and the truth's share right
        q = m.probability(fresh.x)
        return max(abs(q[cell == c].mean() - fresh_p[cell == c].mean()) for c in range(10))

    additive = fit(samples, splines=("log_slope",))
    linear = fit(samples, splines=())
    assert "log_slope" in additive.splines and not linear.splines
    assert worst_gap(additive) < 0.03 and worst_gap(linear) > 2 * worst_gap(additive)
    q = additive.probability(fresh.x)
    assert q[slope == 0].mean() > 0.9 and q[slope == 4].mean() < 0.4


def test_an_additive_model_is_data_read_back_exactly_and_evaluated_with_numpy(tmp_path):
    """The knots are kept in the JSON (format /2), the model read back gives the same probabilities to the bit, and a
    file whose knots do not match its weights, or whose splines name no feature, is refused; a linear model (format
    /1, the calibrators shipped before) still reads."""
    from core.digitize.rules.confidence_model import FORMAT, FORMAT_SPLINES

    samples, _ = _steep_samples(np.random.default_rng(23), 3000)
    m = fit(samples, {"note": "test"}, splines=("log_slope", "neighbour"))
    m.save(tmp_path / "c.json")
    d = json.loads((tmp_path / "c.json").read_text())
    assert d["format"] == FORMAT_SPLINES and set(d["splines"]) == {"log_slope", "neighbour"}
    assert len(d["coef"]) == len(m.terms) > len(m.features)
    back = ConfidenceModel.load(tmp_path / "c.json")
    assert np.array_equal(back.probability(samples.x), m.probability(samples.x))
    assert back.terms == m.terms and back.about["note"] == "test"
    with pytest.raises(ValueError, match="one value per feature"):
        ConfidenceModel.from_dict({**d, "splines": {**d["splines"], "log_slope": d["splines"]["log_slope"][1:]}})
    with pytest.raises(ValueError, match="name its features"):
        ConfidenceModel.from_dict({**d, "splines": {**d["splines"], "slope_squared": d["splines"]["log_slope"]}})
    linear = fit(samples, splines=())
    assert linear.as_dict()["format"] == FORMAT and "splines" not in linear.as_dict()
    assert np.array_equal(ConfidenceModel.from_dict(linear.as_dict()).probability(samples.x),
                          linear.probability(samples.x))
    shifted = with_shift(m, "wrap_open", -1.0)  # a 0/1 feature's term found among the spline's
    assert shifted.splines.keys() == m.splines.keys()
    kept = with_caps(m, samples)  # the caps measured again, the splines and weights kept
    assert np.array_equal(kept.probability(samples.x), m.probability(samples.x))


def test_the_confidence_says_what_it_is_and_warns_when_the_network_is_not_the_one_it_was_fitted_on():
    """The shipped calibrator is fitted on one network's maps (its file names the digest): a read by that network
    writes a probability, a read by another (trained or adapted here) is told it is the fit applied to evidence it
    was not fitted on, and the classical tracer's or a mask's confidence is the capped evidence."""
    from core.digitize.rules.confidence_model import bundled_confidence, calibrator_for, confidence_basis
    from core.digitize.trace.params import TraceParams, model_params
    from core.model.bundled import BUNDLED_MODEL
    from core.model.model_io import model_digest

    shipped = bundled_confidence()
    fitted = shipped.about["network_sha256_16"]
    assert fitted == model_digest(BUNDLED_MODEL)  # the shipped pair matches: a refit or a new model updates both
    assert calibrator_for(model_params()) is shipped
    assert calibrator_for(TraceParams()) is None and calibrator_for(model_params(TraceParams(ink_checks=False))) is None
    basis, warning = confidence_basis(shipped, fitted)
    assert basis.startswith("probability within 5 % of the scale") and fitted in basis and warning is None
    basis, warning = confidence_basis(shipped, "0123456789abcdef")
    assert "not a probability measured for it" in basis and "0123456789abcdef" in warning and fitted in warning
    basis, warning = confidence_basis(None, fitted)
    assert "not a calibrated probability" in basis and warning is None


def test_a_pen_on_another_styles_stroke_reads_that_styles_ink_under_its_path():
    """``other_style``: the other line styles' evidence at the row the trace rounds to, within its track's rows; 0
    where the trace is NULL, off its track, or where no other style's ink lies under it."""
    rows, cols = 200, 60
    dashed, dotted = np.zeros((rows, cols), np.float32), np.zeros((rows, cols), np.float32)
    dashed[99:102, 10:20] = 0.8  # a dashed neighbour's stroke under the path over columns 10-19
    dotted[100, 30:35] = 0.3  # a dotted one's over 30-34
    dotted[140:150] = 0.9  # ... and its stroke elsewhere, not under the path
    pos = np.full(cols, 100.2)
    pos[12] = np.nan  # NULL
    pos[50:] = 170.0  # off the track's rows (40-160)
    dashed[170, 50:] = 0.9
    other = ink_at_path([dashed, dotted], pos, 40, 160)
    want = np.zeros(cols, np.float32)
    want[10:20], want[12], want[30:35] = 0.8, 0.0, 0.3
    np.testing.assert_array_equal(other, want)
    np.testing.assert_array_equal(ink_at_path([], pos, 40, 160), np.zeros(cols, np.float32))
    spec = CurveSpec("NPHI", "v/v", "", 3, (40.0, 160.0), (0.45, -0.15))
    tr = Trace("NPHI", pos, np.zeros(cols, np.int64), np.ones(cols, np.float32), np.isfinite(pos))
    s = trace_signals(tr, spec, [], [], np.zeros(cols, np.float32), np.zeros(cols, bool), None, 24, 3.0, other)
    np.testing.assert_array_equal(s["other_style"], want)
    x, names = design(s, 3, False, False)
    assert np.array_equal(x[:, names.index("other_style_seen")], (want >= OTHER_STYLE_SEEN).astype(float))
    alone = trace_signals(tr, spec, [], [], np.zeros(cols, np.float32), np.zeros(cols, bool), None, 24, 3.0)
    assert not alone["other_style"].any()  # no other style in the track: none under the path


def test_the_pen_pattern_under_the_path_reads_a_solid_trace_on_a_dashed_stroke_as_broken():
    """``duty``: per column, the share of the path's still columns around it (``DUTY_COLS``) whose pixel, or one either
    side, is ink; ``curve_duty`` that share over the whole log. A solid pen's trace that runs onto a dashed stroke
    (dashes 6 px, gaps 10) reads a low duty there and 1 on its own stroke, and the design's ``pattern_mismatch`` is
    raised on the dashed stretch alone; a steep stretch is left out (the stroke's own pixels would hide its gaps); no
    ink map, or too few still columns, reads 1."""
    from core.digitize.rules.pen_pattern import inked_columns

    rows, cols = 120, 600
    ink = np.zeros((rows, cols), np.uint8)
    ink[40, :450] = 255  # the solid pen's own stroke over columns 0-449 ...
    for c in range(450, cols, 16):  # ... its path then on a dashed neighbour's stroke at row 80
        ink[80, c : c + 6] = 255
    pos = np.where(np.arange(cols) < 450, 40.0, 80.0)
    pos[448:452] = [50.0, 60.0, 70.0, 80.0]  # the move across: steep columns
    pos[580:590] = np.nan  # NULL
    local, whole = ink_duty(pos, ink)
    assert np.all(local[: 450 - DUTY_COLS // 2 - 2] == 1.0)  # on its own unbroken stroke
    dashed = local[452 + DUTY_COLS // 2 : 570]
    assert np.all(dashed > 0.3) and np.all(dashed < 0.45)  # 6 of every 16 columns inked
    assert 0.8 < whole < 0.9  # a quarter of the log on the dashed stroke
    np.testing.assert_array_equal(ink_duty(pos + 1.0, ink)[0], local)  # a path a pixel off its stroke still reads it
    still, inked = inked_columns(pos, ink)
    assert not still[447:452].any() and not inked[447:452].any()  # the move across: no column of it counted
    assert not still[580:590].any()  # nor a NULL one
    assert ink_duty(pos, None) == (pytest.approx(np.ones(cols)), 1.0)
    short = np.full(cols, np.nan)
    short[:40] = 40.0
    np.testing.assert_array_equal(ink_duty(short, ink)[0], np.ones(cols))  # 40 still columns: too few to tell
    spec = CurveSpec("RD", "ohmm", "", 1, (0.0, 119.0), (0.2, 2000.0))
    tr = Trace("RD", pos, np.zeros(cols, np.int64), np.ones(cols, np.float32), np.isfinite(pos))
    s = trace_signals(tr, spec, [], [], np.zeros(cols, np.float32), np.zeros(cols, bool), None, 24, 3.0, None,
                      (local, whole))
    np.testing.assert_array_equal(s["duty"], local)
    assert np.all(s["curve_duty"] == np.float32(whole))
    x, names = design(s, 1, False, False)
    mismatch = x[:, names.index("pattern_mismatch")] > 0.5
    assert mismatch[452 + DUTY_COLS // 2 : 570].all() and not mismatch[:440].any()
    alone = trace_signals(tr, spec, [], [], np.zeros(cols, np.float32), np.zeros(cols, bool), None, 24, 3.0)
    assert np.all(alone["duty"] == 1.0) and np.all(alone["curve_duty"] == 1.0)  # no ink map: no gap seen
    assert not design(alone, 1, False, False)[0][:, names.index("pattern_mismatch")].any()


def _strata_samples(rng, n=30000):
    """Cases right with probability sigmoid(6·strength − 3) where no other style's ink lies under the path; where it
    does (a third of them), a flatter curve, sigmoid(3·strength − 1): surer than the rest at a weak score, less sure
    at a strong one. A weight cannot say both; a map of its own can."""
    s = _signals(n, rng)
    s.update({k: np.zeros(n, np.float32) for k in PASS_FLAGS})
    s["other_style"] = np.where(np.arange(n) % 3 == 0, 0.5, 0.0).astype(np.float32)
    s["rival"] = np.zeros(n, np.float32)
    x, names = design(s, 1, False, False)
    seen = s["other_style"] > 0
    z = np.where(seen, 3 * s["strength"] - 1, 6 * s["strength"] - 3)
    return Samples(x, rng.random(n) < 1 / (1 + np.exp(-z)), np.repeat(np.array(["a", "b", "c"]), n // 3), names), seen


def test_another_styles_ink_under_the_path_reads_the_score_through_its_own_map(tmp_path):
    """``STRATA_FEATURES``: the flag has no weight in the regression; the values it raises read the score through an
    isotonic map fitted on them alone, the rest through the map of all (as before); the file says so in its format
    (an earlier reader refuses it), and a caps-only or shifted model keeps the map."""
    samples, seen = _strata_samples(np.random.default_rng(21))
    m = fit(samples)
    k = m.features.index("other_style_seen")
    assert m.coef[m.terms.index("other_style_seen")] == 0.0 and set(m.strata) == {"other_style_seen"}
    assert m.about["strata_raised"] == {"other_style_seen": int(seen.sum()), "pattern_mismatch": 0}
    strong = samples.x[:, samples.features.index("strength")] > 0.9
    p = m.probability(samples.x)
    weak = samples.x[:, samples.features.index("strength")] < 0.3
    assert p[seen & strong].mean() < p[~seen & strong].mean() - 0.03  # less sure where the other ink lies under it
    assert p[seen & weak].mean() > p[~seen & weak].mean() + 0.03  # ... and surer at a weak score
    for sel in (seen & strong, seen & weak):  # ... as sure as it is right
        assert abs(p[sel].mean() - samples.right[sel].mean()) < 0.03
    without = samples.x.copy()
    without[:, k] = 0.0
    plain = m.probability(without)  # read through the map of all: what the regression alone says
    np.testing.assert_allclose(plain[~seen], p[~seen])
    m.save(tmp_path / "c.json")
    d = json.loads((tmp_path / "c.json").read_text())
    assert d["format"] == FORMAT_STRATA
    assert np.array_equal(ConfidenceModel.load(tmp_path / "c.json").probability(samples.x), p)
    with pytest.raises(ValueError, match="strata name its features"):
        ConfidenceModel.from_dict({**d, "strata": {"nothing": d["strata"]["other_style_seen"]}})
    assert with_caps(m, samples).strata.keys() == {"other_style_seen"}
    assert with_shift(m, "dotted", 0.5).strata.keys() == {"other_style_seen"}
    few = Samples(samples.x.copy(), samples.right, samples.group, samples.features)
    few.x[MIN_STRATUM - 1:, k] = 0.0  # raised on too few values for a map of their own: the map of all
    assert fit(few).strata == {} and fit(few).as_dict()["format"] == FORMAT_SPLINES
