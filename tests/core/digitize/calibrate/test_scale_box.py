"""The scale boxes read (``core/digitize/calibrate/scale_words.py``, ``printed_words.py``, ``dropped_ends.py``,
``scale_entries.py``, ``scale_box.py``, ``body_scales.py``,
``curve_names.py``): words into entries for every layout the archive prints, rows into curves, scale changes into
the calibration; and, on the labelled archive scans where they are present, the share of boxes' curves read right."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from core.digitize.calibrate import dropped_ends as de
from core.digitize.calibrate import printed_words as pw
from core.digitize.calibrate import scale_entries as se
from core.digitize.calibrate import scale_words as sw
from core.digitize.calibrate.curve_names import mnemonic_for, names_a_curve, split_name
from core.digitize.calibrate.ocr import ocr_available
from core.digitize.calibrate.scale_box import ScaleRow, box_top, changes_by_depth, curves_from_rows

needs_ocr = pytest.mark.skipif(ocr_available() is not None, reason="Tesseract is not installed")
LABELS = Path(__file__).resolve().parents[3] / "data" / "archive_labels"


def _line(*words: tuple[float, str], y: float = 100.0, h: float = 10.0, cell=(0.0, 400.0)) -> pw.Line:
    """A line of words at row ``y``, each (left column, text), about 7 px a letter."""
    return pw.Line([pw.Word(x, y, x + 7 * len(t), y + h, t) for x, t in words], cell)


def test_printed_ends_are_numbers_and_names_are_not():
    assert pw.number("150") == 150 and pw.number("-7.5") == -7.5 and pw.number("−4") == -4
    assert pw.number("10,000") == 10000 and pw.number("0,2") == 0.2 and pw.number("150|") == 150
    assert pw.number(".5") == 0.5 and pw.number("3'") is None and pw.number("TT3") is None
    # a number glued to a bracket is split off it, and a wide "1" read apart from its digits is joined
    glued = pw.tokens(_line((2, "0"), (60, "3'"), (80, "Amplitude"), (160, "(mV)100")))
    assert [w.text for w in glued] == ["0", "3'", "Amplitude", "(mV)", "100"]
    assert [w.text for w in pw.tokens(_line((2, "1"), (11, "50")))] == ["150"]


def test_entries_in_every_layout_the_archive_prints():
    lines = [
        _line((2, "0"), (120, "Gamma"), (170, "Ray"), (200, "(GAPI)"), (380, "150"), y=10),  # one line
        _line((2, "150"), (120, "Gamma"), (170, "Ray"), (200, "(GAPI)"), (380, "300"), y=30),  # its backup
        _line((150, "Bit"), (180, "Size"), (215, "(BS)"), y=60),  # the name above ...
        _line((2, "6"), (190, "in"), (380, "16"), y=80),  # ... the ends with the unit between
        _line((150, "3'"), (170, "Amplitude"), (240, "x"), (255, "5"), y=110),  # a number in a name is no end
        _line((2, "0"), (190, "(mV)"), (380, "20"), y=130),
        _line((2, "1"), (380, "1000"), y=200),  # bare ends, apart: a legend's curves' (mud logs)
    ]
    got = {(e.mnemonic, e.left, e.right, e.unit, e.continues) for e in se.entries(lines)}
    assert got == {("GR", 0, 150, "GAPI", False), ("GR", 150, 300, "GAPI", False), ("BS", 6, 16, "IN", False),
                   ("AMP", 0, 20, "MV", False), (None, 1, 1000, "", False)}


def test_a_name_over_seven_lines_of_a_narrow_cell_keeps_its_sector_number():
    """A 75-dpi cement log's cell: ``Minimum / Acoustic / Impedance / #2 (MIN_ / AI2) / (MRAY) / -7.5 7.5``, the
    brackets read as ``(MIN`` and ``Al2)``: the name's words and its #2 give MIN_AI2."""
    cell = (56.0, 112.0)
    words = ["Minmum", "Accoustic", "Impedance", "#2 (MIN", "Al2)", "(MRAY)"]
    lines = [_line(*[(58 + 12 * k, t) for k, t in enumerate(w.split())], y=10 + 11 * i, h=8, cell=cell)
             for i, w in enumerate(words)]
    lines.append(_line((57, "-7.5"), (95, "7.5"), y=10 + 11 * len(words), h=8, cell=cell))
    [e] = se.entries(lines)
    assert (e.mnemonic, e.left, e.right, e.unit) == ("MIN_AI2", -7.5, 7.5, "MRAY")


