"""The QC picture: the LAS values drawn back over the scan, NULL stretches and warnings marked, page by page."""

import numpy as np
import pytest
from PIL import Image

from core.cli.main import main
from core.digitize.job.pipeline import digitize, digitize_sections
from core.digitize.output.qc_picture import (
    MARGIN_PX,
    MIN_PAGE_WIDTH_PX,
    hex_rgb,
    qc_colours,
    qc_parts,
    render_qc,
    write_qc,
)
from core.io.calibration import Section
from core.io.file_names import qc_page_paths
from core.synth import generate_log


def _colour_mask(page: np.ndarray, colour: str) -> np.ndarray:
    """Pixels within a little of a curve colour (anti-aliased edges are blends)."""
    return np.abs(page.astype(int) - np.array(hex_rgb(colour))).sum(-1) < 60


def test_the_traces_are_drawn_where_the_curves_are_printed_and_null_is_marked():
    log = generate_log(3, 1500, 320, "y", style="clean", curves=(1, 1), name="qc")
    res = digitize(log.image, log.calibration, mask=log.mask)
    spec = log.calibration.curves[0]
    length = log.image.shape[0]
    parts = qc_parts([("", None, res)], log.calibration, length)
    pages = render_qc(log.image, log.calibration, parts, "qc.png", page_height=800)
    assert len(pages) == 2  # 1,500 rows at 1:1 on pages of 800
    page = pages[0]
    header = page.shape[0] - 800
    assert page.shape[1] == MIN_PAGE_WIDTH_PX  # a narrow scan: the page is wide enough for the legend
    body = page[header:, MARGIN_PX:MARGIN_PX + 320]  # no scaling below the page width
    colour = qc_colours(log.calibration.curves)[0]
    drawn = _colour_mask(body, colour)
    assert drawn.sum() > 300
    # on every drawn row, the drawn line lies on the curve's printed ink (within 3 px)
    ink = log.mask[:800] > 0
    rows, cols = np.nonzero(drawn)
    near = [np.abs(np.flatnonzero(ink[r]) - c).min() <= 3 for r, c in zip(rows, cols) if ink[r].any()]
    assert np.mean(near) > 0.95
    res.values[spec.mnemonic][100:160] = np.nan  # a NULL stretch the checker must see
    body = render_qc(log.image, log.calibration, parts, "qc.png", page_height=800)[0][header:, MARGIN_PX:]
    # the NULL stretch: tinted red across the track, where the trace is not drawn
    depth_rows = log.calibration.pixel_at(res.depth[100:160])
    r0, r1 = int(depth_rows.min()) + 3, int(depth_rows.max()) - 3
    x0, x1 = int(spec.track_lo) + 12, int(spec.track_hi) - 2
    stretch = body[r0:r1, x0:x1].astype(int)
    assert (stretch[..., 0] - stretch[..., 2]).mean() > 15  # reddish
    assert _colour_mask(body[r0:r1, x0:x1], colour).sum() < 20  # the stretch's trace is not drawn


def test_depth_runs_down_the_page_and_a_scan_wider_than_a_page_is_scaled():
    log = generate_log(4, 3000, 256, "x", style="clean", curves=(1, 1))  # depth along the columns
    res = digitize(log.image, log.calibration, mask=log.mask)
    pages = render_qc(log.image, log.calibration, qc_parts([("", None, res)], log.calibration, 3000),
                      "wide.png", page_height=1000)
    assert len(pages) == 3 and all(p.shape[0] > 1000 for p in pages[:2])
    wide = np.full((600, 2800), 255, np.uint8)
    cal = log.calibration
    cal.depth_axis = "y"
    for c in cal.curves:
        c.track = (c.track[0] * 10, c.track[1] * 10)
    res.depth = res.depth[:10]
    res.values = {k: v[:10] for k, v in res.values.items()}
    res.confidence = {k: v[:10] for k, v in res.confidence.items()}
    pages = render_qc(wide, cal, qc_parts([("", None, res)], cal, 600), "w.png")
    assert pages[0].shape[1] == MARGIN_PX + 1400  # 2,800 px across drawn at half size


