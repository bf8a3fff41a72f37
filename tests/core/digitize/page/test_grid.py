"""Grid-aware evidence: a printed grid as dark as the curve never wins the trace, and a curve on a grid
line is still traced through it. The pages here are drawn by hand (not by the generator), in a print
style no model was trained on: a uniform, heavy grid with no heavier lines."""

import cv2
import numpy as np
import pytest

from core.digitize.job.pipeline import digitize
from core.digitize.output.metrics import compare_curve
from core.digitize.page.grid import clean_mask, detect_grid
from core.io.calibration import Calibration, CurveSpec
from core.model.bundled import BUNDLED_MODEL
from core.model.model_io import load_model

ROWS, COLS = 240, 1800  # canonical: rows across the track, columns along depth
TRACK = (20.0, 220.0)  # the track's pixel ends: value 0 at row 20, 100 at row 220
GRID_ROWS = np.arange(20, 221, 20)  # amplitude grid lines every tenth of the track, borders included
DEPTH_COLS = np.arange(0, COLS, 60)


def _calib() -> Calibration:
    spec = CurveSpec("GR", "GAPI", "Gamma ray", 1, TRACK, (0.0, 100.0))
    return Calibration(depth_axis="x", depth_unit="FT", depth_picks=[[0.0, 1000.0], [COLS - 1.0, 1000.0 + (COLS - 1) / 4]],
                       step=0.5, curves=[spec])


def _page(curve_rows: np.ndarray | None, grid_value: int = 25, grid_width: int = 3, pen: int = 3,
          grid_rows: np.ndarray = GRID_ROWS) -> np.ndarray:
    """Paper at 235, a grid as dark and as thick as the pen, and the curve (row per column) in ink at 25."""
    img = np.full((ROWS, COLS), 235, np.uint8)
    for r in grid_rows:
        cv2.line(img, (0, int(r)), (COLS - 1, int(r)), grid_value, grid_width)
    for c in DEPTH_COLS:
        cv2.line(img, (int(c), int(TRACK[0])), (int(c), int(TRACK[1])), grid_value, 1)
    if curve_rows is not None:
        pts = np.stack([np.arange(COLS), curve_rows], 1).round().astype(np.int32)
        cv2.polylines(img, [pts], False, 25, pen, cv2.LINE_AA)
    return img


