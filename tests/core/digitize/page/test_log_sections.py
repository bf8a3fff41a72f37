"""A scan is more than one log: sections of log body, tall scans, sideways depths and honest refusals."""

import json

import cv2
import lasio
import numpy as np
import pytest
from PIL import Image

from core.cli.main import main
from core.common.errors import CalibrationError
from core.digitize.calibrate.depth_fit import fit_section
from core.digitize.calibrate.depth_numbers import windows
from core.digitize.calibrate.depth_scales import scale_check
from core.digitize.calibrate.ocr import ocr_available
from core.digitize.calibrate.proposal import propose
from core.digitize.calibrate.proposal_records import DepthNumber, ProposedSection
from core.io.calibration import Calibration

needs_ocr = pytest.mark.skipif(ocr_available() is not None, reason="Tesseract is not installed")
PX_PER_FT = 10.0  # 1:240 at 200 dpi
TRACKS = [(20.0, 270.0), (400.0, 680.0)]


def _body(img: np.ndarray, a: int, b: int, top_depth: float, sideways: bool = False) -> None:
    """Draw a log body over rows [a, b): tracks with a grid, depth lines every 10 ft (heavy every 50), the depth
    printed every 50 ft in the depth column (turned by 90° with ``sideways``), a curve in each track."""
    for lo, hi in TRACKS:
        for k in range(1, 10):
            x = int(round(lo + k * (hi - lo) / 10))
            cv2.line(img, (x, a), (x, b - 1), 150, 1)
        for x in (lo, hi):
            cv2.line(img, (int(x), a), (int(x), b - 1), 20, 3)
    for y in range(a, b, int(10 * PX_PER_FT)):
        d = top_depth + (y - a) / PX_PER_FT
        for lo, hi in TRACKS:
            cv2.line(img, (int(lo), y), (int(hi), y), 20 if d % 50 == 0 else 150, 1)
        if d % 50 == 0 and a + 40 < y < b - 40:
            text = f"{d:.0f}"
            if sideways:
                (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.9, 2)
                patch = np.full((th + 12, tw + 8), 245, np.uint8)
                cv2.putText(patch, text, (4, th + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.9, 20, 2, cv2.LINE_AA)
                patch = np.rot90(patch, 3)  # reads top to bottom, as mud logs print their depths
                y0, x0 = y - patch.shape[0] // 2, 335 - patch.shape[1] // 2
                img[y0 : y0 + patch.shape[0], x0 : x0 + patch.shape[1]] = patch
            else:
                (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.9, 2)
                cv2.putText(img, text, (335 - tw // 2, y + th // 2), cv2.FONT_HERSHEY_SIMPLEX, 0.9, 20, 2, cv2.LINE_AA)
    rows = np.arange(a, b)
    for lo, hi in TRACKS:
        x = lo + (hi - lo) * (0.5 + 0.3 * np.sin(rows / (80 + lo / 10)))
        cv2.polylines(img, [np.stack([x, rows], 1).round().astype(np.int32)], False, 10, 2)


def _header(img: np.ndarray, a: int, b: int) -> None:
    """Boxes and text: a log's header or a tail table, with numbers that are no depths."""
    cv2.rectangle(img, (60, a + 10), (640, b - 10), 20, 2)
    for i, y in enumerate(range(a + 60, b - 40, 60)):
        cv2.line(img, (60, y), (640, y), 20, 1)
        cv2.putText(img, f"RUN {i + 1}  BIT 7.875  MUD 9.{i}  RM {12 + i}.3", (30, y - 15), cv2.FONT_HERSHEY_SIMPLEX,
                    0.8, 20, 2, cv2.LINE_AA)


def _scan(parts: list[tuple[str, int, float]], sideways: bool = False) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """A tall scan stacked from (kind, rows, top depth) parts: "header" or "body"."""
    img = np.full((sum(n for _, n, _ in parts), 700), 245, np.uint8)
    y, bodies = 0, []
    for kind, n, top in parts:
        if kind == "header":
            _header(img, y, y + n)
        else:
            _body(img, y, y + n, top, sideways)
            bodies.append((y, y + n))
        y += n
    return img, bodies


def _save(tmp_path, img: np.ndarray, name: str, dpi: float | None = 200.0) -> str:
    path = tmp_path / f"{name}.png"
    Image.fromarray(img).save(path, **({"dpi": (dpi, dpi)} if dpi else {}))
    return str(path)


# -- refusals: one test per rule -----------------------------------------------------------------


def _section_with(values_at: list[tuple[float, float]], length: int = 3000) -> ProposedSection:
    sec = ProposedSection(0, length)
    fit_section(sec, [DepthNumber(p, v, f"{v:g}") for p, v in values_at], dpi=200.0, unit="FT")
    return sec


def test_a_depth_scale_that_is_no_standard_log_scale_is_refused():
    # header numbers taken for depths: 230 ft a pixel (the mud log that proposed −182,048 ft at row 0)
    sec = _section_with([(100 + 5 * k, 227.0 + 1150.0 * k) for k in range(5)], length=600)
    assert not sec.picks and "no standard depth scale" in sec.refused
    assert scale_check(10.16, 200.0) is None  # KGS: 1:240 at 200 dpi, 1.6 % stretched
    assert scale_check(4.98, 100.0) is None
    assert "no physical depth scale" in scale_check(0.004, None)
    assert scale_check(10.0, None) is None


def test_picks_bunched_in_a_corner_of_the_section_are_refused():
    sec = _section_with([(1000 + 100 * k, 1000.0 + 10 * k) for k in range(4)], length=20000)
    assert not sec.picks and "span" in sec.refused


def test_depths_that_decrease_down_the_log_are_refused():
    sec = _section_with([(200 + 500 * k, 3000.0 - 50 * k) for k in range(5)])
    assert not sec.picks and "decrease" in sec.refused


def test_numbers_that_step_by_no_round_interval_are_no_depth_labels():
    # three numbers of a table that happen to lie on a line at a standard scale (iqa_33-025-02289, rows 30,069–30,344)
    sec = _section_with([(30069.0 - 29905, 7.0), (30113.5 - 29905, 30.0), (30344.5 - 29905, 150.0)], length=612)
    assert not sec.picks and "no depth labels" in sec.refused


def test_a_section_with_plausible_depths_gets_them_as_picks_within_the_printed_range():
    sec = _section_with([(300 + 500 * k, 1000.0 + 50 * k) for k in range(5)])
    assert [d for _, d in sec.picks] == [1000.0, 1050.0, 1100.0, 1150.0, 1200.0] and sec.refused is None


def test_ocr_windows_cover_any_length_within_tesseracts_limit():
    parts = windows(86_743)
    assert parts[0][0] == 0 and parts[-1][1] == 86_743
    assert all(b - a <= 32_767 for a, b in parts)
    assert all(b1 - a2 >= 200 for (_, b1), (a2, _) in zip(parts, parts[1:]))  # a number is whole in one of them


# -- whole proposals --------------------------------------------------------------------------------


@needs_ocr
def test_header_log_repeat_and_tail_become_two_sections_with_their_own_depths(tmp_path, capsys):
    img, bodies = _scan([("header", 600, 0), ("body", 3000, 1000.0), ("header", 500, 0), ("body", 2000, 1100.0),
                         ("header", 400, 0)])
    prop = propose(img, dpi=200.0)
    found = [(s.kind, s.start, s.stop) for s in prop.sections if s.picks]
    assert [k for k, _, _ in found] == ["main", "repeat"], prop.messages
    for (_, a, b), (ta, tb) in zip(found, bodies):
        assert abs(a - ta) < 60 and abs(b - tb) < 60  # the header and tail are no log
    for sec, (top, start) in zip([s for s in prop.sections if s.picks], [(1000.0, 600), (1100.0, 4100)]):
        for px, d in sec.picks:
            assert abs(top + (px - start) / PX_PER_FT - d) < 2.0  # within 2 ft of where it is printed
    path = _save(tmp_path, img, "two_passes")
    assert main(["calibrate", path, "--propose"]) == 0
    cal = Calibration.load(tmp_path / "two_passes.calib.json")
    assert [s.kind for s in cal.sections] == ["main", "repeat"]
    assert cal.sections[1].depth_picks[0][1] >= 1100.0


@needs_ocr
def test_a_scan_taller_than_tesseracts_limit_proposes(tmp_path):
    length = 34_000
    img, _ = _scan([("body", length, 2000.0)])
    prop = propose(img, dpi=200.0)
    assert len(prop.picks) > 40, prop.messages
    assert prop.picks[0][0] < 1000 and prop.picks[-1][0] > length - 1000  # read in every window
    for px, d in prop.picks:
        assert abs(2000.0 + px / PX_PER_FT - d) < 2.0


@needs_ocr
def test_depths_printed_sideways_are_read():
    img, _ = _scan([("body", 4000, 5000.0)], sideways=True)
    prop = propose(img, dpi=200.0)
    assert len(prop.picks) >= 4, prop.messages
    assert any("sideways" in m for m in prop.messages)
    for px, d in prop.picks:
        assert abs(5000.0 + px / PX_PER_FT - d) < 2.0


@needs_ocr
def test_an_implausible_scale_is_refused_with_the_reason_and_exit_2(tmp_path, capsys):
    img, _ = _scan([("header", 600, 0), ("body", 3000, 1000.0)])
    path = _save(tmp_path, img, "wrong_dpi", dpi=300.0)  # 10 px per ft is no standard scale at 300 dpi
    assert main(["calibrate", path, "--propose"]) == 2
    captured = capsys.readouterr()
    assert "no standard depth scale at 300 dpi" in captured.out, captured.out
    [line] = [x for x in captured.err.splitlines() if x.startswith("welltrace: ")]  # one line, naming the scan
    assert "wrong_dpi" in line and "only a draft written" in line and "no standard depth scale" in line
    # what was found is kept as a draft with no depth picks, which no command takes for a calibration
    draft = json.loads((tmp_path / "wrong_dpi.calib.json").read_text())
    assert draft["depth_picks"] == [] and "no standard depth scale" in draft["draft"] and "by hand" in line


# -- sections in the calibration and in digitising ------------------------------------------------


def _calib(sections: list[dict] | None) -> dict:
    d = {"version": 1, "depth_axis": "y", "depth_unit": "FT", "depth_picks": [[600, 1000.0], [3600, 1300.0]],
         "step": 0.5, "curves": [{"mnemonic": "GR", "class": 1, "track": [20, 270], "scale": [0, 150]},
                                 {"mnemonic": "RES", "class": 1, "track": [400, 680], "scale": [0, 10]}]}
    if sections is not None:
        d["sections"] = sections
    return d


def test_sections_are_checked_and_a_calibration_without_them_is_the_whole_picture():
    assert Calibration.from_dict(_calib(None)).sections == []
    with pytest.raises(CalibrationError, match=r"sections\[1\]\.span: overlaps"):
        Calibration.from_dict(_calib([{"span": [900, 3900]}, {"span": [3000, 5000], "kind": "repeat"}]))
    with pytest.raises(CalibrationError, match=r"sections\[0\]\.kind"):
        Calibration.from_dict(_calib([{"span": [900, 3900], "kind": "body"}]))
    with pytest.raises(CalibrationError, match=r"sections\[0\]\.depth_picks: needs at least two"):
        Calibration.from_dict(_calib([{"span": [900, 3900], "depth_picks": [[1000, 1010.0]]}]))
    cal = Calibration.from_dict(_calib([{"span": [900, 3900]}, {"span": [4600, 6100], "kind": "repeat",
                                                                "depth_picks": [[4600, 1100.0], [6100, 1250.0]]}]))
    assert Calibration.from_dict(cal.as_dict()).as_dict() == cal.as_dict()
    assert cal.section_files() == ["", "repeat"]
    assert cal.section_calibration(1).depth_picks == [(0.0, 1100.0), (1500.0, 1250.0)]


def test_digitize_traces_only_the_sections_and_writes_the_repeat_pass_beside_the_main(tmp_path, capsys):
    img, _ = _scan([("header", 600, 0), ("body", 3000, 1000.0), ("header", 500, 0), ("body", 2000, 1100.0),
                    ("header", 400, 0)])
    path = _save(tmp_path, img, "log")
    (tmp_path / "log.calib.json").write_text(json.dumps(_calib([
        {"span": [600, 3600]}, {"span": [4100, 6100], "kind": "repeat",
                                "depth_picks": [[4100, 1100.0], [6100, 1300.0]]}])))
    out = tmp_path / "log.las"
    assert main(["digitize", path, "--calib", str(tmp_path / "log.calib.json"), "--out", str(out),
                 "--classical", "--mask-out", str(tmp_path / "m.png")]) == 0
    main_las, repeat_las = lasio.read(out), lasio.read(tmp_path / "log.repeat.las")
    assert main_las.index[0] >= 1000.0 - 0.5 and main_las.index[-1] <= 1300.0 + 0.5  # no header, no tail
    assert repeat_las.index[0] >= 1100.0 - 0.5 and repeat_las.index[-1] <= 1300.0 + 0.5
    assert np.isfinite(main_las["GR"]).mean() > 0.9 and np.isfinite(repeat_las["RES"]).mean() > 0.9
    mask = np.asarray(Image.open(tmp_path / "m.png"))
    assert mask.shape == img.shape and not mask[:580].any() and not mask[6120:].any()
    assert main(["digitize", path, "--calib", str(tmp_path / "log.calib.json"), "--out", str(tmp_path / "r.las"),
                 "--classical", "--section", "2"]) == 0
    assert lasio.read(tmp_path / "r.las").index[0] >= 1100.0 - 0.5
    assert main(["digitize", path, "--calib", str(tmp_path / "log.calib.json"), "--out", str(tmp_path / "x.las"),
                 "--classical", "--section", "3"]) == 2
    assert "no section 3" in capsys.readouterr().err


def test_a_picture_read_whole_has_no_values_outside_the_log_body_with_the_picks(tmp_path, capsys):
    """A calibration without sections on a scan with a header, a repeat pass and a tail: only the stretch of log
    body that holds the depth picks is read; the header above it and the repeat pass below (which the main
    pass's picks would put at depths it does not have) are NULL, and the run says so and how to read them."""
    from core.digitize.page.sections import picked_body

    img, bodies = _scan([("header", 600, 0), ("body", 3000, 1000.0), ("header", 500, 0), ("body", 2000, 1100.0),
                         ("header", 400, 0)])
    path = _save(tmp_path, img, "log")
    (tmp_path / "log.calib.json").write_text(json.dumps(_calib(None)))
    out = tmp_path / "log.las"
    assert main(["digitize", path, "--calib", str(tmp_path / "log.calib.json"), "--out", str(out), "--classical",
                 "--no-qc"]) == 0
    assert "calibrate --propose" in capsys.readouterr().err
    las = lasio.read(out)
    depth, gr = las.index, las["GR"]
    body = (depth >= 1000.0 + 5) & (depth <= 1300.0 - 5)
    assert np.isfinite(gr[body]).mean() > 0.9
    assert not np.isfinite(gr[depth < 1000.0 - 8]).any()  # the header: its boxes are no log
    assert not np.isfinite(gr[depth > 1300.0 + 8]).any()  # the repeat pass at the main pass's depths: no reading
    # the stretch found is the body drawn, within the borders' smoothing; a picture that is all body: no stretch
    darkness = 1.0 - img.T.astype(np.float32) / 255.0
    lines = [float(x) for lo, hi in TRACKS for x in (lo, hi)]
    a, b = picked_body(darkness, lines, [1000.0, 2000.0])
    assert abs(a - bodies[0][0]) < 40 and abs(b - bodies[0][1]) < 40
    assert picked_body(darkness[:, 600:3600], lines, [100.0]) is None
    assert picked_body((darkness * 255).astype(np.uint8), lines, [1000.0]) == (a, b)  # a byte a pixel alike
    assert picked_body(darkness, lines, [3800.0]) is None  # no stretch of body holds the picks: no restriction


def test_a_log_whose_lines_only_thin_out_is_read_to_its_end():
    """Half of the lines found stop three quarters down (curves lying still, found as lines, that end there):
    the share of lines drawn sags under the bar but never to a header's or a tail's, so no part is cut off."""
    from core.digitize.page.sections import picked_body

    darkness = np.zeros((300, 4000), np.float32)
    lines = [20.0, 60.0, 100.0, 140.0, 180.0, 220.0]
    for k, r in enumerate(lines):
        darkness[int(r) - 1 : int(r) + 2, : 3000 if k % 2 else 4000] = 1.0
    assert picked_body(darkness, lines, [500.0, 2500.0]) is None
    darkness[:, 3300:] = 0.0  # a tail with none of them: cut there
    a, b = picked_body(darkness, lines, [500.0, 2500.0])
    assert a == 0 and abs(b - 3000) < 80


def test_a_picture_read_whole_is_read_by_the_network_over_its_log_body_alone():
    """The network reads the stretch of log body with the picks, as it reads a section, not the header, the
    repeat pass and the tail whose values are then written NULL (KGS read whole: 27 windows → 13, 92 s → 48 s)."""
    import torch

    from core.digitize.evidence.network import Windowing, strips
    from core.digitize.job.pipeline import digitize
    from core.digitize.page.sections import picked_body
    from core.model.network import VeerNet, preset

    img, _ = _scan([("header", 600, 0), ("body", 3000, 1000.0), ("header", 500, 0), ("body", 2000, 1100.0),
                    ("header", 400, 0)])
    torch.manual_seed(0)
    model = VeerNet(preset("tiny", classes=4)).eval()
    res = digitize(img, Calibration.from_dict(_calib(None)), model=model)
    darkness = 1.0 - img.T.astype(np.float32) / 255.0
    a, b = picked_body(darkness, [float(x) for lo, hi in TRACKS for x in (lo, hi)], [1000.0, 2000.0])
    lo, hi = res.memory["columns"]
    assert abs(lo - a) < 40 and abs(hi - b) < 40  # the body, as the grid's lines draw it
    win = Windowing.for_model(model.cfg)

    def windows(n: int) -> int:
        return len(strips(n, win.length, win.overlap, model.cfg.stride))

    assert res.memory["windows"] == windows(hi - lo) < windows(img.shape[0])
    assert not res.mask[:lo].any() and not res.mask[hi:].any()  # no map beyond it



def test_a_main_pass_whose_own_picks_are_not_the_calibrations_is_said(tmp_path, capsys):
    """A proposal writes the main pass's section with its own copy of the top-level depth picks; a user who corrects
    a misread depth in the top-level `depth_picks` (the README's "the depth picks") got a LAS on the old depths and
    no word why. The section's picks are read, as documented, and the run says the two disagree."""
    img, _ = _scan([("header", 600, 0), ("body", 3000, 1000.0), ("header", 400, 0)])
    path = _save(tmp_path, img, "log")
    own = [[600, 1000.0], [3600, 1300.0]]
    for top, said in ((own, False), ([[600, 1100.0], [3600, 1400.0]], True)):
        data = _calib([{"span": [600, 3600], "depth_picks": own}])
        data["depth_picks"] = top
        (tmp_path / "log.calib.json").write_text(json.dumps(data))
        assert main(["digitize", path, "--out", str(tmp_path / "log.las"), "--classical", "--no-qc"]) == 0
        assert lasio.read(tmp_path / "log.las").index[0] == pytest.approx(1000.0, abs=0.5)  # the section's, as before
        err = capsys.readouterr().err
        assert ("sections[0].depth_picks" in err and "top-level depth_picks" in err) == said, err


def test_a_warning_of_the_repeat_pass_names_it(monkeypatch):
    """On 33-025-01231-0014 `digitize` warned "MAXID and IDAV … meet at 2 place(s) (9286.0, 9360.8 FT) … fix with
    Swap curves": the repeat pass's meeting, but the main pass covers those depths too, and nothing said which LAS
    to look in. A warning of a section other than the main pass names it; one the main pass gives too (the
    calibration's, the same in every section) is said once, as it was."""
    from core.digitize.job import pipeline
    from core.digitize.output.result import DigitizeResult

    def fake(image, calib, source=None, **kwargs):
        said = ["GR: its ink is the colour of RES in the same track"]
        if "section 2" in source:
            said.append("GR and RES meet at 1 place(s) (1150.0 FT)")
        return DigitizeResult(np.zeros(1), {}, [], np.zeros(image.shape, np.uint8), "fake", warnings=said)

    monkeypatch.setattr(pipeline, "digitize", fake)
    cal = Calibration.from_dict(_calib([{"span": [600, 3600]}, {"span": [4100, 6100], "kind": "repeat",
                                                                "depth_picks": [[4100, 1100.0], [6100, 1300.0]]}]))
    parts = pipeline.digitize_sections(np.zeros((6500, 700), np.uint8), cal, source="log.png")
    (_, _, main_pass), (_, _, repeat) = parts
    assert main_pass.warnings == ["GR: its ink is the colour of RES in the same track"]
    assert repeat.warnings == ["GR: its ink is the colour of RES in the same track",
                               "the repeat pass (section 2): GR and RES meet at 1 place(s) (1150.0 FT)"]


def test_a_section_dropped_from_the_calibration_leaves_no_las_of_the_earlier_run(tmp_path):
    """A repeat pass taken out of the calibration (the proposal had taken a tail for one), the scan digitised
    again: the earlier run's OUT.repeat.las stayed beside the new OUT.las, a LAS of a section the calibration no
    longer has, as the QC pages of a longer earlier run no longer do. A run of every section removes the section
    LAS files it did not write; a run of one section (--section N) leaves the others alone."""
    img, _ = _scan([("header", 600, 0), ("body", 3000, 1000.0), ("header", 500, 0), ("body", 2000, 1100.0),
                    ("header", 400, 0)])
    path = _save(tmp_path, img, "log")
    calib = tmp_path / "log.calib.json"
    both = _calib([{"span": [600, 3600]}, {"span": [4100, 6100], "kind": "repeat",
                                            "depth_picks": [[4100, 1100.0], [6100, 1300.0]]}])
    calib.write_text(json.dumps(both))
    out = tmp_path / "log.las"
    assert main(["digitize", path, "--out", str(out), "--classical"]) == 0
    assert (tmp_path / "log.repeat.las").is_file()
    assert main(["digitize", path, "--out", str(tmp_path / "one.las"), "--classical", "--section", "1"]) == 0
    assert (tmp_path / "log.repeat.las").is_file()  # another output's files: not this run's to remove
    (tmp_path / "log.section3.las").write_text("~V")  # an earlier run's third section, as this run names them
    calib.write_text(json.dumps(_calib([{"span": [600, 3600]}])))
    assert main(["digitize", path, "--out", str(out), "--classical"]) == 0
    assert out.is_file() and not (tmp_path / "log.repeat.las").exists() and not (tmp_path / "log.section3.las").exists()
    assert (tmp_path / "one.las").is_file()
