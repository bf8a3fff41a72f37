"""Same-style curves keep their identity through a crossing; the user's swap over a depth range."""

import numpy as np
import pytest

from core.digitize.page.grid import Grid
from core.digitize.rules.all_curves import trace_all
from core.digitize.trace.crossings import swap_range
from core.io.calibration import Calibration, CurveSpec

COLS, ROWS = 1200, 200


def _x_crossing():
    """Two solid lines of one style crossing in an X (and a bounce would look just as cheap)."""
    ev = np.zeros((ROWS, COLS), np.float32)
    c = np.arange(COLS)
    a = 30 + 140 * c / (COLS - 1) + 6 * np.sin(c / 40)  # rises across the track
    b = 170 - 140 * c / (COLS - 1) + 6 * np.cos(c / 55)  # falls across it
    for line in (a, b):
        r = np.rint(line).astype(int)
        for d in (-1, 0, 1):
            ev[np.clip(r + d, 0, ROWS - 1), c] = 1.0
    specs = [CurveSpec("ILD", "OHMM", "", 1, (0.0, ROWS - 1.0), (0.0, 100.0)),
             CurveSpec("ILM", "OHMM", "", 1, (0.0, ROWS - 1.0), (0.0, 100.0))]
    calib = Calibration("x", "FT", [[0.0, 0.0], [COLS - 1.0, (COLS - 1) / 4]], 0.25, specs)
    return ev, calib, a, b


def test_same_style_curves_keep_their_identity_through_a_crossing():
    ev, calib, a, b = _x_crossing()
    traces = trace_all({1: ev, 2: np.zeros_like(ev), 3: np.zeros_like(ev)}, calib)
    # the first curve listed is the one nearer track[0] (row 0) at the top of the log: line a
    for tr, truth in zip(traces, (a, b)):
        ok = np.isfinite(tr.position)
        assert ok.mean() > 0.95
        assert np.median(np.abs(tr.position[ok] - truth[ok])) < 1.5
        assert np.abs(tr.position[ok] - truth[ok]).max() < 12  # no stretch on the other line


def test_swap_range_exchanges_values_between_two_depths_only():
    depth = np.arange(1000.0, 1010.0, 0.5)
    vals = {"A": np.arange(depth.size, dtype=float), "B": -np.arange(depth.size, dtype=float)}
    n = swap_range(vals, "A", "B", depth, 1006.0, 1002.0)  # either order
    sel = (depth >= 1002) & (depth <= 1006)
    assert n == sel.sum() == 9
    assert np.array_equal(vals["A"][sel], -np.flatnonzero(sel).astype(float))
    assert np.array_equal(vals["A"][~sel], np.flatnonzero(~sel).astype(float))
    for args, why in ((("A", "C", depth, 1001, 1002), "no curve 'C'"), (("A", "A", depth, 1001, 1002), "two different"),
                      (("A", "B", depth, 2000, 2100), "outside the log")):
        with pytest.raises(ValueError, match=why):
            swap_range(vals, *args)


def test_two_dashed_curves_of_one_style_are_traced_on_two_lines_not_one():
    """Two dashed curves in one track that stay apart: the joint tracer puts one trace on each (traced one at
    a time, both followed the stronger line wherever its dashes were denser)."""
    ev = np.zeros((ROWS, COLS), np.float32)
    c = np.arange(COLS)
    a = 60 + 25 * np.sin(c / 70)
    b = 140 + 25 * np.cos(c / 90)
    for line, period, phase in ((a, 14, 0), (b, 11, 5)):
        on = ((c + phase) % period) < period * 0.6  # dashes
        r = np.rint(line).astype(int)
        for d in (-1, 0, 1):
            ev[np.clip(r + d, 0, ROWS - 1)[on], c[on]] = 1.0
    specs = [CurveSpec("SP", "MV", "", 2, (0.0, ROWS - 1.0), (0.0, 100.0)),
             CurveSpec("CALI", "IN", "", 2, (0.0, ROWS - 1.0), (0.0, 100.0))]
    calib = Calibration("x", "FT", [[0.0, 0.0], [COLS - 1.0, (COLS - 1) / 4]], 0.25, specs)
    traces = trace_all({1: np.zeros_like(ev), 2: ev, 3: np.zeros_like(ev)}, calib)
    for tr, truth in zip(traces, (a, b)):  # named from the track[0] side at the top: a first
        ok = np.isfinite(tr.position)
        assert ok.mean() > 0.95
        assert np.percentile(np.abs(tr.position[ok] - truth[ok]), 95) < 3.0