def test_curve_names_the_archive_prints():
    assert split_name("Gamma Ray (GR_EDTC)") == ("Gamma Ray", "", "GR_EDTC")
    assert split_name("Gamma API (TVD) Track: 1")[2] is None  # (TVD) is a remark, not a mnemonic
    assert split_name("Caliper (CALI) HDRS-H")[2] == "CALI" and split_name("TT3 (usec)")[1] == "US"
    assert mnemonic_for("C3 (ppm)") == "C3" and mnemonic_for("Iso C4") == "IC4" and mnemonic_for("N C4") == "NC4"
    assert mnemonic_for("Mimimum Amplitude") == "MINAMP"  # a misprint one letter off a known name
    assert mnemonic_for("ROP Track: 1") == "ROP" and mnemonic_for("Average Acoustic Impedance #9") == "AV_AI9"
    # a cement log's radii: the name is surer than its small print's brackets, ``(ERAV)`` read ``(ERAY)``
    assert mnemonic_for("External radius Average") == "ERAV" and mnemonic_for("Internal radius Average") == "IRAV"
    assert names_a_curve("WOB", "UNITS") and not names_a_curve("Charted by", "")
    assert not names_a_curve("Depth in Feet scaled 1:240", "")


def test_rows_become_curves_and_a_gas_range_is_each_component():
    rows = [ScaleRow((700, 980), "GAS", "UNITS", 0, 100, 1, 10, "#e70808"),
            ScaleRow((700, 980), "C1-C4", "PPM", 0, 10000, 2, 30),
            ScaleRow((1, 499), "Gamma Ray", "GAPI", 0, 150, 1, 10, mnemonic="GRGC"),
            ScaleRow((1, 499), "Gamma Ray", "GAPI", 150, 300, 1, 30, mnemonic="GRGC", continues=True)]
    curves = {c["mnemonic"]: c for c in curves_from_rows(rows)}
    assert set(curves) == {"TG", "C1", "C2", "C3", "C4", "GRGC"}
    assert curves["C3"]["scale"] == [0, 10000] and curves["C3"]["class"] == 2
    assert curves["GRGC"]["backup"] == "high" and curves["TG"]["colour"] == "#e70808"


def test_a_scale_change_is_written_at_the_depth_its_row_is_printed():
    curves = [{"mnemonic": "TG", "scale": [0, 100], "track": [700, 980],
               "scale_changes": [{"from_pixel": 7500.0, "scale": [0, 300]}, {"from_pixel": 99999.0, "scale": [0, 1]}]}]
    picks = [(5000.0, 7000.0), (6000.0, 7100.0)]  # 10 px a foot
    [c] = changes_by_depth(curves, [(4549, 60000, picks)], picks)
    assert c["scale_changes"] == [{"from_depth": 7250.0, "scale": [0, 300]}, {"from_depth": 16499.9, "scale": [0, 1]}]
    assert "scale_changes" in curves[0] and "from_pixel" in curves[0]["scale_changes"][0]  # the proposal's unchanged
    [draft] = changes_by_depth(curves, [], [])  # no depths yet: the change waits for them
    assert "scale_changes" not in draft


def test_the_box_is_found_by_its_frame_not_the_page_s():
    """A box 1 in tall over a body at row 1000 of a 100-dpi page: its frame's inner walls start at row 900, the
    page's frame runs on up through the header."""
    img = np.full((1200, 600), 255, np.uint8)
    img[:, 5] = img[:, 594] = 0  # the page's frame, up to the top
    img[900, 5:595] = 0  # the box's top rule
    for x in (200, 400):
        img[900:1200, x] = 0  # the box's walls, on down the log as track borders
    assert abs(box_top(img, 1000, 0, 100.0) - (900 - 25)) <= 2  # less a title's height (0.25 in)


