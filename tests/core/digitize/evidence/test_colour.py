"""Colour scans: kept through loading, ink colours in the calibration, colour as evidence of which curve."""

from __future__ import annotations

import json

import lasio
import numpy as np
import pytest
from PIL import Image

from core.cli.main import main
from core.common.errors import CalibrationError
from core.digitize.evidence.colour import colour_evidence
from core.digitize.job.pipeline import digitize
from core.digitize.output.metrics import compare_curve
from core.evaluation.crossings import crossing_logs
from core.io.calibration import Calibration
from core.io.colour import delta_e, hex_colour, parse_colour, sample_ink
from core.io.scan import load_scan
from core.synth import generate_log, write_log


def _page(tmp_path, mode: str, name: str = "c") -> tuple[str, np.ndarray]:
    """A white page with a red and a blue line, saved in ``mode``; returns the path and the RGB drawn."""
    rgb = np.full((200, 120, 3), 255, np.uint8)
    rgb[:, 40:42] = (210, 30, 30)
    rgb[:, 80:82] = (30, 60, 200)
    img = Image.fromarray(rgb, "RGB")
    path = tmp_path / f"{name}.{'tif' if mode == 'CMYK' else 'png'}"
    if mode == "P":
        img = img.quantize(8)
    elif mode == "RGBA":
        img = img.convert("RGBA")
        a = np.full((200, 120), 255, np.uint8)
        a[:, :20] = 0  # transparent margin: composited on white
        img.putalpha(Image.fromarray(a))
    elif mode == "CMYK":
        img = img.convert("CMYK")
    img.save(path)
    return str(path), rgb


@pytest.mark.parametrize("mode", ["RGB", "P", "RGBA", "CMYK"])
def test_colour_scans_keep_their_colour_and_load_the_same_grey(tmp_path, mode):
    path, drawn = _page(tmp_path, mode)
    scan = load_scan(path)
    assert scan.rgb is not None and scan.rgb.shape == (200, 120, 3)
    assert scan.display is scan.rgb
    assert delta_e(scan.rgb[100, 40], (210, 30, 30)) < 12 and delta_e(scan.rgb[100, 80], (30, 60, 200)) < 12
    assert (scan.rgb[:, :20] >= 250).all()  # transparency (RGBA) and paper are white
    grey = np.asarray(Image.fromarray(scan.rgb).convert("L"))
    assert np.array_equal(scan.image, grey)  # the network reads the luma Pillow gives


def test_a_grey_scan_stored_as_rgb_carries_no_colour(tmp_path):
    g = np.full((100, 60), 250, np.uint8)
    g[:, 30] = 20
    Image.fromarray(np.repeat(g[..., None], 3, 2), "RGB").save(tmp_path / "g.png")
    scan = load_scan(tmp_path / "g.png")
    assert scan.rgb is None and scan.display is scan.image and np.array_equal(scan.image, g)


def test_a_16_bit_rgb_tiff_keeps_its_hues_in_8_bits(tmp_path):
    tifffile = pytest.importorskip("tifffile")
    rgb = np.full((80, 50, 3), 60000, np.uint16)
    rgb[:, 20:22] = (60000, 4000, 4000)  # red
    tifffile.imwrite(tmp_path / "deep.tif", rgb, photometric="rgb")
    scan = load_scan(tmp_path / "deep.tif")
    assert scan.rgb is not None
    r, g, b = (int(v) for v in scan.rgb[40, 20])
    assert r > 200 and g < 40 and b < 40 and (scan.rgb[40, 40] > 225).all()


def test_ink_colour_in_the_calibration_round_trips_and_a_bad_one_is_named(tmp_path):
    log = generate_log(2, 800, 256, "x", style="colour")
    d = log.calibration.as_dict()
    assert all(parse_colour(c["colour"]) for c in d["curves"])  # the colour family names every ink
    assert Calibration.from_dict(json.loads(json.dumps(d))).curves[0].colour == d["curves"][0]["colour"]
    old = {**d, "curves": [{k: v for k, v in c.items() if k != "colour"} for c in d["curves"]]}
    assert Calibration.from_dict(old).curves[0].colour is None  # older files stay valid
    bad = {**d, "curves": [{**d["curves"][0], "colour": "#12345g"}] + d["curves"][1:]}
    with pytest.raises(CalibrationError, match=r"curves\[0\]\.colour"):
        Calibration.from_dict(bad)