def _wiggle(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.cumsum(rng.normal(0, 1, COLS))
    x = cv2.GaussianBlur(x.reshape(1, -1), (0, 0), 12).ravel()
    x = (x - x.min()) / np.ptp(x)
    return 45 + 150 * x  # rows 45..195, well inside the track


def _score(res, curve_rows: np.ndarray, calib: Calibration):
    spec = calib.curves[0]
    cols = calib.pixel_at(res.depth)
    truth = spec.value_at(np.interp(cols, np.arange(COLS), curve_rows))
    return compare_curve("GR", res.depth, res.values["GR"], truth, spec.value_range)


@pytest.fixture(scope="module")
def bundled():
    model, _ = load_model(BUNDLED_MODEL)
    return model


def test_the_grid_is_found_from_the_image():
    g = detect_grid(_page(_wiggle()), bands=[(18, 223)])
    rows = set(g.line_rows().tolist())
    for r in GRID_ROWS:  # every grid line and both borders, each at most a pen width and its edge wide
        assert rows & {r - 1, r, r + 1}, r
    assert not rows & set(range(50, 56)) and not rows & set(range(110, 116))  # between grid lines: none
    cols = set(g.line_cols().tolist())
    assert all(cols & {c - 1, c, c + 1} for c in DEPTH_COLS[1:-1])


@pytest.mark.parametrize("method", ["classical", "model"])
def test_a_grid_as_dark_and_thick_as_the_curve_is_not_traced(method, bundled):
    calib, rows = _calib(), _wiggle(1)
    model = bundled if method == "model" else None
    with_grid = _score(digitize(_page(rows), calib, model=model), rows, calib)
    assert with_grid.r > 0.97 and with_grid.rmse_pct < 3.0, with_grid
    assert with_grid.null_fraction < 0.02


@pytest.mark.parametrize("method", ["classical", "model"])
def test_a_grid_only_track_gives_nulls(method, bundled):
    res = digitize(_page(None), _calib(), model=bundled if method == "model" else None)
    assert np.isnan(res.values["GR"]).mean() > 0.98  # not a grid line read as a curve
    assert any("no evidence" in w for w in res.warnings)


def test_a_curve_lying_on_a_grid_line_for_a_stretch_is_traced_through_it(bundled):
    a, b = 700, 1000  # 300 columns exactly on the grid line at row 120, entered and left smoothly
    cols = np.arange(COLS)
    weight = np.minimum(np.clip((cols - (a - 120)) / 120.0, 0, 1), np.clip(((b + 120) - cols) / 120.0, 0, 1))
    rows = _wiggle(2) * (1 - weight) + 120.0 * weight
    calib = _calib()
    for model in (None, bundled):
        res = digitize(_page(rows), calib, model=model)
        at = calib.pixel_at(res.depth)
        vals = res.values["GR"][(at >= a) & (at <= b)]
        if model is None:  # the ink is there: the classical trace goes through the stretch
            assert np.isfinite(vals).mean() > 0.95, "the stretch on the grid line was left NULL"
        # whatever is traced there is the line the curve lies on (row 120 = GR 50), never another one
        assert np.isfinite(vals).any() and np.nanmax(np.abs(vals - 50.0)) < 2.5
        m = _score(res, rows, calib)
        assert m.r > 0.97, m


def test_prefill_mask_drops_grid_lines_and_keeps_crossings():
    rows = _wiggle(3)
    img = _page(rows)
    dark = img < 128
    cleaned = clean_mask(dark.astype(np.uint8), detect_grid(img)) > 0
    cols = np.arange(COLS)
    centre = np.clip(rows.round().astype(int), 0, ROWS - 1)
    near_curve = np.zeros_like(dark)
    near_curve[centre, cols] = True
    near_curve = cv2.dilate(near_curve.astype(np.uint8), np.ones((9, 9), np.uint8)) > 0
    inner_lines = np.zeros_like(dark)
    inner_lines[[r for r in GRID_ROWS if 40 < r < 200]] = True
    # grid lines away from the curve are gone
    assert cleaned[inner_lines & ~near_curve].mean() < 0.02
    # the curve stays: every pixel off the grid lines, and its crossings of them at more than ~27° (a
    # shallower crossing runs along the line for longer than the bridging reaches: it may lose the
    # line's own pixels, which the user paints back)
    dist = np.min(np.abs(centre[:, None] - GRID_ROWS[None, :]), axis=1)
    off = dist > 3
    assert cleaned[centre[off], cols[off]].mean() > 0.99
    steep = np.abs(np.gradient(rows)) > 0.5  # px across per column
    crossing = (dist <= 1) & steep
    assert crossing.sum() > 5 and cleaned[centre[crossing], cols[crossing]].mean() > 0.95



def _generated(family: str, index: int):
    from core.evaluation.styles import family_logs

    return list(family_logs(family, index + 1, 1600, 480))[index]


def _null_share(lg, res, mnemonic: str) -> float:
    spec = next(c for c in lg.calibration.curves if c.mnemonic == mnemonic)
    pred = np.interp(lg.depth, res.depth, res.values[mnemonic], left=np.nan, right=np.nan)
    return compare_curve(mnemonic, lg.depth, pred, lg.truth[mnemonic], spec.value_range)


def test_a_flat_curve_the_grid_reading_takes_for_a_line_is_read_by_a_model(bundled):
    """A neutron curve lying still between two ruled lines and a caliper in gauge lying on one: straight over
    most of the log, so the grid reading finds each as a line along depth. The neutron is off the ruling's
    pitch (``riding.printed_lines``); the caliper's ink wobbles as no ruled line does
    (``still_curves._wobble``). Both are read, not written NULL. (CALI's NULL share is 5.0 % on the 2-core EPYC: the bound leaves the margin
    another CPU's arithmetic needs, where 0.0504 was met against a bound of 0.05.)"""
    lg = _generated("classic", 2)
    res = digitize(lg.image, lg.calibration, model=bundled, source=lg.name)
    m = _null_share(lg, res, "NPHI")
    assert m.null_fraction < 0.05 and m.r > 0.99, m
    m = _null_share(lg, res, "CALI")
    assert m.null_fraction < 0.08 and m.r > 0.99, m


def test_a_densely_ruled_track_is_not_damped_out(bundled):
    """A dark_grid print whose first track is ruled with 2-px lines every 3-4 px: no row of it is off
    the grid. Damping every row alike moved no path and only hid both curves of the track, which were
    written NULL from end to end (the model's mask of them was clean)."""
    lg = _generated("dark_grid", 5)
    canon_rows = lg.image.shape[0]  # depth runs along x: rows are across the tracks
    spec = lg.calibration.curves[0]
    g = detect_grid(lg.image, bands=[(int(spec.track_lo), int(spec.track_hi) + 1)])
    band = slice(int(spec.track_lo), int(spec.track_hi) + 1)
    assert canon_rows == 480 and (g.map(band) >= 0.5).mean() > 0.95  # the ruling is found as lines ...
    # ... and, with no row free, the damping tells no row from another (the depth lines still damp columns)
    assert np.ptp(g.damping(band), axis=0).max() < 1e-6
    res = digitize(lg.image, lg.calibration, model=bundled, source=lg.name)
    for name in ("PEF", "GR"):
        m = _null_share(lg, res, name)
        assert m.null_fraction < 0.3 and m.r > 0.95, m


def test_a_grid_with_free_rows_is_damped_in_full():
    g = detect_grid(_page(_wiggle(4)), bands=[(18, 223)])
    damping = g.damping(slice(20, 221))
    assert damping[GRID_ROWS[3] - 20].max() == pytest.approx(0.15, abs=0.01)  # on a line: the floor
    assert np.median(damping[50 - 20]) == pytest.approx(1.0)  # between lines: untouched off the depth lines


def test_a_curve_lying_nearly_still_is_not_taken_for_a_grid_line_but_a_bunch_of_ruled_lines_is(monkeypatch):
    """A tension curve wandering a few rows about one place (the KGS sonic log's LTEN) is dark in more than a
    third of the columns of its rows, as a ruled line is; it wanders across its band, so it is released.
    A decade's bunched 7-10 lines, a solid band of ruled rows, stay grid."""
    import core.digitize.page.still_curves as still_curves

    rng = np.random.default_rng(4)
    still = 150 + 3.5 * np.sin(np.arange(COLS) / 25.0) + rng.normal(0, 0.4, COLS)
    img = _page(_wiggle(), grid_rows=np.array([20, 60, 220]))
    pts = np.stack([np.arange(COLS), still], 1).round().astype(np.int32)
    cv2.polylines(img, [pts], False, 25, 2, cv2.LINE_AA)
    for r in (95, 98, 100, 102):  # the 7, 8, 9 and 10 lines of a narrow decade
        cv2.line(img, (0, r), (COLS - 1, r), 25, 1)
    rows = set(detect_grid(img, bands=[(18, 223)]).line_rows().tolist())
    assert not rows & set(range(145, 156))
    assert {95, 98, 100, 102} <= rows and all(rows & {r - 1, r, r + 1} for r in (20, 60, 220))
    # without the release: the curve's band reads as grid
    monkeypatch.setattr(still_curves, "STILL_CURVE_FILL", 0.0)
    monkeypatch.setattr(still_curves, "STILL_CURVE_WOBBLE_PX", np.inf)
    assert set(detect_grid(img, bands=[(18, 223)]).line_rows().tolist()) & set(range(145, 156))


@pytest.mark.parametrize("one_bit", [False, True])
def test_a_curve_lying_very_still_is_told_from_a_ruled_line_by_its_wobble(monkeypatch, one_bit):
    """A resistivity varying by a few per cent on a four-decade track moves a pixel or two over the whole log
    and fills its band as a ruled line does (the foreign colour page's PR: 98 % NULL, taken for a grid line).
    Its ink wobbles about a straight line; a ruled line's does not, on a skewed scan (a line drifting 4 rows
    across the window) and thresholded to 1 bit too, nor does a track's border, whatever touches it."""
    import core.digitize.page.still_curves as still_curves

    rng = np.random.default_rng(7)
    still = 150 + np.convolve(rng.normal(0, 1.2, COLS), np.ones(25) / 25 * 2, "same")
    img = _page(None, grid_rows=np.array([20, 220]))
    cv2.line(img, (0, 100), (COLS - 1, 104), 25, 2, cv2.LINE_AA)  # a ruled line on a skewed scan
    pts = np.stack([np.arange(COLS), still], 1).round().astype(np.int32)
    cv2.polylines(img, [pts], False, 25, 3, cv2.LINE_AA)
    if one_bit:
        img = np.where(img < 128, 0, 255).astype(np.uint8)
    assert np.ptp(np.round(still)) <= 4  # lies very still
    rows = set(detect_grid(img, bands=[(18, 223)]).line_rows().tolist())
    assert not rows & set(range(145, 156))
    assert rows & {101, 102, 103} and rows & {19, 20, 21} and rows & {219, 220, 221}
    monkeypatch.setattr(still_curves, "STILL_CURVE_WOBBLE_PX", np.inf)  # without the wobble test: taken for a line
    assert set(detect_grid(img, bands=[(18, 223)]).line_rows().tolist()) & set(range(145, 156))