@needs_ocr
def test_a_rendered_box_is_read_whole_lone_digits_and_minus_signs_too():
    """A box drawn in three cells: ``0 Gamma Ray (GAPI) 150`` over a red pen, the name above ``6  in  16``, and a
    name over ``-4 … 80`` with a bare minus. Every end is read, each row's pen and ink proposed with it."""
    from PIL import Image, ImageDraw, ImageFont

    from core.digitize.calibrate.scale_box import read_rows

    page = Image.new("RGB", (1200, 220), (250, 250, 250))
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=26)  # Pillow's own sans-serif, the same on every machine
    for text, x, y in (("0", 8, 18), ("Gamma Ray (GAPI)", 110, 18), ("150", 340, 18),
                       ("Bit Size (BS)", 520, 18), ("6", 408, 68), ("in", 590, 68), ("16", 760, 68),
                       ("CCL", 960, 18), ("-4", 808, 68), ("80", 1150, 68)):
        draw.text((x, y), text, fill=(0, 0, 0), font=font)
    rgb = np.asarray(page).copy()
    cv2.line(rgb, (8, 62), (390, 62), (215, 25, 30), 3)
    for x in (400, 800, 1199):
        cv2.line(rgb, (x, 0), (x, 219), (0, 0, 0), 2)
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    rows = {r.mnemonic: r for r in read_rows(grey, [(0.0, 400.0), (400.0, 800.0), (800.0, 1199.0)], rgb)}
    assert {m: (r.left, r.right) for m, r in rows.items()} == {"GR": (0, 150), "BS": (6, 16), "CCL": (-4, 80)}
    r, g, b = (int(rows["GR"].colour[k : k + 2], 16) for k in (1, 3, 5))
    assert r > 150 and g < 90 and b < 90  # the pen's red
    assert rows["BS"].colour is None


def _ends_picture(*blobs: tuple[int, int, int, int]) -> np.ndarray:
    """A cleaned picture (ink 0 on paper 255), 40 x 80 px, inked in the given (x, y, width, height) boxes."""
    clean = np.full((40, 80), 255, np.uint8)
    for x, y, w, h in blobs:
        clean[y : y + h, x : x + w] = 0
    return clean


def test_a_small_print_s_dropped_decimal_point_is_put_back():
    """``-7.5`` in 9-px type read ``-75``: one blob the size of a pixel or two on the digits' baseline between the
    7 and the 5 is the point. A speck above the digits (a rule's remnant) is none, nor is a gap with no ink."""
    digits = [(12, 10, 5, 9), (21, 10, 5, 9)]  # the 7 and the 5, rows 10-18
    with_point = _ends_picture(*digits, (18, 17, 2, 2), (5, 14, 4, 1))  # the point on the baseline; a minus
    speck_above = _ends_picture(*digits, (19, 8, 1, 1))
    bare = _ends_picture(*digits)
    read = []
    for clean, text in ((with_point, "-75"), (speck_above, "75"), (bare, "75")):
        line = pw.Line([pw.Word(5, 10, 26, 19, text), pw.Word(60, 10, 72, 19, "75")], (0.0, 80.0))
        de.decimal_points([line], clean)
        read.append(line.words[0].text)
    assert read == ["-7.5", "75", "75"]


def test_a_minus_sign_fused_to_its_first_digit_is_put_back():
    """``-0.05`` in 14-px type with the dash touching the 0 (one blob): a thin bar at mid-height leads into the
    0's stroke. A 0 with no bar, and a 4 (whose bar runs into its slanted stroke), keep their signs."""
    ring = [(20, 10, 2, 14), (20, 10, 8, 2), (20, 22, 8, 2), (26, 10, 2, 14)]  # a 0, rows 10-23
    fused = _ends_picture(*ring, (14, 16, 6, 2))
    plain = _ends_picture(*ring)
    read = []
    for clean, text in ((fused, "0.05"), (plain, "0.05"), (fused, "4")):
        line = pw.Line([pw.Word(14, 10, 28, 24, text), pw.Word(60, 10, 72, 24, "0.45")], (10.0, 80.0))
        de.minus_signs([line], clean)
        read.append(line.words[0].text)
    assert read == ["-0.05", "0.05", "4"]