def test_colour_evidence_tells_two_inks_apart_and_the_eyedropper_finds_the_ink(tmp_path):
    path, drawn = _page(tmp_path, "RGB")
    rgb = load_scan(path).rgb
    red = colour_evidence(rgb, (210, 30, 30))
    assert red[:, 40].min() > 0.9 and red[:, 80].max() < 0.05 and red[:, 10].max() < 0.05
    # a click beside the line, not on it, still picks its ink
    assert delta_e(sample_ink(rgb, 83.0, 50.0), (30, 60, 200)) < 5
    assert sample_ink(rgb, 10.0, 50.0) is None  # paper only
    assert sample_ink(rgb, 500.0, 50.0) is None  # outside the scan
    assert hex_colour((30, 60, 200)) == "#1e3cc8"


def test_crossing_solid_curves_of_different_inks_are_told_apart_by_colour():
    """Colour logs whose every track has 2–3 solid curves in distinct inks, crossing (classical evidence):
    traced with their colour and as grey scans. ``eval-crossings --style colour`` runs the full set."""
    with_colour, grey = [], []
    for pairing in ((1, 1), (1, 1, 1)):
        for lg in crossing_logs(pairing, 3, "colour", width=1200, height=320):
            for out, rgb in ((with_colour, lg.rgb), (grey, None)):
                res = digitize(lg.image, lg.calibration, rgb=rgb, source=lg.name)
                assert ("ink colour" in res.method) == (rgb is not None)
                for spec in lg.calibration.curves:
                    pred = np.interp(lg.depth, res.depth, res.values[spec.mnemonic], left=np.nan, right=np.nan)
                    r = compare_curve(spec.mnemonic, lg.depth, pred, lg.truth[spec.mnemonic], spec.value_range).r
                    out.append(r if np.isfinite(r) else 0.0)  # a curve written NULL throughout counts as unread
    assert np.median(with_colour) >= 0.97, np.median(with_colour)
    assert np.median(grey) < 0.8  # line style alone cannot say which solid curve is which


def test_a_colour_no_ink_matches_and_a_grey_scan_fall_back_to_line_style_with_a_warning():
    lg = next(crossing_logs((1, 1), 1, "colour", width=800, height=256))
    d = lg.calibration.as_dict()
    d["curves"][0]["colour"] = "#ffff00"  # yellow: printed nowhere
    res = digitize(lg.image, Calibration.from_dict(d), rgb=lg.rgb)
    name = d["curves"][0]["mnemonic"]
    assert any(w.startswith(f"{name}: no ink in its track matches its colour #ffff00") for w in res.warnings)
    assert np.isfinite(res.values[name]).mean() > 0.5  # traced by line style, not dropped
    res = digitize(lg.image, lg.calibration, rgb=None)
    assert any("the scan is greyscale" in w for w in res.warnings)


def test_digitize_cli_reads_a_colour_scan_and_its_ink_colours(tmp_path, capsys):
    lg = generate_log(4, 1200, 320, "y", style="colour", classes=(1, 1))
    write_log(tmp_path, lg)
    assert Image.open(tmp_path / f"{lg.name}.png").mode == "RGB"
    out = tmp_path / "out.las"
    assert main(["digitize", str(tmp_path / f"{lg.name}.png"), "--calib", str(tmp_path / f"{lg.name}.calib.json"),
                 "--classical", "--out", str(out)]) == 0
    las = lasio.read(str(out))
    assert "ink colour" in str(las.other)
    for spec in lg.calibration.curves:
        got = np.interp(lg.depth, las.index, las[spec.mnemonic])
        assert compare_curve(spec.mnemonic, lg.depth, got, lg.truth[spec.mnemonic], spec.value_range).r > 0.9
    # a malformed colour: exit 2, the field named, nothing written
    bad = json.loads((tmp_path / f"{lg.name}.calib.json").read_text())
    bad["curves"][1]["colour"] = "red"
    (tmp_path / "bad.calib.json").write_text(json.dumps(bad))
    capsys.readouterr()
    assert main(["digitize", str(tmp_path / f"{lg.name}.png"), "--calib", str(tmp_path / "bad.calib.json"),
                 "--classical", "--out", str(tmp_path / "bad.las")]) == 2
    assert "curves[1].colour" in capsys.readouterr().err and not (tmp_path / "bad.las").exists()