def test_same_style_curve_lying_on_a_grid_line_is_traced_there_not_onto_its_neighbour():
    """One solid curve runs exactly on an amplitude grid line for a third of the log, depth lines cross both
    every 50 columns. Grid damping weighs the runs but does not remove them: the curve on the line is traced
    on it (before, its damped run fell under the ink threshold and both traces rode the other curve)."""
    ev = np.zeros((ROWS, COLS), np.float32)
    c = np.arange(COLS)
    a = np.where(c < 400, 40.0, 40 + 20 * np.sin((c - 400) / 60))
    b = 140 + 25 * np.cos(c / 90)
    for line in (a, b):
        r = np.rint(line).astype(int)
        for d in (-1, 0, 1):
            ev[np.clip(r + d, 0, ROWS - 1), c] = 1.0
    along = np.zeros((ROWS, 1), np.float32)
    along[38:43] = 1.0  # the grid line under curve a
    across = np.zeros((1, COLS), np.float32)
    across[0, ::50] = 1.0
    grid = Grid(along, np.array([0, COLS]), across, [(0, ROWS)])
    specs = [CurveSpec("ILD", "OHMM", "", 1, (0.0, ROWS - 1.0), (0.0, 100.0)),
             CurveSpec("ILM", "OHMM", "", 1, (0.0, ROWS - 1.0), (0.0, 100.0))]
    calib = Calibration("x", "FT", [[0.0, 0.0], [COLS - 1.0, (COLS - 1) / 4]], 0.25, specs)
    traces = trace_all({1: ev, 2: np.zeros_like(ev), 3: np.zeros_like(ev)}, calib, grid=grid)
    for tr, truth in zip(traces, (a, b)):
        ok = np.isfinite(tr.position)
        assert ok.mean() > 0.95
        assert np.percentile(np.abs(tr.position[ok] - truth[ok]), 95) < 3.0


def test_digitising_names_where_same_style_curves_meet():
    """Where two curves of one style meet, which is which afterwards is uncertain: the result says where."""
    from core.digitize.job.pipeline import digitize
    from core.synth import generate_log

    lg = generate_log(7, 1600, 384, "x", style="uniform", classes=(1, 1))
    res = digitize(lg.image, lg.calibration, mask=lg.mask)
    said = [w for w in res.warnings if "share one line style" in w]
    assert said and all("Swap curves over a range" in w and lg.calibration.depth_unit in w for w in said)
    # the named depths lie inside the log
    d0, d1 = sorted(lg.calibration.depth_at(np.array([0.0, 1599.0])))
    import re
    first = [float(x) for w in said for x in re.findall(r"\((\d+\.\d)", w)]
    assert first and all(d0 <= x <= d1 for x in first)


