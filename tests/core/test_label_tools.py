"""The labelling tools: a straight line erased with one click, a brush that labels ink only, a stroke restyled."""

import cv2
import numpy as np

from core.labelling.label_tools import ink_in_disc, straight_line_at, stroke_at
from core.labelling.mask_edit import MaskEditor

H, W = 300, 1400


def _prefilled():
    """A pre-filled mask: a curve (class 1) crossing a grid line along depth (row 150, 3 px, painted 1 too)
    and a depth line across (column 700, 2 px), as a model that took the grid for curve paints them."""
    mask = np.zeros((H, W), np.uint8)
    c = np.arange(W)
    curve = np.rint(150 + 90 * np.sin(c / 120)).astype(int)
    for d in (-1, 0, 1):
        mask[curve + d, c] = 1
    mask[149:152, :] = 1  # along-depth grid line
    mask[:, 700:702] = 1  # across line
    return mask, curve


def test_a_click_on_a_grid_line_erases_the_whole_line_and_keeps_the_curve_crossing_it():
    mask, curve = _prefilled()
    ed = MaskEditor(mask)
    rect = ed.erase_line(150.4, 333.0)  # one click on the grid line, a pixel off its middle
    assert rect is not None
    assert mask[149:152, :].sum() < 0.15 * 3 * W  # the line is gone but where the curve crosses it
    c = np.arange(W)
    assert (mask[curve, c] == 1).mean() > 0.99  # the curve is whole, crossings included
    assert mask[:, 700:702].sum() > 0.8 * 2 * H  # another line untouched
    ed.undo()
    assert mask[149:152, :].all()  # one undo step brings the whole line back
    # the across line, with one click too
    assert ed.erase_line(40.0, 701.0) is not None
    assert mask[:, 700:702].sum() < 0.15 * 2 * H  # short stubs stay where the curve and the other line cross
    assert (mask[curve, c] == 1).mean() > 0.99


def test_a_click_on_a_curve_or_off_the_labels_erases_nothing():
    mask, curve = _prefilled()
    before = mask.copy()
    ed = MaskEditor(mask)
    assert ed.erase_line(float(curve[1000]), 1000.0) is None  # a wiggling curve is no straight line
    assert ed.erase_line(20.0, 200.0) is None  # paper
    assert np.array_equal(mask, before)
    assert straight_line_at(np.zeros((H, W), np.uint8), 150, 300) is None


def test_a_slightly_skewed_line_goes_whole():
    mask = np.zeros((H, W), np.uint8)
    cv2.line(mask, (0, 100), (W - 1, 115), 1, 2)  # 15 px over 1,400: a skewed scan
    ed = MaskEditor(mask)
    assert ed.erase_line(107.0, 700.0) is not None
    assert mask.sum() == 0


def test_ink_brush_labels_the_ink_under_a_wide_brush_and_not_the_paper():
    image = np.full((200, 400), 235, np.uint8)
    image[98:102, :] = 30  # a 4-px line
    image += np.random.default_rng(0).integers(0, 8, image.shape, dtype=np.uint8)  # paper texture
    mask = np.zeros(image.shape, np.uint8)
    ed = MaskEditor(mask)
    ed.begin_stroke()
    prev = None
    for col in range(20, 380, 15):  # a loose drag, 6 px off the line, brush radius 12
        ed.ink_dab(image, 106, col, 12, 2, prev)
        prev = (106, col)
    ed.end_stroke()
    assert (mask[98:102, 30:370] == 2).mean() > 0.95
    assert (mask[:96] | mask[104:]).sum() == 0  # nothing beside the line
    assert ink_in_disc(np.full((50, 50), 240, np.uint8), 25, 25, 10) is None  # plain paper
    ed.undo()
    assert mask.sum() == 0


def test_restyle_gives_a_whole_dotted_stroke_another_class():
    mask = np.zeros((100, 600), np.uint8)
    for col in range(10, 590, 8):  # dots 8 px apart: one dotted curve
        cv2.circle(mask, (col, 50), 1, 1, -1)
    cv2.line(mask, (0, 90), (599, 90), 1, 1)  # another stroke of class 1, apart
    ed = MaskEditor(mask)
    assert ed.restyle(51.0, 250.0, 3) is not None
    assert (mask[45:56] == 1).sum() == 0 and (mask[45:56] == 3).sum() > 100
    assert (mask[90] == 1).all()  # the other stroke kept its class
    assert stroke_at(mask, 10.0, 10.0) is None


def test_restyle_brush_changes_labelled_pixels_only_along_one_of_two_crossing_curves():
    mask = np.zeros((800, 200), np.uint8)  # depth down the rows
    r = np.arange(800)
    a = np.rint(40 + 120 * r / 799).astype(int)  # two solid-labelled curves crossing in an X
    b = np.rint(160 - 120 * r / 799).astype(int)
    for d in (-1, 0, 1):
        mask[r, a + d] = 1
        mask[r, b + d] = 1
    labelled = mask > 0
    ed = MaskEditor(mask)
    assert ed.restyle(100.0, float(a[100]), 2) is not None  # a click: touching curves are one stroke
    assert (mask[labelled] == 2).all()
    ed.undo()
    ed.begin_stroke()
    prev = None
    for row in range(0, 800, 20):  # a loose drag along curve a, 2 px off it, radius 5
        ed.restyle_dab(row, a[row] + 2, 5, 2, prev)
        prev = (row, a[row] + 2)
    ed.end_stroke()
    assert (mask[r, a] == 2).mean() > 0.98
    assert (mask[r, b] == 1).mean() > 0.95  # the other curve keeps its class but where they cross
    assert np.array_equal(mask > 0, labelled)  # no paper painted


def test_label_effort_counts_gestures_that_leave_a_clean_mask():
    """tools/label_effort.py (the README's labelling-effort figure): its counted gestures are run on the mask,
    and what they leave is scored; never more gestures with the label-faster tools than without."""
    import importlib.util
    from pathlib import Path

    from core.synth import generate_log

    path = Path(__file__).resolve().parents[2] / "tools" / "label_effort.py"
    spec = importlib.util.spec_from_file_location("label_effort", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    r = tool.effort(generate_log(tool.EFFORT_SEED, 1600, 384, "x", style="uniform", name="e"), classical=False)
    assert r["after"] <= r["before"]
    assert r["end"] > max(r["start"], 0.98)