def test_grey_families_draw_no_colour_and_mixed_draws_only_grey():
    for style in ("mixed", "classic", "fax"):
        lg = generate_log(7, 800, 256, "x", style=style)
        assert lg.rgb is None and lg.meta["print_style"]["family"] != "colour"
        assert all(c.colour is None for c in lg.calibration.curves)
    lg = generate_log(7, 800, 256, "x", style="colour")
    assert lg.rgb is not None and lg.rgb.shape == lg.image.shape + (3,)
    assert np.array_equal(generate_log(7, 800, 256, "x", style="colour").rgb, lg.rgb)  # deterministic


def test_two_red_curves_in_edge_to_edge_tracks_keep_their_colour_evidence():
    """Tracks drawn border to border share a pixel: they are neighbours, not one track, so two curves of the
    same ink in them are no twins and each keeps its colour evidence (before: both fell back to line style)."""
    h, w = 1200, 300
    rgb = np.full((h, w, 3), 250, np.uint8)
    rows = np.arange(h)
    for lo, hi, period in ((0, 150, 90.0), (150, 299, 130.0)):
        x = (lo + (hi - lo) * (0.5 + 0.35 * np.sin(rows / period))).astype(int)
        for d in (0, 1):
            rgb[rows, np.clip(x + d, 0, w - 1)] = (200, 30, 30)
    rgb[:, ::25] = (170, 170, 170)  # a grey grid
    grey = np.asarray(Image.fromarray(rgb).convert("L"))
    cal = Calibration.from_dict({"version": 1, "depth_axis": "y", "depth_unit": "FT",
                                 "depth_picks": [[0, 1000.0], [h - 1, 1000.0 + (h - 1) / 10]], "step": 0.5,
                                 "curves": [{"mnemonic": "RES", "class": 1, "track": [0, 150], "scale": [0, 1],
                                             "colour": "#c81e1e"},
                                            {"mnemonic": "POR", "class": 1, "track": [150, 299], "scale": [0, 1],
                                             "colour": "#c81e1e"}]})
    assert not cal.curves[0].shares_track_with(cal.curves[1])
    res = digitize(grey, cal, rgb=rgb)
    assert not any("is the colour of" in w for w in res.warnings), res.warnings
    assert "ink colour" in res.method
    overlapping = Calibration.from_dict({**cal.as_dict(), "curves": [
        {**cal.curves[0].as_dict(), "track": [0, 160]}, {**cal.curves[1].as_dict(), "track": [150, 299]}]})
    assert overlapping.curves[0].shares_track_with(overlapping.curves[1])


def _one_pass(rgb, ink, paper, sigma=18.0):
    """The colour evidence as one pass over the whole band scored it before it was scored a few rows at a time."""
    from core.io.colour import lab_of, to_lab

    lab = to_lab(rgb)
    p, k = lab_of(paper), lab_of(ink)
    d = p - k
    dd = float(d @ d)
    off = p - lab
    alpha = np.clip((off @ d) / dd, 0.0, 1.0)
    resid = off - alpha[..., None] * d
    expected_ab = p[1:] - alpha[..., None] * d[1:]
    norm = np.linalg.norm(expected_ab, axis=-1, keepdims=True)
    outward = np.where(norm > 1e-3, expected_ab / np.maximum(norm, 1e-3), 0.0)
    loss = np.maximum(np.einsum("...c,...c->...", resid[..., 1:], outward), 0.0)
    mismatch2 = np.einsum("...c,...c->...", resid, resid) - loss**2 * (1.0 - (1.0 / 3.0) ** 2)
    coverage = np.minimum(alpha / 0.6, 1.0)
    return (coverage * np.exp(-mismatch2 / sigma**2)).astype(np.float32)