def test_the_minus_sign_is_looked_for_within_its_own_cell():
    """Ends a cell apart (``7.5|-7.5`` over a 75-dpi cement log's sectors): the 5 of the cell to the left, a pixel
    past the wall, is not the leftmost blob of the next cell's number, so that number's own dash is found."""
    clean = _ends_picture((20, 10, 4, 8), (27, 14, 3, 1), (32, 10, 4, 8), (38, 10, 4, 8))  # a 5, then "-75"
    line = pw.Line([pw.Word(27, 10, 42, 18, "75"), pw.Word(70, 10, 78, 18, "75")], (25.0, 80.0))
    de.minus_signs([line], clean)
    assert line.words[0].text == "-75"


def test_a_decade_series_with_a_struck_tick_and_an_end_merged_with_its_wall():
    """A mud log's gas row ``1  10  100  1000`` over its grid, read ``10  10€  1006`` (the 1 lost in the left
    border, the 100 struck by a grid line, the 1000's last 0 merged with the right border): the struck tick holds
    its place, the fit says 100 there, which begins with the ``10`` read, so the ends are 1 and 1000. A struck tick
    whose digits the fit does not say gives no ends."""
    cell = (762.0, 1122.0)
    left, right, _ = se.ends_of(_line((876, "10"), (992, "10€"), (1094, "1006"), cell=cell))
    assert (left, right) == (1.0, 1000.0)
    assert se.ends_of(_line((876, "10"), (992, "30€"), (1094, "1000"), cell=cell))[:2] == (10.0, 1000.0)


@needs_ocr
def test_a_short_word_against_the_wall_across_from_a_number_is_that_end_read_again():
    """``-7.5 … 7.5`` in a cell whose right end Tesseract read ``Ze``: a word of three letters or fewer standing
    against the wall, across from a number, is read again alone as a number; a name's word clear of the wall is
    left alone."""
    from PIL import Image, ImageDraw, ImageFont

    page = Image.new("L", (400, 40), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=22)
    draw.text((6, 8), "-7.5", fill=0, font=font)
    draw.text((350, 8), "7.5", fill=0, font=font)
    draw.text((160, 8), "in", fill=0, font=font)
    clean = np.asarray(page).copy()
    x1 = float(np.flatnonzero((clean[:, 300:] < 128).any(axis=0))[-1] + 300)
    walled = pw.Line([pw.Word(6, 8, 48, 30, "-7.5"), pw.Word(350, 8, x1, 30, "Ze")], (0.0, x1 + 2))
    clear = pw.Line([pw.Word(6, 8, 48, 30, "-7.5"), pw.Word(160, 8, 180, 30, "in")], (0.0, 399.0))
    de.complete_ends([walled, clear], clean, 1.0)
    assert [w.text for w in walled.words] == ["-7.5", "7.5"]
    assert [w.text for w in clear.words][:2] == ["-7.5", "in"]


def test_a_curve_whose_ends_the_box_prints_is_no_legend_entry(monkeypatch):
    """An open-hole box prints ``0 … 10`` under ``Photoelectric Factor (PEFZ)`` beside a dashed pen sample: the
    name and its pen look like a mud log's legend entry, but the box gives its ends, so the body is not read for
    them (it took the body's bare ``2 … 7`` before). A legend curve the box gives no ends for is still looked for
    in the body."""
    from core.digitize.calibrate import body_scales as bs
    from core.digitize.calibrate.scale_box import Box

    item = se.LegendItem("Photoelectric Factor", "", "PEFZ", (0.0, 400.0), 5.0, 15.0, None, (200, 300))
    gas = se.LegendItem("TG", "UNITS", "TG", (0.0, 400.0), 25.0, 35.0, None, (200, 300))
    reading = sw.Reading([], [], np.full((60, 400), 255, np.uint8), 1.0, np.zeros((60, 400), bool), [])
    box = Box([ScaleRow((0.0, 400.0), "Photoelectric Factor", "", 0, 10, 2, 20, mnemonic="PEFZ")], reading, 100)

    class BodyRead(Exception):
        pass

    def no_body(*_args, **_kwargs):
        raise BodyRead

    monkeypatch.setattr(sw, "read_region", no_body)
    upright = np.full((1000, 400), 255, np.uint8)
    monkeypatch.setattr(se, "legend", lambda _reading: [item])
    assert bs.read_body(upright, None, [(0.0, 400.0)], (200, 900), 100.0, box).rows == []
    monkeypatch.setattr(se, "legend", lambda _reading: [item, gas])
    with pytest.raises(BodyRead):
        bs.read_body(upright, None, [(0.0, 400.0)], (200, 900), 100.0, box)