def test_sections_are_drawn_in_their_place_with_their_own_depths(tmp_path):
    log = generate_log(5, 1600, 256, "y", style="clean", curves=(1, 1))
    calib = log.calibration
    calib.sections = [Section(100, 700, "main"), Section(900, 1500, "repeat")]
    parts = digitize_sections(log.image, calib, mask=log.mask)
    written = write_qc(tmp_path / "s.qc.png", log.image, calib, parts, "s.png", "mask")
    assert written == [tmp_path / "s.qc.png"]  # 1,400 rows: one page
    page = np.asarray(Image.open(written[0]).convert("RGB"))
    header = page.shape[0] - 1400  # the page starts at the first section, ends at the last
    body = page[header:, MARGIN_PX:MARGIN_PX + 256]
    colour = qc_colours(calib.curves)[0]
    drawn_rows = np.flatnonzero(_colour_mask(body, colour).any(1)) + 100
    assert drawn_rows.min() >= 100 - 2 and drawn_rows.max() <= 1500 + 2
    assert not ((drawn_rows > 705) & (drawn_rows < 895)).any()  # between the passes: nothing drawn


def test_page_names():
    assert qc_page_paths("a/b.png", 1) == [pytest.importorskip("pathlib").Path("a/b.png")]
    assert [p.name for p in qc_page_paths("a/b.png", 3)] == ["b-p01.png", "b-p02.png", "b-p03.png"]


def test_digitize_qc_option_writes_the_picture_and_refuses_an_unwritable_one(tmp_path, capsys):
    main(["synth", str(tmp_path), "--count", "1", "--seed", "2", "--width", "1200", "--height", "256"])
    scan, calib = tmp_path / "synth_000.png", tmp_path / "synth_000.calib.json"
    assert main(["digitize", str(scan), "--calib", str(calib), "--out", str(tmp_path / "o.las"), "--classical",
                 "--qc", str(tmp_path / "o.qc.png")]) == 0
    assert "wrote the QC picture" in capsys.readouterr().out
    im = Image.open(tmp_path / "o.qc.png")
    assert im.size[0] == MIN_PAGE_WIDTH_PX and im.size[1] > 1200
    assert main(["digitize", str(scan), "--calib", str(calib), "--out", str(tmp_path / "p.las"), "--classical",
                 "--qc", "/proc/qc.png"]) == 2
    assert "/proc/qc.png" in capsys.readouterr().err and not (tmp_path / "p.las").exists()


def _spec(name: str, plot: str | None = None, ink: str | None = None):
    from core.io.calibration import CurveSpec

    return CurveSpec(mnemonic=name, unit="", description="", klass=1, track=(0.0, 100.0), scale=(0.0, 1.0),
                     plot_colour=plot, colour=ink)


def _apart(a: str, b: str) -> float:
    return float(np.linalg.norm(np.subtract(hex_rgb(a), hex_rgb(b))))


def test_each_curve_has_its_own_colour_on_a_page_and_keeps_its_own_where_it_has_one():
    """33-025-01275-0003's mud log (ten curves, no colours named) drew ROP and C4 both blue, GR and C5 both green:
    the palette repeated after six, and a curve's own colour (its ink, or the "color" the file names) was not
    followed unless every curve had one. Every curve now gets a colour of its own on the page, its own where it
    has one the page can show and no curve before it took."""
    names = ["ROP", "GR", "TG", "C1", "C2", "C3", "C4", "C5", "ILD", "SP"] + [f"X{k}" for k in range(30)]
    plain = qc_colours([_spec(n) for n in names])
    assert len(plain) == 40 and min(_apart(a, b) for i, a in enumerate(plain) for b in plain[:i]) >= 40
    inks = qc_colours([_spec("ROP", ink="#0000ff"), _spec("GR"), _spec("TG", ink="#00a000"), _spec("C1", "#800080"),
                       _spec("C2", ink="#0000f0"), _spec("C3", ink="#fafafa")])
    assert inks[0] == "#0000ff" and inks[2] == "#00a000" and inks[3] == "#800080"
    assert _apart(inks[4], "#0000ff") >= 40  # blue again: a colour of its own
    assert _apart(inks[5], "#ffffff") > 60  # white on a white page: not shown, a colour of its own
    assert min(_apart(a, b) for i, a in enumerate(inks) for b in inks[:i]) >= 40
    assert qc_colours([_spec("GR", plot="#123456", ink="#ff0000")]) == ["#123456"]  # the file's display colour first
