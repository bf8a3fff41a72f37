import lasio
import numpy as np
import pytest

from core.common.errors import LasError
from core.io.las_io import NULL, LasCurve, read_las, write_las


def test_roundtrip_exact_header_and_values(tmp_path):
    depth = np.round(1000.0 + 0.5 * np.arange(401), 4)
    gr = 75 + 40 * np.sin(depth / 7.0)
    dt = 90 + 20 * np.cos(depth / 11.0)
    gr[10:15] = np.nan  # an honest gap
    p = tmp_path / "out.las"
    write_las(
        p, depth, [LasCurve("GR", "GAPI", "Gamma ray", gr), LasCurve("DT", "US/F", "Sonic", dt)],
        depth_unit="FT", step=0.5, well={"WELL": "TEST 1", "COMP": "ACME"},
        provenance={"source scan": "scan.png", "model": "demo.safetensors"},
    )
    las = lasio.read(str(p))
    assert las.version["VERS"].value == 2.0
    assert las.well["STRT"].value == 1000.0 and las.well["STOP"].value == 1200.0
    assert las.well["STEP"].value == 0.5 and las.well["NULL"].value == NULL
    assert las.well["STRT"].unit == "FT" and las.curves[0].mnemonic == "DEPT" and las.curves[0].unit == "FT"
    assert [c.mnemonic for c in las.curves] == ["DEPT", "GR", "DT"]
    assert las.curves["GR"].unit == "GAPI" and las.curves["GR"].descr == "Gamma ray"
    assert np.allclose(las.index, depth)
    ok = np.isfinite(gr)
    assert np.allclose(las["GR"][ok], gr[ok], atol=5e-5)
    assert np.all(np.isnan(las["GR"][10:15]))  # NULL read back as missing
    assert "-999.25" in p.read_text()
    assert "source scan: scan.png" in las.other and "model: demo.safetensors" in las.other
    back = read_las(p)
    assert back.step == 0.5 and back.depth_unit == "FT" and back.mnemonics == ["GR", "DT"]
    assert np.allclose(back.curve("DT").values, dt, atol=5e-5)


def test_metric_step_exact(tmp_path):
    depth = np.round(142.4 + 0.1 * np.arange(11), 4)
    p = tmp_path / "m.las"
    write_las(p, depth, [LasCurve("GR", "GAPI", "", np.arange(11.0))], depth_unit="M", step=0.1)
    las = lasio.read(str(p))
    assert las.well["STRT"].value == 142.4 and las.well["STOP"].value == 143.4 and las.well["STEP"].value == 0.1


def test_real_las_files_read(shared_data):
    las = read_las(shared_data / "las" / "24034.LAS")
    assert las.mnemonics == ["GR"] and las.depth[0] == 3128.0 and las.step == 0.25
    scorpio = read_las(shared_data / "las" / "6038187_v1.2.las")
    assert "GAMN" in scorpio.mnemonics and np.isnan(scorpio.curve("GAMN").values).sum() >= 0


def test_unparseable_las_gives_clear_error(shared_data):
    p = shared_data / "las" / "Wellington_KGS-1-32-wDST2_LASv2.las"
    with pytest.raises(LasError) as ei:
        read_las(p)
    assert "cannot parse" in ei.value.reason and "Wellington" in ei.value.one_line()


def test_bad_las_inputs(tmp_path):
    with pytest.raises(LasError, match="no such file"):
        read_las(tmp_path / "nope.las")
    (tmp_path / "e.las").write_text("")
    with pytest.raises(LasError, match="empty"):
        read_las(tmp_path / "e.las")
    with pytest.raises(LasError, match="increase"):
        write_las(tmp_path / "w.las", np.array([2.0, 1.0]), [])
    assert not (tmp_path / "w.las").exists()
