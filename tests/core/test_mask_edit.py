import json

import numpy as np
import pytest

from core.common.errors import DataError
from core.io.project import open_project
from core.labelling.mask_edit import MaskEditor


def test_stroke_undo_redo_restores_exactly():
    m = np.zeros((200, 300), np.uint8)
    m[50:60, 10:20] = 2
    orig = m.copy()
    ed = MaskEditor(m)
    ed.begin_stroke()
    prev = None
    for c in range(5, 150, 3):
        ed.dab(55, c, 4, 1, prev)
        prev = (55, c)
    rect = ed.end_stroke()
    assert rect[1] - rect[0] < 20 and (m != orig).sum() > 100
    painted = m.copy()
    ed.undo()
    assert np.array_equal(m, orig)
    ed.redo()
    assert np.array_equal(m, painted)
    assert ed.history_nbytes < 2 * 20 * 160  # only the changed region is stored


def test_history_is_bounded():
    m = np.zeros((1000, 1000), np.uint8)
    ed = MaskEditor(m, history_bytes=50_000)
    for i in range(40):
        ed.begin_stroke()
        ed.dab(500, 25 * i, 20, 1)
        ed.end_stroke()
    assert ed.history_nbytes <= 50_000 and ed.can_undo()


def test_eraser_fill_and_polyline():
    m = np.zeros((100, 100), np.uint8)
    ed = MaskEditor(m)
    ed.polyline([(10, 10), (50, 60), (90, 90)], 2, 3)
    assert (m == 3).sum() > 100
    ed.begin_stroke()
    ed.dab(50, 60, 6, 0)
    ed.end_stroke()
    assert m[50, 60] == 0
    src = np.full((100, 100), 255, np.uint8)
    src[20:24, :] = 0  # an ink line in the scan
    ed.fill(21, 50, 1, source=src)
    assert (m[20:24] == 1).all() and (m[30:40, 0:5] == 0).all()
    ed.undo()
    assert (m[20:24, 0:5] == 0).all()


def test_project_paths_stay_inside(tmp_path):
    (tmp_path / "a.png").write_bytes(b"")
    proj = open_project(tmp_path)
    assert proj.scans == ["a.png"] and (tmp_path / "project.json").exists()
    (tmp_path / "project.json").write_text(json.dumps({"version": 1, "scans": ["../evil.png"]}))
    with pytest.raises(DataError, match="outside the project"):
        open_project(tmp_path)
    (tmp_path / "project.json").write_text("{broken")
    with pytest.raises(DataError, match="damaged"):
        open_project(tmp_path)


def test_a_scan_added_under_a_name_the_project_holds_in_another_format_is_refused(tmp_path):
    """*File › Add scans…* took well7.tif into a project holding well7.png: the two share well7.calib.json,
    well7.mask.png and well7.digitized.las (the added scan opened with the other's calibration, and each digitise
    wrote over the other's LAS), as `digitize FOLDER` refuses dup.png beside dup.tif. Refused by name, nothing
    copied."""
    from PIL import Image

    proj_dir, outside = tmp_path / "proj", tmp_path / "in"
    proj_dir.mkdir()
    outside.mkdir()
    Image.new("L", (40, 400), 255).save(proj_dir / "well7.png")
    proj = open_project(proj_dir)
    Image.new("L", (40, 400), 255).save(outside / "well7.tif")
    (outside / "well7.calib.json").write_text("{}")
    with pytest.raises(DataError, match="well7.png"):
        proj.add_scan(outside / "well7.tif")
    assert sorted(p.name for p in proj_dir.iterdir()) == ["project.json", "well7.png"]
    assert proj.scans == ["well7.png"]