# -- the labelled archive --------------------------------------------------------------------------------------

# boxes of the develop half in the archive's layouts: a one-line Schlumberger-style cement box (02014), a casing
# inspection box (01979), the name-above-ends box of a colour open-hole log (01146), and the 75-dpi cement log's
# box of acoustic impedance sectors, names over seven lines (02310, its second log body)
ARCHIVE_BOXES = [("33-025-02014-0003", 0), ("33-025-01979-0007", 0), ("33-023-01146-0001", 0),
                 ("33-025-02310-0002", 1)]


@pytest.mark.slow
@needs_ocr
def test_the_labelled_boxes_curves_are_read(shared_data):
    """The box above a labelled section read with its labelled tracks: its curves, by mnemonic family and both ends
    as printed, against the labels read by eye. Asserts the share over the four boxes (46 of their 54 curves read
    with Tesseract 5.3.0 since lone digits are read again, 44 since decimal points, fused minus signs and ends
    against a wall are read, 33 before; the bound leaves room for another version), never one scan's number."""
    from core.digitize.calibrate.scale_box import read_box
    from core.evaluation.archive_labels import load_labels
    from core.evaluation.calibration_scores import _score_curves
    from core.io.scan import load_scan

    right = labelled = 0
    for name, k in ARCHIVE_BOXES:
        path = shared_data / "archive" / f"{name}.tif"
        if not path.exists():
            pytest.skip(f"{path} is not present")
        lab = load_labels(LABELS / f"{name}.labels.json")
        scan = load_scan(path)
        sec = lab.sections[k]
        floor = lab.sections[k - 1].rows[1] if k else 0
        box = read_box(scan.image, scan.rgb, [tuple(t) for t in sec.tracks], sec.rows[0],
                       max(floor, sec.rows[0] - 1100), scan.info.dpi[1])
        curves = curves_from_rows(box.rows)
        boxes = [b for b in lab.scale_boxes if b.section == k][:1]
        n, r, _ = _score_curves(type(lab)(**{**lab.__dict__, "scale_boxes": tuple(boxes)}), {"curves": curves})
        labelled, right = labelled + n, right + r
    assert labelled == 54 and right >= 0.7 * labelled, (right, labelled)


def test_split_json_names_the_boxes_used_here_as_developed_on():
    split = json.loads((LABELS / "split.json").read_text())
    assert all(name[:12] in split["develop"] for name, _ in ARCHIVE_BOXES)


