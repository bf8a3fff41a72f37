"""The trace keeps to its curve: no out-and-back excursions along a depth line or across the paper, while a
steep stroke drawn in ink is still followed; and the excursion count that ``eval-styles`` reports."""

import numpy as np

from core.digitize.evidence.style import UnclaimedStyles, unclaimed_styles
from core.digitize.output.metrics import excursions
from core.digitize.trace import path_search
from core.digitize.trace.params import TraceParams
from core.digitize.trace.path_search import travel_costs, viterbi_path
from core.io.calibration import CurveSpec


def _curve_with_a_faint_stretch_and_a_stronger_line_nearby():
    ev = np.full((200, 400), 0.002, np.float32)
    ev[49:52, :] = 0.9  # the curve, along depth at row 50
    ev[49:52, 150:180] = 0.25  # a faint stretch of it (a worn print, a thin pen)
    ev[148:152, 140:190] = 0.95  # another stroke 100 rows across: a grid line, another curve, a decade bunch
    return ev


def test_a_faint_stretch_does_not_send_the_trace_along_the_paper_to_another_line():
    ev = _curve_with_a_faint_stretch_and_a_stronger_line_nearby()
    flat, _ = viterbi_path(ev, TraceParams(gap_jump_cost=0.04), cyclic=False)  # the first tracer: 0.04 a row
    assert (np.abs(flat[150:180] - 50) > 50).all()  # it left and came back: an excursion, 100 rows out
    path, _ = viterbi_path(ev, TraceParams(), cyclic=False)
    assert np.abs(path - 50).max() <= 2


def test_a_steep_stroke_drawn_in_ink_is_followed():
    """A bed boundary: the curve moves 100 rows within two columns, and the ink covers the rows between."""
    ev = np.full((200, 300), 0.002, np.float32)
    ev[49:52, :150] = 0.9
    ev[50:151, 149:151] = 0.9  # the stroke across
    ev[149:152, 150:] = 0.9
    path, _ = viterbi_path(ev, TraceParams(), cyclic=False)
    assert np.abs(path[:148] - 50).max() <= 1 and np.abs(path[152:] - 150).max() <= 1
    # the same move with no ink between costs the paper rate, 0.25 a row against 0.04 along ink
    t = travel_costs(ev, TraceParams())
    assert t[150, 150] - t[50, 150] < 0.05 * 100 < 0.2 * 100 < t[150, 100] - t[50, 100]


def test_a_dashed_curve_s_steep_stretch_is_supported_by_its_dashes_nearby():
    ev = np.zeros((100, 20), np.float32)
    ev[10:90, 8] = 0.9  # one dash of the steep stretch, two columns away from where the path moves
    solid = travel_costs(ev, TraceParams())
    broken = travel_costs(ev, TraceParams().broken())
    assert broken[89, 10] - broken[10, 10] < 0.5 * (solid[89, 10] - solid[10, 10])


def test_travel_taken_a_block_of_columns_at_a_time_is_the_whole_map_s(monkeypatch):
    """The tracer turns and costs a block of columns at a time, not a tall track's whole map: the same costs,
    the same path."""
    rng = np.random.default_rng(0)
    ev = (rng.random((40, 700)) ** 4).astype(np.float32)
    for params in (TraceParams(), TraceParams().broken()):
        whole = travel_costs(ev, params)
        monkeypatch.setattr(path_search, "TRAVEL_BLOCK_COLS", 97)
        assert np.array_equal(travel_costs(ev, params), whole)
        monkeypatch.undo()
        for cyclic in (False, True):
            expected = viterbi_path(ev, params, cyclic)
            monkeypatch.setattr(path_search, "TRAVEL_BLOCK_COLS", 97)
            got = viterbi_path(ev, params, cyclic)
            monkeypatch.undo()
            assert all(np.array_equal(a, b) for a, b in zip(expected, got))


def test_excursions_are_out_and_back_departures_only():
    truth = np.full(500, 0.5)
    pred = truth.copy()
    pred[100:120] = 0.9  # out and back: one
    pred[300:310] = 0.55  # within 10 % of the track: none
    pred[400:] = 0.8  # leaves and never comes back: a misread, not an excursion
    assert excursions(pred, truth) == 1
    pred[200:205] = np.nan  # NULL neither starts nor ends one
    assert excursions(pred, truth) == 1
    pred[250:330] = 0.1  # off for 80 samples: longer than an excursion's 50
    assert excursions(pred, truth) == 1


def _spec(klass, track=(0.0, 100.0)):
    return CurveSpec(mnemonic=f"C{klass}", unit="", description="", klass=klass, track=track, scale=(0.0, 1.0))


def test_a_style_no_curve_of_the_track_is_drawn_in_joins_the_nearest_style():
    dashed, dotted, solid = _spec(2), _spec(3), _spec(1)
    assert unclaimed_styles(dashed, [dashed, solid]) == [(3, 1.0)]  # dotted is unclaimed: the dashed curve's
    assert unclaimed_styles(dashed, [dashed, dotted]) == []  # dotted is the dotted curve's own
    assert unclaimed_styles(solid, [solid, dashed]) == []  # "broken": solid never takes a broken pen's map
    assert sorted(unclaimed_styles(solid, [solid], UnclaimedStyles.ALL)) == [(2, 1.0), (3, 1.0)]
    other_track = _spec(3, (200.0, 300.0))
    assert unclaimed_styles(dashed, [dashed, other_track]) == [(3, 1.0)]
    assert unclaimed_styles(dashed, [dashed], UnclaimedStyles.NONE) == []


def test_a_dashed_curve_read_as_dotted_for_a_stretch_is_traced_through_it():
    """The network reads half of a dashed GR as dotted (log-decade prints, issue #32): with no dotted curve in
    the track, the dotted map is the dashed curve's too, and it is traced end to end, not half NULL."""
    from core.digitize.rules.all_curves import trace_all
    from core.digitize.trace.params import model_params
    from core.io.calibration import Calibration

    ev = {k: np.full((120, 600), 0.001, np.float32) for k in (1, 2, 3)}
    ev[2][59:62, :300] = 0.95
    ev[3][59:62, 300:] = 0.95
    spec = CurveSpec(mnemonic="GR", unit="GAPI", description="", klass=2, track=(10.0, 110.0), scale=(0.0, 150.0))
    calib = Calibration(depth_axis="x", depth_unit="FT", depth_picks=[[0.0, 1000.0], [599.0, 1119.8]], step=0.5,
                        curves=[spec])
    (trace,) = trace_all(ev, calib, model_params())
    assert np.isfinite(trace.position).all() and np.abs(trace.position - 60).max() <= 1
    (plain,) = trace_all(ev, calib, TraceParams())  # without: NULL where only the dotted map sees it
    assert np.isnan(plain.position[320:]).all()