def _inked_band(rows: int, cols: int, seed: int = 3) -> np.ndarray:
    """Paper with noise, a red and a blue wandering stroke, JPEG-like smear: every branch of the scoring taken."""
    rng = np.random.default_rng(seed)
    rgb = np.clip(rng.normal(238, 9, (rows, cols, 3)), 0, 255)
    x = np.arange(cols)
    for ink, centre in (((200, 35, 40), rows * 0.3), ((40, 60, 190), rows * 0.7)):
        r = np.clip(np.rint(centre + rows * 0.2 * np.sin(x / 37.0)).astype(int), 0, rows - 1)
        for dr, a in ((-1, 0.4), (0, 1.0), (1, 0.6)):
            rr = np.clip(r + dr, 0, rows - 1)
            rgb[rr, x] = a * np.array(ink) + (1 - a) * rgb[rr, x]
    return np.clip(rgb + rng.normal(0, 6, rgb.shape), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("rows, cols", [(61, 2_900), (7, 70_001), (200, 1)])
def test_colour_evidence_scored_a_few_rows_at_a_time_is_the_one_pass_score_bit_for_bit(rows, cols):
    """Chunks of rows (the last one short, a chunk of one row wider than the chunk's pixels, one column) give the
    float32 values one pass over the band gave: every step is per pixel."""
    from core.io.colour import paper_colour

    rgb = _inked_band(rows, cols)
    paper = paper_colour(rgb)
    for ink in ((200, 35, 40), (40, 60, 190), (20, 20, 20)):
        got = colour_evidence(rgb, ink, paper)
        assert got.dtype == np.float32 and got.shape == (rows, cols)
        assert np.array_equal(got.view(np.uint32), _one_pass(rgb, ink, paper).view(np.uint32))
        if ink != (20, 20, 20):  # the page's two inks found (no black is drawn)
            assert got.max() > 0.5


def test_colour_evidence_holds_a_few_rows_of_temporaries_not_the_bands_dozen():
    """A 100 × 20,000 band (2 MP): beyond its 8 MB of float32 result the scoring holds one chunk's temporaries
    (65,536 px, ~5 MB), where one pass held ~80 bytes a pixel (160 MB here; 724 MiB over a 147 × 63,800 band of the
    archive mud log)."""
    import tracemalloc

    from core.io.colour import paper_colour

    rgb = _inked_band(100, 20_000)
    paper = paper_colour(rgb)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        got = colour_evidence(rgb, (200, 35, 40), paper)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - got.nbytes < 8 * 2**20


def test_combining_colour_and_line_style_is_the_product_it_was_in_one_buffer():
    """``colour × (0.5 + 0.5 × clip(style))`` bit for bit, the style map left as it was (it may be the page's own)."""
    from core.digitize.evidence.colour import combine

    rng = np.random.default_rng(5)
    cev = rng.random((40, 300), dtype=np.float32)
    style = (rng.random((40, 300), dtype=np.float32) * 1.4 - 0.2)
    kept = style.copy()
    got = combine(cev, style)
    assert np.array_equal(got.view(np.uint32), (cev * (0.5 + 0.5 * np.clip(style, 0.0, 1.0))).view(np.uint32))
    assert np.array_equal(style, kept) and got.dtype == np.float32
    wide = combine(cev, style.astype(np.float64))  # a float64 style map: the product in float64, as before
    assert wide.dtype == np.float64
    assert np.array_equal(wide, cev * (0.5 + 0.5 * np.clip(style.astype(np.float64), 0, 1)))
    assert combine(cev, None) is cev
