"""A dotted pen the network reads as dashed (the foreign hard prints: its dotted map empty over the track, its strokes
in the dashed map beside the dashed curve's) is read from the dashed map, and which stroke is which pen is decided
by the marks in the ink (``core/digitize/rules/borrowed_map.py``); where the marks are of like length the values
are doubted (``pen_naming``)."""

from dataclasses import replace

import numpy as np

from core.digitize.rules.all_curves import trace_all
from core.digitize.rules.borrowed_map import CLEAR_RATIO, pattern, pen_order
from core.digitize.rules.passes import flagged
from core.digitize.trace.params import model_params
from core.io.calibration import Calibration, CurveSpec

COLS, ROWS = 1600, 300


def _draw(ev: np.ndarray, line: np.ndarray, value: float, cols: np.ndarray) -> None:
    r = np.rint(line[cols]).astype(int)
    for d in (-1, 0, 1):
        ev[np.clip(r + d, 0, ev.shape[0] - 1), cols] = value


def _pen(on: int, off: int) -> np.ndarray:
    """The columns a broken pen inks: ``on`` columns, then ``off`` of paper."""
    c = np.arange(COLS)
    return c[(c % (on + off)) < on]


def _two_pens(dotted_ink=(2, 3), dashed_ink=(14, 6)):
    c = np.arange(COLS)
    gr = 80 + 30 * np.sin(c / 70)  # the dashed curve
    nphi = 200 + 30 * np.sin(c / 55 + 1.0)  # the dotted one, apart from it
    ink = np.zeros((ROWS, COLS), np.uint8)
    _draw(ink, gr, 255, _pen(*dashed_ink))
    _draw(ink, nphi, 255, _pen(*dotted_ink))
    dashed = np.zeros((ROWS, COLS), np.float32)  # the network reads both pens as dashed, all along their lines
    _draw(dashed, gr, 0.9, c)
    _draw(dashed, nphi, 0.9, c)
    specs = [CurveSpec("GR", "API", "", 2, (0.0, ROWS - 1.0), (0.0, 150.0)),
             CurveSpec("NPHI", "V/V", "", 3, (0.0, ROWS - 1.0), (0.45, -0.15))]
    calib = Calibration("x", "FT", [[0.0, 0.0], [COLS - 1.0, (COLS - 1) / 4]], 0.25, specs)
    maps = {1: np.zeros_like(dashed), 2: dashed, 3: np.zeros_like(dashed)}
    return maps, calib, ink, gr, nphi


def test_marks_and_gaps_tell_a_dotted_pen_from_a_dashed_one():
    line = np.full(COLS, 100.0)
    ink = np.zeros((ROWS, COLS), np.uint8)
    _draw(ink, line, 255, _pen(2, 4))
    mark, gap, n = pattern(line, ink)
    assert abs(mark - 2.0) < 0.1 and abs(gap - 4.0) < 0.1 and n > 200
    dotted = mark * gap
    ink[:] = 0
    _draw(ink, line, 255, _pen(14, 6))
    mark, gap, _ = pattern(line, ink)
    assert abs(mark - 14.0) < 0.5 and abs(gap - 6.0) < 0.5
    dashed = mark * gap
    assert pen_order([dashed, dotted], [80, 260], 3) == (1, True)  # the dotted pen: the finer pattern
    assert pen_order([dashed, dotted], [80, 260], 2) == (0, True)
    # patterns of like size: named, but not clearly; too few marks to read: not clearly either
    assert pen_order([dotted * CLEAR_RATIO * 0.9, dotted], [200, 260], 3) == (1, False)
    assert pen_order([dashed, dotted], [10, 260], 3) == (1, False)