def test_eval_crossings_scores_every_pairing_from_true_masks(capsys):
    import json

    from core.cli.main import main
    from core.evaluation.crossings import PAIRINGS

    assert main(["eval-crossings", "--from-mask", "--count", "1", "--width", "600", "--height", "200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {r["pairing"]: r for r in out["pairings"]}
    assert set(rows) == {"+".join(map(str, p)) for p in PAIRINGS}
    for name in ("1+2", "1+3", "2+3"):  # distinct line styles trace from a true mask almost exactly
        assert rows[name]["median_r"] > 0.95 and rows[name]["median_rmse_pct"] < 3.0
    assert rows["1+1"]["separation"] is not None and rows["1+2"]["separation"] is None
    assert main(["eval-crossings", "--from-mask", "--style", "nope"]) == 2


def test_the_naming_rule_is_read_where_both_traces_are_seen_apart():
    """At the first column both are traced, one trace is only carried across a gap on the wrong side of the
    other (a window cut mid-log, a pen-down): the names follow the first columns where both are seen apart."""
    from core.digitize.trace.crossings import order_at_top
    from core.digitize.trace.params import Trace

    cols = 200
    near, far = np.full(cols, 20.0), np.full(cols, 150.0)
    seen = np.ones(cols, bool)
    carried = seen.copy()
    carried[:5] = False
    far_first = far.copy()
    far_first[:5] = 5.0  # carried on the track[0] side of the other for five columns
    traces = [Trace("B", far_first, np.zeros(cols, np.int64), np.ones(cols), carried),
              Trace("A", near.copy(), np.zeros(cols, np.int64), np.ones(cols), seen)]
    specs = [CurveSpec("ILD", "OHMM", "", 1, (0.0, 199.0), (0.0, 100.0)),
             CurveSpec("ILM", "OHMM", "", 1, (0.0, 199.0), (0.0, 100.0))]
    order_at_top(traces, specs)
    assert np.median(traces[0].position) == 20.0 and np.median(traces[1].position) == 150.0


def test_the_naming_rule_is_read_in_the_log_body_not_in_the_header_above_it():
    """A picture read whole (no sections): above the log body, a header's boxes and scale lines give the traces
    positions of their own. Named there, the KGS sonic and tension curves swapped for the whole log; named where
    the body starts (``start``), they follow the body. Where no column of the body has both, the header names."""
    from core.digitize.trace.crossings import order_at_top
    from core.digitize.trace.params import Trace

    cols, start = 300, 100
    left_then_right = np.where(np.arange(cols) < start, 20.0, 150.0)  # in the header near track[0]; in the body far
    right_then_left = np.where(np.arange(cols) < start, 150.0, 20.0)
    specs = [CurveSpec("DT", "US/F", "", 1, (0.0, 199.0), (140.0, 40.0)),
             CurveSpec("LTEN", "LB", "", 1, (0.0, 199.0), (15000.0, 0.0))]

    def traces():
        seen = np.ones(cols, bool)
        return [Trace("X", left_then_right.copy(), np.zeros(cols, np.int64), np.ones(cols), seen.copy()),
                Trace("Y", right_then_left.copy(), np.zeros(cols, np.int64), np.ones(cols), seen.copy())]

    header_named = traces()
    order_at_top(header_named, specs)
    assert header_named[0].position[start] == 150.0  # named in the header: DT takes the far line in the body
    body_named = traces()
    order_at_top(body_named, specs, start)
    assert body_named[0].position[start] == 20.0 and body_named[1].position[start] == 150.0
    gone = traces()
    gone[1].position[start:] = np.nan  # nothing of the second curve in the body: the header names
    order_at_top(gone, specs, start)
    assert np.nanmedian(gone[0].position[:start]) == 20.0


def _still_and_swinging(cols: int = 2000, seed: int = 0):
    """A tension-like line lying still and a sonic-like curve swinging, in one track 1,000 rows wide."""
    rng = np.random.default_rng(seed)
    return 900 + np.cumsum(rng.normal(0, 0.2, cols)), 500 + np.cumsum(rng.laplace(0, 2.0, cols))


def test_a_curve_taken_up_on_its_neighbours_stroke_is_given_back_its_own():
    """KGS shifted by a pixel: the tension lost under a depth label was taken up on the sonic's stroke and the sonic
    on the tension's line, for the rest of the log. Over the stretches between the loss and the log's end, where each
    curve was and how it moves say which is which, by a wide margin."""
    from core.digitize.trace.crossings import settle_identities

    still, swinging = _still_and_swinging()
    for cut in (800, 60):  # swapped mid-log, and just after the top where the naming rule read them
        pos = np.stack([still, swinging])
        pos[:, cut - 20 : cut] = np.nan
        pos[:, cut:] = pos[::-1, cut:]
        take, margin = settle_identities(pos, 1000.0)
        assert (take[:cut - 20] == [0, 1]).all() and (take[cut:] == [1, 0]).all(), cut
        assert margin[cut:].min() > 100


def test_two_alike_curves_that_meet_are_named_by_a_small_margin_after_the_meeting():
    from core.digitize.trace.crossings import IDENTITY_NATS, settle_identities

    rng = np.random.default_rng(1)
    cols = 2000
    a = 500 + np.cumsum(rng.laplace(0, 1.0, cols))
    b = a + np.concatenate([np.linspace(60, 0, 1000), np.linspace(0, 60, 1000)])  # meet at 1000 and part
    take, margin = settle_identities(np.stack([a, b]), 1000.0)
    assert np.isinf(margin[:900]).all()  # before the meeting: named at the top, nothing to decide
    assert margin[1100:].max() < 3 * IDENTITY_NATS  # after it: a bounce and a crossing are alike