def test_a_legend_s_curves_take_their_ends_from_the_body_and_changes_land_on_their_curves():
    """A mud log's legend names TG, C1 and C2 in a track; the body prints ``0 TG (units) 100`` and one row of bare
    ends ``1 … 1000``: TG takes its own, C1 and C2 the bare ones. A change printed for TG further down lands on TG
    (and not on another track's TG); one no curve takes is dropped and said."""
    from core.digitize.calibrate import body_scales as bs

    track = (700.0, 980.0)
    across = np.zeros((100, 1000), bool)
    across[10:12, 900:960] = True  # every legend item's pen sample, solid
    reading = sw.Reading([], [], np.full((100, 1000), 255, np.uint8), 1.0, across, [],
                         np.where(across, 0, 255).astype(np.uint8))
    legend = [se.LegendItem(n, "UNITS", n, (700.0, 980.0), 5.0, 15.0, None, (900, 960)) for n in ("TG", "C1", "C2")]
    entries = [pw.Entry("TG", "TG", "UNITS", 0, 100, track, 0, 10, 5),
               pw.Entry("", None, "", 1, 1000, track, 20, 30, 25)]
    rows = bs._name_ends(entries, legend, reading, None, track, 3000, 0)
    assert {(r.mnemonic, r.left, r.right, r.row) for r in rows} == {
        ("TG", 0, 100, 3005), ("C1", 1, 1000, 3025), ("C2", 1, 1000, 3025)}
    curves = curves_from_rows(rows + [ScaleRow((10.0, 300.0), "TG", "UNITS", 0, 50, 1, 0, mnemonic="TG")],
                              keep_names=True)
    changes = [bs.ScaleChange(["TG"], track, 7500.0, 0, 300), bs.ScaleChange(["ROP"], track, 9000.0, 0, 5)]
    bs.attach_changes(curves, changes)
    by = {(c["mnemonic"], c["track"][0]): c for c in curves}
    assert by[("TG2", 700.0)]["scale_changes"] == [{"from_pixel": 7500.0, "scale": [0, 300]}]  # numbered: a second TG
    assert "scale_changes" not in by[("TG", 10.0)] and [c.kept for c in changes] == [True, False]
    assert bs._peaks(np.array([0.1, 0.9, 0.8, 0.2, 0.7, 0.3]), 0.5, 2) == [1, 4]  # one match a row apart kept


# -- ends printed sideways (sideways_ends.py) -----------------------------------------------------------------------

RED, MAGENTA, BLUE = (255, 0, 0), (255, 0, 255), (0, 0, 255)


def _sideways_band(rows: int, prints: list[tuple[str, int, int, tuple[int, int, int]]]) -> np.ndarray:
    """A track 0-300 of a mud log printed sideways, 100 dpi: a grey grid, each ``(text, column, row, ink)`` printed
    turned (reading down the rows) with its top left at that column and row."""
    from PIL import Image, ImageDraw, ImageFont

    band = np.full((rows, 320, 3), 255, np.uint8)
    band[:, ::25] = band[::25, :] = 123  # the grid, drawn under the prints
    font = ImageFont.load_default(size=11)
    for text, col, row, ink in prints:
        x0, y0, x1, y1 = font.getbbox(text)
        word = Image.new("L", (x1 + 2, y1 + 2), 255)
        ImageDraw.Draw(word).text((1, 1), text, fill=0, font=font)
        turned = np.rot90(np.asarray(word), -1)  # reads down the rows
        h, w = turned.shape
        on = turned < 128
        band[row : row + h, col : col + w][on] = ink
    return band


def test_each_ink_is_taken_apart_even_where_two_prints_overlap():
    """A red print half under a magenta one: each pixel goes to the ink it is nearest, the grid and paper to none."""
    from core.digitize.calibrate.sideways_ends import _ink_masks

    band = np.full((10, 10, 3), 255, np.uint8)
    band[2:6, 2:6] = RED
    band[4:8, 4:8] = MAGENTA
    band[:, 0] = 123
    band[9, 9] = (250, 30, 20)  # an antialiased red
    red, magenta = _ink_masks(band, [RED, MAGENTA])
    assert red.sum() == 16 - 4 + 1 and magenta.sum() == 16 and red[9, 9] and not (red | magenta)[:, 0].any()
    assert not (red & magenta).any()