def test_a_dotted_curve_read_as_dashed_is_read_from_the_dashed_map():
    maps, calib, ink, gr, nphi = _two_pens()
    traces = trace_all(maps, calib, model_params(), ink=ink)
    t_gr, t_nphi = traces
    assert np.isfinite(t_nphi.position).mean() > 0.95  # was NULL: its own map is empty
    assert np.nanmedian(np.abs(t_nphi.position - nphi)) < 2
    assert np.nanmedian(np.abs(t_gr.position - gr)) < 2
    assert flagged(t_nphi.flags, "borrowed_map")[np.isfinite(t_nphi.position)].all()
    assert not flagged(t_gr.flags, "borrowed_map").any() and not flagged(t_nphi.flags, "pen_naming").any()
    assert np.median(t_gr.signals["rival"]) < 0.1  # named by the marks: the dotted stroke is the dotted curve's
    # its signals read the map it followed: the strokes it was seen on, and that map is no other style's to it
    assert t_nphi.signals["strength"][np.isfinite(t_nphi.position)].mean() > 0.5
    assert not t_nphi.signals["other_style"].any() and t_nphi.signals["borrowed_map"].mean() > 0.95
    # switched off by name, the dotted curve follows its own (empty) map: NULL
    off = trace_all(maps, calib, replace(model_params(), passes_off=frozenset({"borrowed_map"})), ink=ink)
    assert np.isnan(off[1].position).mean() > 0.95


def test_marks_that_do_not_name_the_pens_doubt_them():
    """The dashed curve's strokes drawn short and the dotted curve's long, or both alike: the traces stay where the
    maps put them, and every value of both is doubted (``pen_naming``)."""
    for dotted_ink, dashed_ink in (((14, 6), (2, 3)), ((6, 4), (7, 4))):
        maps, calib, ink, gr, nphi = _two_pens(dotted_ink=dotted_ink, dashed_ink=dashed_ink)
        t_gr, t_nphi = trace_all(maps, calib, model_params(), ink=ink)
        assert np.nanmedian(np.abs(t_nphi.position - nphi)) < 2
        for t in (t_gr, t_nphi):
            assert flagged(t.flags, "pen_naming")[np.isfinite(t.position)].all()
            # either could be on the other's stroke: that stroke is each one's rival, as it was the dashed curve's
            assert np.median(t.signals["rival"]) > 0.5
        # switched off by name: no doubt, and the strokes are each other's explanation
        off = trace_all(maps, calib, replace(model_params(), passes_off=frozenset({"pen_naming"})), ink=ink)
        for t in off:
            assert not flagged(t.flags, "pen_naming").any() and np.median(t.signals["rival"]) < 0.1


def test_a_curve_its_own_map_sees_is_left_alone():
    """The network reads both pens as they are: the pass does not fire (every trace as without it)."""
    maps, calib, ink, gr, nphi = _two_pens()
    dotted = np.zeros_like(maps[2])
    c = np.arange(COLS)
    _draw(dotted, nphi, 0.9, c)
    _draw(maps[2], nphi, 0.0, c)
    maps[3] = dotted
    on = trace_all(maps, calib, model_params(), ink=ink)
    off = trace_all(maps, calib, replace(model_params(), passes_off=frozenset({"borrowed_map"})), ink=ink)
    for a, b in zip(on, off):
        assert np.array_equal(a.position, b.position, equal_nan=True) and np.array_equal(a.flags, b.flags)


def test_pens_read_from_one_map_are_written_no_surer_than_a_coin_and_named_in_a_warning():
    """Which stroke is which pen the maps cannot say: the shipped calibrator caps the values of a curve read from the
    other pen's map, and of pens the marks do not name, at a coin's 0.5 (``confidence_model.DECISION_FLAGS``; on the
    simulated confusion such values were right 44-50 % of the time, docs/accuracy.md, #60's twentieth round), and the
    run names them, a track at a time, so the user checks them and swaps where needed."""
    from core.digitize.job.reading_warnings import unnamed_pens

    maps, calib, ink, _, _ = _two_pens()  # the marks name the pens
    traces = trace_all(maps, calib, model_params(), ink=ink)
    seen = np.isfinite(traces[1].position)
    assert traces[1].confidence[seen].max() <= 0.5 and traces[0].confidence.max() > 0.5
    assert unnamed_pens(traces, calib) == ["NPHI: read from the other broken pen's map (the network names its pen as "
                                            "the other): check the QC picture"]
    maps, calib, ink, _, _ = _two_pens(dotted_ink=(6, 4), dashed_ink=(7, 4))  # marks alike: not named
    traces = trace_all(maps, calib, model_params(), ink=ink)
    for t in traces:
        assert t.confidence[np.isfinite(t.position)].max() <= 0.5
    said = unnamed_pens(traces, calib)
    assert len(said) == 1 and said[0].startswith("GR and NPHI: read from one line style's map")
    assert "Swap curves over a range" in said[0]
