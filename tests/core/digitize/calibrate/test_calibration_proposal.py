"""Calibration proposed from the scan: track bounds from its grid, depth picks from its printed depths."""

import json

import cv2
import numpy as np
import pytest

from core.cli.main import main
from core.common.errors import CalibrationError
from core.digitize.calibrate.depth_fit import _monotonic
from core.digitize.calibrate.line_fit import fit_numbers
from core.digitize.calibrate.ocr import ocr_available
from core.digitize.calibrate.proposal import propose
from core.digitize.calibrate.proposal_records import DepthNumber
from core.digitize.calibrate.tracks import propose_tracks
from core.io.calibration import Calibration

needs_ocr = pytest.mark.skipif(ocr_available() is not None, reason="Tesseract is not installed")

LENGTH = 3000  # along depth
PX_PER_FT = 10.0
TOP = 1000.0


def _page(numbers: bool = True, abut: bool = False, coarse: bool = False
          ) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """A tall paper log: a track of 10 divisions, a depth column with a depth printed every 50 ft on its heavy
    line, and a second track (or, with ``abut``, two tracks of different pitch sharing a border; with ``coarse``,
    a third track of four 65-px cells beside the second, each cell wider than twice the page's typical pitch)."""
    h, w = LENGTH, 960 if coarse else 700
    img = np.full((h, w), 245, np.uint8)
    tracks = [(20.0, 270.0), (400.0, 680.0)] if not abut else [(20.0, 270.0), (400.0, 520.0), (520.0, 680.0)]
    if coarse:
        tracks.append((680.0, 940.0))
    for lo, hi in tracks:
        n = 4 if lo == 680 else 10 if hi - lo > 200 else (4 if lo == 400 else 8)
        for k in range(1, n):
            x = int(round(lo + k * (hi - lo) / n))
            cv2.line(img, (x, 0), (x, h - 1), 150, 1)
        for x in (lo, hi):
            cv2.line(img, (int(x), 0), (int(x), h - 1), 20, 3)
    for d in np.arange(TOP, TOP + LENGTH / PX_PER_FT, 10.0):
        y = int(round((d - TOP) * PX_PER_FT))
        for lo, hi in tracks:
            cv2.line(img, (int(lo), y), (int(hi), y), 20 if d % 50 == 0 else 150, 1)
        if numbers and d % 50 == 0 and 30 < y < h - 30:
            text = f"{d:.0f}"
            (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.9, 2)
            cv2.putText(img, text, (335 - tw // 2, y + th // 2), cv2.FONT_HERSHEY_SIMPLEX, 0.9, 20, 2, cv2.LINE_AA)
    # a curve in each track, so the tracks carry ink and the depth column only its numbers
    rows = np.arange(h)
    for lo, hi in tracks:
        x = lo + (hi - lo) * (0.5 + 0.3 * np.sin(rows / (80 + lo / 10)))
        pts = np.stack([x, rows], 1).round().astype(np.int32)
        cv2.polylines(img, [pts], False, 10, 2)
    return img, tracks


def _same_tracks(tracks, truth, count: int) -> None:
    """``count`` tracks, each within 2 px of the printed one."""
    assert len(tracks) == count, tracks
    for (a, b), (x, y) in zip(truth, tracks):
        assert abs(a - x) <= 2 and abs(b - y) <= 2, tracks


def test_tracks_are_the_runs_of_lines_between_depth_column_and_margins():
    img, truth = _page()
    tracks, separators = propose_tracks(img.T)
    _same_tracks(tracks, truth, 2)
    assert any(abs(a - 270) <= 2 and abs(b - 400) <= 2 for a, b in separators)  # the depth column


def test_two_tracks_sharing_a_border_are_split_where_their_grid_pitch_changes():
    img, truth = _page(abut=True)
    tracks, _ = propose_tracks(img.T)
    _same_tracks(tracks, truth, 3)


def test_a_track_of_few_wide_cells_is_a_track_not_a_row_of_depth_columns():
    # iqa_33-023-01135-0001's E-Log 2: four 42-px cells with a curve in each read as four depth columns
    img, truth = _page(coarse=True)
    tracks, separators = propose_tracks(img.T)
    _same_tracks(tracks, truth, 3)
    assert len(separators) == 1 and abs(separators[0][0] - 270) <= 2 and abs(separators[0][1] - 400) <= 2


def test_tracks_are_read_from_the_log_body_not_outvoted_by_a_header_and_a_tail():
    # iqa_33-023-01146-0006's right border, printed beside its log only, was outvoted by the windows of its header
    # and tail; the header's own ruled boxes drew borders into the mud logs' columns
    from core.digitize.calibrate.tracks import along_depth_lines, body_lines
    from core.digitize.page.ink import ink_map
    from core.digitize.page.sections import find_sections

    log, truth = _page()  # depths printed in its depth column: a gap with ink, not a blank cell
    header = np.full((LENGTH // 2, log.shape[1]), 245, np.uint8)
    for k, y0 in enumerate(range(100, LENGTH // 2 - 100, 500)):  # a header's boxes, each ruled its own way
        cv2.rectangle(header, (60 + 37 * k, y0), (560 - 41 * k, y0 + 400), 20, 3)
        cv2.line(header, (330 + 23 * k, y0), (330 + 23 * k, y0 + 400), 20, 3)
    img = np.vstack([header, log, np.full_like(header, 245)])  # a blank tail as long as the header
    canon = img.T
    dark = ink_map(canon)
    picture = along_depth_lines(canon, dark)
    spans = find_sections(dark, [r for r, _ in picture])
    assert len(spans) == 1 and abs(spans[0][0] - LENGTH // 2) <= 10  # the log body is found between them
    assert propose_tracks(canon, dark, picture)[0] == []  # over the whole picture, the log's lines are outvoted
    tracks, _ = propose_tracks(canon, dark, body_lines(canon, dark, picture, spans))
    _same_tracks(tracks, truth, 2)
    assert propose(img, ocr=False).tracks == tracks


def test_the_mud_logs_tracks_are_their_curve_tracks_and_their_other_columns_are_offered_apart(shared_data):
    """The curve tracks of the shared mud logs as printed, and their porosity, lithology and show columns as
    columns of their own beside them, not as curve tracks (issue #59: a curve track is one a curve is drawn in on
    a scale)."""
    from core.io.scan import load_scan

    printed = {  # measured on the prints: curve tracks; the porosity, lithology and show columns
        "iqa_33-023-01135-0001": ([(22, 146), (146, 316), (698, 928), (928, 1098), (1098, 1266)],
                                  [(366, 404), (404, 465)]),
        "iqa_33-023-01145-0002": ([(34, 204), (584, 814)], [(254, 292), (292, 352)]),
    }
    for name, (tracks, columns) in printed.items():
        prop = propose(load_scan(shared_data / "scans" / f"{name}.tif").image, ocr=False)
        assert len(prop.tracks) == len(tracks), (name, prop.tracks)
        for (a, b), (x, y) in zip(tracks, prop.tracks):
            assert abs(a - x) <= 5 and abs(b - y) <= 5, (name, prop.tracks)
        [body] = prop.sections
        for a, b in columns:
            assert any(abs(a - x) <= 5 and abs(b - y) <= 5 for x, y in (c["cols"] for c in body.columns)), \
                (name, (a, b), body.columns)


@needs_ocr
def test_depths_printed_inside_a_track_are_read_where_there_is_no_depth_column():
    """A log with no depth column prints its depths in a track, centred on the heavy depth line on a patch of
    paper that breaks the grid and the curve there."""
    h = LENGTH
    img = np.full((h, 700), 245, np.uint8)
    tracks = [(20.0, 340.0), (340.0, 680.0)]
    for lo, hi in tracks:
        n = 10 if lo == 20 else 8
        for k in range(1, n):
            x = int(round(lo + k * (hi - lo) / n))
            cv2.line(img, (x, 0), (x, h - 1), 150, 1)
        for x in (lo, hi):
            cv2.line(img, (int(x), 0), (int(x), h - 1), 20, 3)
    rows = np.arange(h)
    for lo, hi in tracks:
        x = lo + (hi - lo) * (0.5 + 0.3 * np.sin(rows / (80 + lo / 10)))
        cv2.polylines(img, [np.stack([x, rows], 1).round().astype(np.int32)], False, 10, 2)
    for d in np.arange(TOP, TOP + LENGTH / PX_PER_FT, 10.0):
        y = int(round((d - TOP) * PX_PER_FT))
        for lo, hi in tracks:
            cv2.line(img, (int(lo), y), (int(hi), y), 20 if d % 50 == 0 else 150, 1)
        if d % 50 == 0 and 30 < y < h - 30:
            text = f"{d:.0f}"
            (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.7, 2)
            cv2.rectangle(img, (176 - tw // 2, y - th // 2 - 4), (184 + tw - tw // 2, y + th // 2 + 4), 245, -1)
            cv2.putText(img, text, (180 - tw // 2, y + th // 2), cv2.FONT_HERSHEY_SIMPLEX, 0.7, 20, 2, cv2.LINE_AA)
    prop = propose(img)
    assert prop.separators == []  # no depth column
    assert any("no depth column prints the depths: read inside the tracks" in m for m in prop.messages)
    assert len(prop.picks) >= 4
    for pixel, depth in prop.picks:  # on the printed depth lines
        assert abs(TOP + pixel / PX_PER_FT - depth) <= 0.2, prop.picks


def test_numbers_that_are_no_round_depths_make_no_depth_scale_even_on_one_line():
    from core.digitize.calibrate.depth_fit import fit_section
    from core.digitize.calibrate.proposal_records import ProposedSection

    # read in a track: two fragments of text 9 px apart and one label, on one straight line by chance; their
    # differences share a factor of 8, but 8 is no printed depth
    sec = ProposedSection(0, 3200)
    fit_section(sec, [DepthNumber(270.0, 0.0, "0"), DepthNumber(279.5, 8.0, "08"), DepthNumber(2536.5, 2000.0, "2000")],
                None, "FT")
    assert sec.picks == [] and "no depth labels" in sec.refused


def test_numbers_that_contradict_the_others_are_rejected():
    numbers = [DepthNumber(100 + 500 * k, 250.0 + 50 * k, "") for k in range(6)]
    numbers += [DepthNumber(1700, 4100.0, "4100"), DepthNumber(2900, 300.0, "300"), DepthNumber(60, 409.0, "409")]
    rms = fit_numbers(numbers)
    assert rms is not None and rms < 0.5
    assert [n.kept for n in numbers] == [True] * 6 + [False] * 3
    assert _monotonic([(10, 5.0), (20, 6.0), (30, 5.5), (40, 7.0)]) == [(10, 5.0), (20, 6.0), (40, 7.0)]


@needs_ocr
def test_printed_depths_become_depth_picks():
    img, _ = _page()
    prop = propose(img)
    assert len(prop.picks) >= 4, prop.messages
    for px, depth in prop.picks:
        assert abs((TOP + px / PX_PER_FT) - depth) < 0.3  # each number placed on its depth line
    cal = Calibration.from_dict(prop.calibration_dict())
    rows = np.arange(LENGTH, dtype=float)
    assert np.sqrt(np.mean((cal.depth_at(rows) - (TOP + rows / PX_PER_FT)) ** 2)) < 0.3


@needs_ocr
def test_a_scan_without_printed_depths_says_so_and_proposes_no_picks(tmp_path):
    img, _ = _page(numbers=False)
    prop = propose(img)
    assert not prop.picks and prop.calibration_dict() is None
    assert any("by hand" in m for m in prop.messages)
    path = tmp_path / "blank.png"
    cv2.imwrite(str(path), img)
    assert main(["calibrate", str(path), "--propose"]) == 2
    # a refusal keeps what was found (issue #45): the tracks, in a draft that says what is missing
    draft = json.loads((tmp_path / "blank.calib.json").read_text())
    assert draft["depth_picks"] == [] and "pick two depths by hand" in draft["draft"]
    assert len(draft["proposed_tracks"]) == len(prop.tracks) >= 1
    with pytest.raises(CalibrationError, match="a draft"):  # not yet a calibration: digitize says why
        Calibration.load(tmp_path / "blank.calib.json")


def test_a_refused_proposal_with_force_keeps_the_calibration_that_was_there(tmp_path, capsys):
    """`calibrate SCAN --propose --force` over a calibration made by hand (its picks and curves), on a scan whose
    depths cannot be read: it exited 2 ("only a draft written") and had written over that calibration a draft
    with no depth picks. A refusal replaces a draft, never a calibration: that is kept and the line says so."""
    img, _ = _page(numbers=False)
    path = tmp_path / "blank.png"
    cv2.imwrite(str(path), img)
    mine = {"version": 1, "depth_axis": "y", "depth_unit": "FT", "depth_picks": [[0, 1000.0], [600, 1060.0]],
            "step": 0.5, "curves": [{"mnemonic": "GR", "class": 1, "track": [20, 200], "scale": [0, 150]}]}
    (tmp_path / "blank.calib.json").write_text(json.dumps(mine))
    assert main(["calibrate", str(path), "--propose", "--force"]) == 2
    assert json.loads((tmp_path / "blank.calib.json").read_text()) == mine
    line = capsys.readouterr().err
    assert "no calibration written" in line and "blank.calib.json is kept as it was" in line, line
    (tmp_path / "blank.calib.json").write_text(json.dumps({**mine, "depth_picks": [], "draft": "pick them"}))
    assert main(["calibrate", str(path), "--propose", "--force"]) == 2  # a draft is replaced by the new draft
    assert json.loads((tmp_path / "blank.calib.json").read_text())["draft"] != "pick them"


def test_without_tesseract_the_tracks_are_proposed_and_the_message_says_how_to_install(monkeypatch):
    import core.digitize.calibrate.proposal as cp

    monkeypatch.setattr(cp, "ocr_available", lambda: "reading printed depths needs … apt install tesseract-ocr")
    img, _ = _page()
    prop = cp.propose(img)
    assert len(prop.tracks) == 2 and not prop.picks
    assert any("tesseract-ocr" in m for m in prop.messages)


@needs_ocr
def test_cli_writes_a_draft_and_never_overwrites_without_force(tmp_path, capsys):
    img, _ = _page()
    path = tmp_path / "well.png"
    cv2.imwrite(str(path), img)
    assert main(["calibrate", str(path), "--propose", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    draft = json.loads((tmp_path / "well.calib.json").read_text())
    assert draft["curves"] == [] and len(draft["proposed_tracks"]) == 2 and out["written"]
    Calibration.load(tmp_path / "well.calib.json")  # a valid calibration
    (tmp_path / "well.calib.json").write_text('{"mine": true}')
    assert main(["calibrate", str(path), "--propose"]) == 2
    assert json.loads((tmp_path / "well.calib.json").read_text()) == {"mine": True}
    assert "--force" in capsys.readouterr().err


@needs_ocr
def test_kgs_scan_proposal_matches_the_hand_calibration(kgs_scan):
    """The real 1-bit KGS log: depths within 1 ft RMS of the hand calibration over the whole log, tracks within 5 px."""
    from pathlib import Path

    from core.io.scan import load_scan

    img = load_scan(kgs_scan).image
    prop = propose(img)
    hand = Calibration.load(Path(__file__).resolve().parents[3] / "data" / "kgs_273101_bhc_sonic.calib.json")
    mine = Calibration.from_dict(prop.calibration_dict())
    rows = np.arange(img.shape[0], dtype=float)
    assert np.sqrt(np.mean((mine.depth_at(rows) - hand.depth_at(rows)) ** 2)) < 1.0
    hand_tracks = sorted({(min(c.track), max(c.track)) for c in hand.curves})
    for a, b in hand_tracks:
        assert any(abs(a - x) <= 5 and abs(b - y) <= 5 for x, y in prop.tracks), (hand_tracks, prop.tracks)
    # two sections of log body: the main pass and the repeat pass with its own printed depths; header and tail
    # (the first ~2,200 and the last ~2,100 rows) are in neither
    kinds = [(s.kind, s.start, s.stop) for s in prop.sections if s.picks]
    assert [k for k, _, _ in kinds] == ["main", "repeat"], kinds
    (_, a0, b0), (_, a1, b1) = kinds
    assert 2000 < a0 < 2575 and 10695 < b0 < 12250 and b0 < a1 < 12631 and 14661 < b1 < 15800
    main, repeat = prop.sections[0], prop.sections[1]
    # printed again (850-1100 ft every 50 ft), read as its own: at least the four read before issue #59, no other
    repeated = {d for _, d in repeat.picks}
    assert {850.0, 900.0, 950.0, 1050.0} <= repeated <= {850.0 + 50 * k for k in range(6)}, repeat.picks
    for sec in (main, repeat):  # every pick on its depth line: 10.15 px per ft, the lines 50 ft apart
        px = np.array([p for p, _ in sec.picks])
        d = np.array([v for _, v in sec.picks])
        fit = np.polyfit(px, d, 1)
        assert np.abs(np.polyval(fit, px) - d).max() < 2.0
    draft = prop.calibration_dict()
    assert [s["kind"] for s in draft["sections"]] == ["main", "repeat"]
    assert min(p for p, _ in draft["depth_picks"]) >= 2575 - 1  # no pick extrapolated over the header
    # the curves its scale box prints, read instead of typed (issue #45): `0 Gamma Ray (GAPI) 150` over `150 Gamma
    # Ray (GAPI) 300` is one GR on a backup scale; the rule under a row is its pen
    read = {c["mnemonic"]: c for c in draft["curves"]}
    assert {m: (tuple(c["scale"]), c["class"], c["unit"], c.get("backup")) for m, c in read.items()} == {
        "GR": ((0.0, 150.0), 1, "GAPI", "high"), "CALI": ((6.0, 16.0), 2, "IN", None),
        "DT": ((140.0, 40.0), 1, "US/F", None), "SPHI": ((30.0, -10.0), 2, "PU", None),
        "LTEN": ((15000.0, 0.0), 1, "LB", None)}
    for c in read.values():  # each in the hand calibration's track
        assert any(abs(c["track"][0] - min(h.track)) <= 5 and abs(c["track"][1] - max(h.track)) <= 5
                   for h in hand.curves), c
    Calibration.from_dict(draft)  # a calibration digitize takes as it is ...
    json.dumps(draft)  # ... and calibrate writes (plain JSON values, no numpy scalars)


@needs_ocr
def test_colour_log_depths_are_read_and_placed(shared_data):
    """iqa_33-023-01146-0006.tif prints 8240, 8250, … in its depth column, every 10 ft at 200 dpi (100 px)."""
    from core.io.colour import delta_e, parse_colour
    from core.io.scan import load_scan

    scan = load_scan(shared_data / "scans" / "iqa_33-023-01146-0006.tif")
    prop = propose(scan.image, rgb=scan.rgb)
    kept = {n.value: n.pixel for n in prop.numbers if n.kept}
    assert 8240.0 in kept and 8250.0 in kept
    assert abs((kept[8250.0] - kept[8240.0]) - 100.0) < 3.0
    assert len(prop.picks) >= 20
    # its scale box prints the name above and `1 ——— 300` with the pen between the numbers, the backup scale
    # `300 ——— 599` beneath: what the user's hand calibration of this scan says (../shared/data/cases)
    read = {c["mnemonic"]: (tuple(c["scale"]), c["class"], c.get("backup")) for c in prop.curves}
    assert read == {"GR": ((1.0, 300.0), 1, "high"), "ROP": ((0.0, 150.0), 1, "high")}
    # the GR's pen is navy and its backup row red (the print draws the curve on its backup scale in red): both inks
    # are the GR's, the red one its backup scale's; ROP's pen is black: no colour
    gr = next(c for c in prop.curves if c["mnemonic"] == "GR")
    assert gr["unit"] == "GAPI", gr  # "Gamma API (TVD)": the name prints its unit
    assert delta_e(parse_colour(gr["colour"]), (0, 0, 143)) < 20, gr
    assert delta_e(parse_colour(gr["backup_colour"]), (255, 0, 0)) < 20, gr
    assert not any("colour" in c for c in prop.curves if c["mnemonic"] == "ROP"), prop.curves
    # ROP's box covers the first half of a track whose grid runs on unbroken: the box says where its scale ends
    rop = next(c for c in prop.curves if c["mnemonic"] == "ROP")
    assert abs(rop["track"][0] - 614) <= 5 and abs(rop["track"][1] - 1114) <= 5, rop["track"]
    # and the proposed tracks split there: the heavy line at 1114 px is the border between ROP's track and the next
    # (as heavy as the grid's own heavy lines at 864 and 1364 px, so the lines alone read 614–1563 as one track)
    assert any(abs(a - 614) <= 5 and abs(b - 1114) <= 5 for a, b in prop.tracks), prop.tracks
    assert any(abs(a - 1114) <= 5 for a, _ in prop.tracks), prop.tracks
    # its right border, printed beside the log only (not beside the header's and tail's boxes), ends that track
    assert any(abs(a - 1114) <= 5 and abs(b - 1613) <= 5 for a, b in prop.tracks), prop.tracks


def test_scale_box_rows_become_curves_and_a_row_going_on_is_the_backup_scale():
    from core.digitize.calibrate.curve_names import mnemonic_for, unit_for, unit_in_name
    from core.digitize.calibrate.scale_box import ScaleRow, curves_from_rows, log_scale

    rows = [ScaleRow((1, 499), "Gamma Ray", "GAPI", 0, 150, 1, 10), ScaleRow((1, 499), "Gamma Ray", "GAPI", 150, 300, 1, 40),
            ScaleRow((665, 1663), "Delta Time", "US/F", 140, 40, 1, 10),
            ScaleRow((665, 1663), "Delta Time", "US/F", 240, 140, 1, 40),
            ScaleRow((665, 1663), "Sonic Int", "", 5, 0, 1, 70), ScaleRow((1, 499), "Caliper", "IN", 6, 16, 3, 70)]
    curves = {c["mnemonic"]: c for c in curves_from_rows(rows)}
    assert set(curves) == {"GR", "DT", "CALI"}  # "Sonic Int" names no curve it knows: left to the user
    assert curves["GR"]["wrap"] and curves["GR"]["backup"] == "high" and curves["GR"]["scale"] == [0, 150]
    assert curves["DT"]["backup"] == "low"  # 240–140 goes on before DT's 140 end
    assert "wrap" not in curves["CALI"] and curves["CALI"]["class"] == 3
    assert mnemonic_for("Gamma API") == "GR" and mnemonic_for("dCAL") == "CALI" and mnemonic_for("LTEN") == "LTEN"
    assert mnemonic_for("of the") is None and mnemonic_for("Sonic Int") is None
    assert unit_for("(usec/ft)") == "US/F" and unit_for("ib") == "LB" and unit_for("TVD") == ""
    # a name that prints its unit (iqa_01146: "Gamma API (TVD)"): only a known unit word counts
    assert unit_in_name("Gamma API") == "GAPI" and unit_in_name("Delta Time") == "" and unit_in_name("ROP") == ""
    assert log_scale(0.2, 2000) and log_scale(1, 100) and not log_scale(0, 150) and not log_scale(6, 16)
    assert not log_scale(15000, 0) and not log_scale(1, 300)
    # a pen's ink colour goes with its curve; a backup row in another ink is the backup scale's ink; a backup row
    # in black beside a coloured main row takes the colour away (one colour would leave every backup stretch NULL)
    inked = curves_from_rows([ScaleRow((1, 499), "Gamma Ray", "GAPI", 0, 150, 1, 10, "#00008f"),
                              ScaleRow((1, 499), "Gamma Ray", "GAPI", 150, 300, 1, 40, "#e00000"),
                              ScaleRow((665, 1663), "Delta Time", "US/F", 140, 40, 1, 10, "#e00000"),
                              ScaleRow((665, 1663), "Delta Time", "US/F", 240, 140, 1, 40, "#e00000"),
                              ScaleRow((1, 499), "Caliper", "IN", 6, 16, 1, 70, "#00a000"),
                              ScaleRow((1, 499), "Caliper", "IN", 16, 26, 1, 100, None)])
    by = {c["mnemonic"]: c for c in inked}
    assert by["GR"]["colour"] == "#00008f" and by["GR"]["backup_colour"] == "#e00000"
    assert by["DT"]["colour"] == "#e00000" and by["DT"]["backup"] == "low" and "backup_colour" not in by["DT"]
    assert by["CALI"]["backup"] == "high" and "colour" not in by["CALI"]
    for c in inked:
        Calibration.from_dict({"version": 1, "depth_axis": "y", "depth_unit": "FT", "step": 0.5,
                               "depth_picks": [[0, 100], [100, 110]], "curves": [c]})  # each a valid curve


@needs_ocr
def test_a_pen_sample_in_colour_proposes_its_curve_with_that_ink():
    """A colour print's scale box: ``0  Gamma Ray (GAPI)  150`` over a red rule, ``6  Caliper (IN)  16`` over a
    black one. The red pen's curve is proposed with its ink (the tracer then follows that ink), the black one with
    none (its line style tells it apart), and a grey scan's with none."""
    from core.digitize.calibrate.scale_box import read_rows

    rgb = np.full((160, 620, 3), 250, np.uint8)
    for text, x, y in (("0", 12, 40), ("Gamma Ray (GAPI)", 200, 40), ("150", 560, 40),
                       ("6", 12, 110), ("Caliper (IN)", 230, 110), ("16", 575, 110)):
        cv2.putText(rgb, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 0), 2, cv2.LINE_AA)
    cv2.line(rgb, (12, 62), (600, 62), (215, 25, 30), 3)
    cv2.line(rgb, (12, 132), (600, 132), (0, 0, 0), 3)
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    rows = {r.name: r for r in read_rows(grey, [(0.0, 619.0)], rgb)}
    assert set(rows) == {"Gamma Ray", "Caliper"}, rows
    r, g, b = (int(rows["Gamma Ray"].colour[k : k + 2], 16) for k in (1, 3, 5))
    assert r > 150 and g < 90 and b < 90, rows["Gamma Ray"]  # the rule's red, not the text's black
    assert rows["Caliper"].colour is None
    assert all(r.colour is None for r in read_rows(grey, [(0.0, 619.0)]))  # a grey scan: no colours


def test_a_pen_sample_is_told_by_where_its_ink_lies():
    """Solid, dashed and dotted rules, each with a digit's two short strokes on the row as well."""
    from core.digitize.calibrate.scale_box import _pen_sample

    def sample(on: int, off: int) -> np.ndarray:
        img = np.full((12, 400), 255, np.uint8)
        x = 40
        while x < 390:
            img[5:7, x : x + on] = 0
            x += on + off
        img[2:10, 4:6] = img[2:10, 14:16] = 0  # a "0" the row passes through
        return img

    assert _pen_sample(sample(400, 0), 0, 12) == 1
    assert _pen_sample(sample(14, 6), 0, 12) == 2
    assert _pen_sample(sample(3, 4), 0, 12) == 3
    assert _pen_sample(np.full((12, 400), 255, np.uint8), 0, 12) == 1  # no sample: solid, the common pen


def test_one_misread_among_round_depths_leaves_the_consensus_instead_of_vetoing_it():
    """A 1-bit casing log read 99 beside its 100 ft line among 200 … 600: the lot was refused ("these step by
    1"); the misread goes and the rest make the picks."""
    from core.digitize.calibrate.depth_fit import fit_section
    from core.digitize.calibrate.proposal_records import ProposedSection

    px_per_ft = 2.0
    numbers = [DepthNumber(1000 + px_per_ft * (d - 100), float(d), str(d)) for d in (200, 300, 400, 500, 600)]
    numbers.insert(0, DepthNumber(1000.0 + 1.5, 99.0, "99"))  # one foot off its line: within the fit's reach
    sec = ProposedSection(900, 2000)
    fit_section(sec, numbers, None, "FT")
    assert sec.refused is None and [v for _, v in sec.picks] == [200.0, 300.0, 400.0, 500.0, 600.0]
    assert not numbers[0].kept


def test_depths_that_restart_in_one_section_are_two_passes():
    """A casing log's main and repeat passes in one stretch of grid: 100 … 600 then 200 … 600 again. Two
    sections, each with its own picks, the second a repeat; a single misread in a pass splits nothing."""
    from core.digitize.calibrate.depth_fit import fit_section
    from core.digitize.calibrate.log_passes import name_sections, split_passes
    from core.digitize.calibrate.proposal_records import ProposedSection

    main = [DepthNumber(1000 + 20.0 * (d - 100), float(d), str(d)) for d in range(100, 650, 50)]
    repeat = [DepthNumber(13000 + 20.0 * (d - 200), float(d), str(d)) for d in range(200, 650, 50)]
    sec = ProposedSection(900, 22500)
    parts = split_passes(sec, main + repeat)
    assert len(parts) == 2 and parts[0].start == 900 and parts[1].stop == 22500
    assert main[-1].pixel < parts[0].stop == parts[1].start < repeat[0].pixel
    for part in parts:
        fit_section(part, main + repeat, None, "FT")
    name_sections(parts)
    assert [p.kind for p in parts] == ["main", "repeat"]
    assert [v for _, v in parts[1].picks] == [float(d) for d in range(200, 650, 50)]
    misread = main[:5] + [DepthNumber(main[5].pixel, 9.0, "9")] + main[6:]  # a 350 read as 9
    assert len(split_passes(ProposedSection(900, 12000), misread)) == 1
    # passes whose numbers lie close across the cut (within the section's edge allowance of it): split once, not
    # again and again (iqa_33-023-01145-0002's proposal died of a RecursionError)
    close = [DepthNumber(1000 + 0.24 * (d - 100), float(d), str(d)) for d in range(100, 650, 50)]  # 12 px apart
    close += [DepthNumber(close[-1].pixel + 30 + 0.24 * (d - 200), float(d), str(d)) for d in range(200, 650, 50)]
    parts = split_passes(ProposedSection(900, 1500), close)
    assert len(parts) == 2 and close[10].pixel < parts[0].stop < close[11].pixel
    # one pass among many misreads (iqa_33-023-01145-0002: 18 depths kept, 110 numbers rejected): a misread that
    # steps back splits nothing, since two lines hold no more of the numbers than one
    noisy = main + [DepthNumber(main[4].pixel + 200, 8.0, "8")] + [
        DepthNumber(950 + 37.0 * k, float(v), str(v)) for k, v in enumerate([0, 30, 0, 8, 700, 0, 30, 0, 8, 30] * 2)]
    assert len(split_passes(ProposedSection(900, 12000), noisy)) == 1


def test_a_straight_run_of_misreads_is_no_pass():
    """iqa_33-025-02289-0001 prints 100 … 10400 ft every 100 ft (500 px); its OCR read 1000-1900 as 4000-4900
    (a 1 read as 4) and 10000-10400 as 40000-40400, each run on a straight line of its own. Neither is a pass: the
    first sits among numbers of the log's own line (200, 300 above it), the second begins beyond the log's end.
    One section, its picks on the log's line; each misread keeps its last three digits, which are those of the
    depth the line gives at its row, so it is completed from the line (issue #59: 4300 read for 1300, 800 for
    9800) and the picks run to the log's end, where they were read short."""
    from core.digitize.calibrate.depth_fit import fit_section
    from core.digitize.calibrate.log_passes import split_passes
    from core.digitize.calibrate.proposal_records import ProposedSection

    def at(depth: int, text: str) -> DepthNumber:
        return DepthNumber(31162 + 5.0 * depth, float(text), text)

    numbers = [at(d, str(d)) for d in (200, 300, 700)]
    numbers += [at(d, str(d + 3000)) for d in range(1000, 2000, 100)]  # 1 read as 4
    numbers += [at(d, str(d)) for d in range(2000, 9800, 100)]
    numbers += [at(9800, "800"), at(9900, "900")] + [at(d, str(d + 30000)) for d in range(10000, 10500, 100)]
    parts = split_passes(ProposedSection(31301, 83614), numbers)
    assert [(p.start, p.stop) for p in parts] == [(31301, 83614)]
    fit_section(parts[0], numbers, 100.0, "FT")
    assert [v for _, v in parts[0].picks] == [200.0, 300.0, 700.0] + [float(d) for d in range(1000, 10500, 100)]
    assert all(abs(px - (31162 + 5.0 * v)) < 0.5 for px, v in parts[0].picks)
    assert {n.text for n in numbers if n.kept and n.text != f"{n.value:.0f}"} == {
        *(str(d + 3000) for d in range(1000, 2000, 100)), "800", "900", *(str(d + 30000) for d in range(10000, 10500, 100))}
    # a real repeat after it still splits: 9000-9700 logged again past the main pass's end, the grid running on
    repeat = [DepthNumber(83000 + 5.0 * (d - 9000), float(d), str(d)) for d in range(9000, 9800, 100)]
    main = [at(d, str(d)) for d in range(2000, 9800, 100)]
    parts = split_passes(ProposedSection(40000, 87500), main + repeat)
    assert len(parts) == 2 and main[-1].pixel < parts[0].stop < repeat[0].pixel


def test_a_number_snaps_to_its_line_only_as_the_others_do():
    """A label goes onto the nearest depth line where that moves it as much as the scan's other labels move (they
    are all printed the same way on their lines); a finer grid line 7 px off, or no line near, moves it by the
    others' median instead (a synthetic log's 5700 and 5800 ft went 7 px either way: a pick 2.5 ft off)."""
    from core.digitize.calibrate.number_placement import snap_to_depth_lines

    printed = [500.0, 830.0, 1160.0, 1490.0, 1820.0, 2150.0]  # every label printed 3 px below where it is read
    # the third and fourth labels' own lines were not found; a finer line lies 4 px above the one, 3 px below the other
    lines = np.array([500.0, 830.0, 1153.0, 1493.0, 1820.0, 2150.0])
    numbers = [DepthNumber(p - 3.0, 5000.0 + 100 * k, str(5000 + 100 * k)) for k, p in enumerate(printed)]
    numbers.append(DepthNumber(2600.0, 6200.0, "6200"))  # no line near it
    snap_to_depth_lines(numbers, lines)
    assert [n.pixel for n in numbers] == [*printed, 2603.0]
    # too few numbers to say how the scan prints them: each goes onto its nearest line, as before
    few = [DepthNumber(1157.0, 5200.0, "5200"), DepthNumber(2600.0, 6200.0, "6200")]
    snap_to_depth_lines(few, lines)
    assert [n.pixel for n in few] == [1153.0, 2600.0]


@needs_ocr
def test_a_log_read_with_runs_of_misreads_is_one_pass_and_the_pages_other_logs_have_their_own(shared_data):
    """iqa_33-025-02289-0001: a cement-evaluation print with three logs of one interval, a 1:600 image log, a
    1:12,000 summary and the 1:240 GR log (100-10400 ft). The GR log was cut into three sections, one placed on the
    misreads 4000-4900 and one at 40,000 ft; it is one section with the depths as printed. The 1:600 log above it,
    laid out otherwise and outvoted by the GR log's lines, was no section at all; it is found in its own lines and
    reads its own depths (2 px a foot at 100 dpi), and being the first it is the main log."""
    from core.io.scan import load_scan

    scan = load_scan(shared_data / "scans" / "iqa_33-025-02289-0001.tif")
    prop = propose(scan.image, dpi=100.0, rgb=scan.rgb)
    gr = [s for s in prop.sections if s.picks and s.start < 40000 < s.stop]
    assert len(gr) == 1 and abs(gr[0].start - 31301) < 100 and abs(gr[0].stop - 83614) < 100, prop.sections
    depths = [v for _, v in gr[0].picks]
    assert len(depths) >= 50 and depths[0] <= 300 and depths[-1] >= 9600, depths
    assert all(abs(px - (31162 + 5.0 * v)) <= 2 * 5.0 for px, v in gr[0].picks)  # within 2 ft of where printed
    image_log = next(s for s in prop.sections if s.picks)
    assert image_log.kind == "main" and image_log.stop < 26000 and len(image_log.picks) >= 10, image_log
    (p0, d0), (p1, d1) = image_log.picks[0], image_log.picks[-1]
    assert abs((p1 - p0) / (d1 - d0) - 2.0) < 0.02  # 1:600 at 100 dpi
    assert gr[0].kind == "log"  # another scale of the same interval: no repeat pass


@needs_ocr
def test_tesseract_runs_one_thread_a_call_and_leaves_this_process_alone():
    """OMP_THREAD_LIMIT=1 for the Tesseract process only (0.93 -> 0.26 s a depth-column window): this process's
    environment, which PyTorch's OpenMP reads when it loads and the app's training child inherits, is as it was."""
    import os
    import subprocess

    import pytesseract

    from core.digitize.calibrate import ocr

    before = os.environ.get("OMP_THREAD_LIMIT")
    img = np.full((60, 200), 255, np.uint8)
    cv2.putText(img, "8250", (20, 42), cv2.FONT_HERSHEY_SIMPLEX, 1.0, 0, 2, cv2.LINE_AA)
    assert "8250" in [t.strip() for t in ocr.image_to_data(img, "--psm 11")["text"]]
    assert os.environ.get("OMP_THREAD_LIMIT") == before
    # what a process started as pytesseract starts Tesseract sees: the limit, beside the rest of the environment
    env = pytesseract.pytesseract.subprocess_args()["env"]
    seen = subprocess.run(["sh", "-c", 'echo "$OMP_THREAD_LIMIT $PATH"'], env=env, capture_output=True, text=True)
    assert seen.stdout.split() == ["1", os.environ["PATH"]] and os.environ.get("OMP_THREAD_LIMIT") == before


def test_a_scale_box_ending_on_an_inner_line_splits_the_track_there():
    from core.digitize.calibrate.tracks import split_at_boxes

    lines = [614.0, 664.0, 864.0, 1114.0, 1364.0, 1563.0]
    assert split_at_boxes([(614.0, 1563.0)], [(614.0, 1112.0)], lines) == [(614.0, 1114.0), (1114.0, 1563.0)]
    assert split_at_boxes([(614.0, 1563.0)], [(614.0, 1563.0)], lines) == [(614.0, 1563.0)]  # the box spans it all
    assert split_at_boxes([(614.0, 1563.0)], [(614.0, 1000.0)], lines) == [(614.0, 1563.0)]  # no line at its edge
    assert split_at_boxes([(5.0, 504.0), (614.0, 1563.0)], [(5.0, 504.0)], lines) == [(5.0, 504.0), (614.0, 1563.0)]


def test_a_mud_logs_thousand_numbers_split_and_fit_in_a_fraction_of_a_second():
    """A mud log's description read as numbers (1,245 of them, issue #59) among its depth labels: the pass splitter
    fitted a line through every pair at every step back (n⁴; 50 minutes). The labels' line is found among them
    at once, and the misreads split nothing."""
    import time

    from core.digitize.calibrate.depth_fit import fit_section
    from core.digitize.calibrate.log_passes import split_passes
    from core.digitize.calibrate.proposal_records import ProposedSection

    rng = np.random.default_rng(59)
    labels = [DepthNumber(4600 + 5.0 * (d - 7250), float(d), str(d)) for d in range(7250, 17800, 50)]
    noise = [DepthNumber(float(p), float(v), str(v)) for p, v in zip(rng.uniform(4500, 57500, 1040),
                                                                      rng.integers(0, 20000, 1040))]
    numbers = sorted(labels + noise, key=lambda n: n.pixel)
    t0 = time.perf_counter()
    parts = split_passes(ProposedSection(4549, 57550), numbers, 100.0, "FT")
    fit_section(parts[0], numbers, 100.0, "FT")
    assert time.perf_counter() - t0 < 5.0
    assert len(parts) == 1 and len(parts[0].picks) >= 0.95 * len(labels)
    assert all(abs(px - (4600 + 5.0 * (d - 7250))) < 1.0 for px, d in parts[0].picks)


def test_a_short_repeat_with_two_printed_depths_borrows_the_main_passs_scale():
    """A repeat pass prints 10500 and 10600 only (two labels, 500 px apart at 5 px a foot): no three agree, but the
    two lie on a line of the main pass's scale, so they are its picks; two numbers at another scale are not."""
    from core.digitize.calibrate.depth_fit import fit_section
    from core.digitize.calibrate.proposal_records import ProposedSection

    repeat = [DepthNumber(30218.0, 10500.0, "10500"), DepthNumber(30718.0, 10600.0, "10600")]
    sec = ProposedSection(29932, 30930)
    fit_section(sec, repeat, 100.0, "FT")
    assert not sec.picks and "3 needed" in sec.refused
    fit_section(sec, repeat, 100.0, "FT", borrowed=[1 / 5.0])
    assert sec.picks == [(30218.0, 10500.0), (30718.0, 10600.0)] and sec.refused is None
    off = ProposedSection(29932, 30930)
    fit_section(off, [repeat[0], DepthNumber(30618.0, 10600.0, "10600")], 100.0, "FT", borrowed=[1 / 5.0])
    assert not off.picks  # 100 ft in 400 px: not the main pass's 5 px a foot
