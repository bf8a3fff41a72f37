"""Printed depths read only where numbers can be: digit-sized ink found first, its rows packed and read."""

import threading
import time

import cv2
import numpy as np
import pytest

from core.digitize.calibrate.depth_numbers import _pack, number_rows, only_numbers, read_numbers
from core.digitize.calibrate.ocr import ocr_available

needs_ocr = pytest.mark.skipif(ocr_available() is not None, reason="Tesseract is not installed")
DPI = 100.0


def _strip(sideways: bool = False, length: int = 6000, every: int = 500) -> tuple[np.ndarray, list[int]]:
    """A depth column (depth down the rows, 60 px across): a depth every ``every`` rows, upright or turned; a rule
    across every 50 rows, a border along each edge and a dashed curve down its middle, none of them numbers."""
    img = np.full((length, 60), 250, np.uint8)
    img[:, :2] = img[:, -2:] = 20
    for y in range(0, length, 50):
        img[y, :] = 120
    for y in range(0, length, 14):  # a dashed curve: dashes 8 px long, 1 px wide
        img[y : y + 8, 12] = 40
    rows = []
    for k, y in enumerate(range(every // 2, length - 100, every)):
        text = str(5000 + 50 * k)
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.45, 1)
        patch = np.full((th + 8, tw + 8), 250, np.uint8)
        cv2.putText(patch, text, (4, th + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.45, 20, 1, cv2.LINE_AA)
        if sideways:
            patch = np.rot90(patch, 3)
        y0, x0 = y - patch.shape[0] // 2, 30 - patch.shape[1] // 2
        img[y0 : y0 + patch.shape[0], x0 : x0 + patch.shape[1]] = patch
        rows.append(y)
    return img, rows


def _ink(img: np.ndarray) -> np.ndarray:
    ink = img < 128
    # what the proposal takes away before looking for digits: straight ink (borders, rules across)
    straight = cv2.morphologyEx(ink.astype(np.uint8), cv2.MORPH_OPEN, np.ones((1, 30), np.uint8)) | \
        cv2.morphologyEx(ink.astype(np.uint8), cv2.MORPH_OPEN, np.ones((30, 1), np.uint8))
    return ink & (straight == 0)


def test_numbers_are_found_by_their_digits_and_how_the_digits_lie_says_how_they_are_printed():
    upright, rows = _strip()
    found = number_rows(_ink(upright), DPI)
    assert len(found.spans) == len(rows) and found.side_by_side > found.stacked and not found.sideways
    for (a, b), y in zip(found.spans, rows):  # each number's rows, a little paper about them; not the dashes
        assert a < y < b and b - a < 40
    assert found.rows < 0.1 * upright.shape[0]  # what is read is a tenth of the strip
    turned, _ = _strip(sideways=True)
    assert number_rows(_ink(turned), DPI).sideways
    # a texture of digit-sized bits (a curve broken by a grid into pieces) is no column of numbers
    noise = np.zeros((3000, 60), bool)
    for y in range(0, 3000, 9):
        noise[y : y + 6, 20:26] = True
    assert number_rows(noise, DPI).spans == []


def test_packed_stretches_keep_their_rows():
    img = np.full((100, 3), 240, np.uint8)
    img[:, 1] = np.arange(100)
    packed, starts, origins = _pack(img, [(10, 20), (50, 55)], spacer=4)
    assert packed.shape == (4 + 10 + 4 + 5 + 4, 3 + 2 * 4)
    assert list(starts) == [4, 18] and list(origins) == [10, 50]
    assert (packed[18:23, 4:7] == img[50:55]).all()
    assert (packed[14:18] == 240).all() and (packed[:4] == 240).all()  # the strip's own paper between them


@needs_ocr
@pytest.mark.parametrize("sideways", [False, True])
def test_only_the_rows_with_numbers_are_read_and_each_number_is_put_back_at_its_row(sideways):
    img, rows = _strip(sideways=sideways)
    found = number_rows(_ink(img), DPI)
    numbers = read_numbers(only_numbers(img, found), sideways, found=found)
    by_text = {t: r for r, t in numbers}
    for k, y in enumerate(rows):
        assert str(5000 + 50 * k) in by_text, numbers
        assert abs(by_text[str(5000 + 50 * k)] - y) <= 2.0, (y, numbers)


@needs_ocr
def test_a_picture_tesseract_fails_on_costs_its_numbers_only_and_a_cancel_stops_the_reading(monkeypatch):
    import core.digitize.calibrate.depth_numbers as dn

    img, rows = _strip(length=40000, every=400)
    found = number_rows(_ink(img), DPI)
    real = dn._tesseract_numbers
    calls = []

    def flaky(picture, psm):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("Tesseract: Image too large")
        return real(picture, psm)

    monkeypatch.setattr(dn, "_tesseract_numbers", flaky)
    img = only_numbers(img, found)
    numbers = read_numbers(img, False, found=found)
    assert 0 < len(numbers) < len(rows)  # the first window's numbers lost, the rest read

    class Cancelled(Exception):
        pass

    def cancel(done, total):
        raise Cancelled

    before = threading.active_count()
    with pytest.raises(Cancelled):
        read_numbers(img, False, cancel, found=found)
    for _ in range(50):  # the windows not begun are dropped: no reading goes on behind the cancel
        if threading.active_count() <= before:
            break
        time.sleep(0.1)
    assert threading.active_count() <= before


def test_a_number_read_on_its_glyphs_knows_their_rows_and_a_section_without_lines_puts_it_where_the_page_does():
    """A 1:12,000 summary prints no depth lines: its numbers stand on their depths as the page's other sections'
    stand on their lines. Sitting on them (the others moved down by half a glyph): at their glyphs' foot, not a
    drawn line's gap below it; hanging from them: at their head; centred on them: moved as the others were."""
    from core.digitize.calibrate.depth_numbers import glyph_rows
    from core.digitize.calibrate.number_placement import place_without_lines
    from core.digitize.calibrate.proposal_records import DepthNumber

    img, rows = _strip()
    found = number_rows(_ink(img), DPI)
    for a, b in found.groups:
        assert glyph_rows((a + b) / 2.0, found) == (a, b)
    assert glyph_rows(found.groups[0][0] - 30.0, found) is None and glyph_rows(100.0, None) is None

    def placed(moves: list[float], glyphs=(100, 108)) -> float:
        n = DepthNumber(104.0, 1000.0, "1000", glyphs=glyphs)
        place_without_lines([n], moves)
        return n.pixel

    assert placed([3.5, 2.0, 2.5]) == 107.5  # sitting on their lines: the last row of ink's lower edge
    assert placed([-3.5, -3.0]) == 99.5  # hanging from them: the first row's upper edge
    assert placed([0.5, 0.0, 1.0]) == 104.5  # centred on them: moved as they were
    assert placed([3.5, 2.5], glyphs=None) == 107.0  # its glyphs unknown: moved as they were
    assert placed([]) == 104.0  # no other section to say: left where it was read


def test_a_packed_strip_tesseract_finds_no_line_in_is_read_as_sparse_text(monkeypatch):
    """Some packed strips of small, touching digits (a 72-dpi mud log's sideways depths, 8 px high) read as nothing
    at all in Tesseract's block layout and as numbers in its sparse one: read so before the strip is given up; a
    strip whose block reading gives numbers is not read twice."""
    import core.digitize.calibrate.depth_numbers as dn

    img, rows = _strip()
    found = number_rows(_ink(img), DPI)
    layouts = []

    def tesseract(picture, psm):
        layouts.append(psm)
        if psm == dn.PSM_BLOCK:
            return []
        return [(10.0, 20.0 + 60.0 * k, 30.0, 12.0, str(5000 + 50 * k)) for k in range(3)]

    monkeypatch.setattr(dn, "_tesseract_numbers", tesseract)
    numbers = read_numbers(only_numbers(img, found), False, found=found)
    assert dn.PSM_BLOCK in layouts and dn.PSM_SPARSE in layouts
    assert {t for _, t in numbers} == {"5000", "5050", "5100"}
    layouts.clear()
    monkeypatch.setattr(dn, "_tesseract_numbers", lambda picture, psm: layouts.append(psm) or
                        [(10.0, 20.0, 30.0, 12.0, "5000")])
    assert read_numbers(only_numbers(img, found), False, found=found)
    assert set(layouts) == {dn.PSM_BLOCK}


def test_a_number_whose_glyphs_ran_together_with_other_ink_stays_where_it_was_read():
    """An upright number's glyphs are a digit high: a group of blobs three digits tall is a number run together
    with the ink beside it (33-025-02190-0001's 10500: 45 rows for 13-row digits, its centre 7 px above the line
    Tesseract's box was within half a pixel of). The number stays where it was read; on its own glyphs it moves."""
    from core.digitize.calibrate.depth_numbers import TALL_GROUP_DIGITS, _on_glyphs

    groups = [(3211, 3224), (20813, 20858)]
    tallest = TALL_GROUP_DIGITS * 13.0
    assert _on_glyphs(20842.6, groups, 13.0, tallest) == 20842.6
    assert _on_glyphs(20842.6, groups, 13.0) == 20835.5  # without the bound: the run-together group's centre
    assert _on_glyphs(3216.0, groups, 13.0, tallest) == 3217.5