@needs_ocr
def test_a_sideways_track_s_ends_are_read_one_ink_at_a_time_and_a_scale_change_found_down_it():
    """Two curves' ends printed turned against the borders of a track, staggered, each in its ink, over a grid,
    with the red curve's line running down through its own ends' rows: each ink's ends are read apart. Printed
    again twice down the track, the same once and then with new right ends: only the second is a change, and
    it is read."""
    from core.digitize.calibrate import sideways_ends as se

    def ends_at(row: int, red_right: str, blue_right: str) -> list:
        return [("0", 4, row + 2, BLUE), ("0", 18, row + 2, RED), (red_right, 300, row, RED),
                (blue_right, 286, row, BLUE), ("TG (units)", 150, row, RED)]

    band = _sideways_band(900, ends_at(3, "100", "10000") + ends_at(300, "100", "10000")
                          + ends_at(600, "500", "50000"))
    band[:, 200:203][np.arange(900) % 200 < 150] = RED  # the red curve, broken where the grid crosses it
    first = se.read_ends([band[0:60]], (0.0, 310.0), [RED, BLUE], 100.0)[0]
    assert [(e.left, e.right) for e in first] == [(0, 100), (0, 10000)]
    changes = se.read_changes(band, (0.0, 310.0), [RED, BLUE], (0, 60), (60, 900), 100.0)
    assert [(abs(row - 600) <= 3, [(e.left, e.right) for e in ends]) for row, ends in changes] == [
        (True, [(0, 500), (0, 50000)])]


@needs_ocr
def test_a_lone_digit_end_is_read_again_alone_and_a_differing_digit_kept():
    """``6  in  16`` in 10-px type, the 6 read 5 in the box's one call (as the archive's caliper rows were): read
    again alone it is a 6; the 16 (two digits) and a name are left as read."""
    from PIL import Image, ImageDraw, ImageFont

    page = Image.new("L", (200, 30), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=13)
    for x, text in ((3, "6"), (90, "in"), (170, "16")):
        draw.text((x, 8), text, fill=0, font=font)
    clean = np.asarray(page).copy()
    boxes = {t: np.flatnonzero((clean[:, x - 1 : x + 20] < 128).any(axis=1)) for x, t in ((3, "6"), (170, "16"))}
    cols = {t: np.flatnonzero((clean[:, x - 1 : x + 20] < 128).any(axis=0)) + x - 1
            for x, t in ((3, "6"), (170, "16"))}
    words = [pw.Word(float(cols["6"][0]), float(boxes["6"][0]), float(cols["6"][-1] + 1), float(boxes["6"][-1] + 1),
                     "5"),
             pw.Word(90.0, 8.0, 100.0, 20.0, "in"),
             pw.Word(float(cols["16"][0]), float(boxes["16"][0]), float(cols["16"][-1] + 1),
                     float(boxes["16"][-1] + 1), "16")]
    line = pw.Line(words, (0.0, 200.0))
    de.reread_lone_digits([line], clean)
    assert [w.text for w in line.words] == ["6", "in", "16"]


def test_a_left_end_half_hidden_under_another_ink_is_the_glyph_the_others_read():
    """Blue and green ``0`` read at the left border; the red one beside them lies half under a magenta print: what
    shows of it is on a 0's strokes and the rest is under magenta, so red's left end is 0. A red 1 (turned: a bar
    across the 0's middle) half under the magenta is not."""
    from core.digitize.calibrate.sideways_ends import InkEnds, _hidden_lefts

    GREEN = (0, 200, 0)

    def ring(band, x, ink):
        band[3:8, x : x + 7] = ink
        band[4:7, x + 1 : x + 6] = 255

    def ends():
        return [InkEnds(0, 100, 2, 95), InkEnds(0, 100, 12, 95), InkEnds(None, 100, None, 95),
                InkEnds(None, None, None, None)]

    inks = [BLUE, GREEN, RED, MAGENTA]
    band = np.full((60, 100, 3), 255, np.uint8)
    ring(band, 2, BLUE)
    ring(band, 12, GREEN)
    ring(band, 22, RED)
    band[5:9, 21:30] = MAGENTA  # the magenta print over the red 0's lower half
    got = ends()
    _hidden_lefts(band, (0.0, 99.0), inks, got, 100.0)
    assert (got[2].left, got[2].left_x) == (0, 22) and got[3].left is None
    band[3:9, 21:30] = 255
    band[5, 22:29] = RED  # a turned 1's stroke ...
    band[6:9, 21:30] = MAGENTA  # ... beside magenta
    got = ends()
    _hidden_lefts(band, (0.0, 99.0), inks, got, 100.0)
    assert got[2].left is None
