import json

import numpy as np
import pytest

from core.common.errors import CalibrationError
from core.io.calibration import Calibration, CurveSpec

GOOD = {
    "version": 1,
    "depth_axis": "y",
    "depth_unit": "FT",
    "depth_picks": [[120.0, 1000.0], [17500.0, 1850.0]],
    "step": 0.5,
    "curves": [
        {"mnemonic": "GR", "unit": "GAPI", "description": "Gamma ray", "class": 1,
         "track": [35.0, 510.0], "scale": [0.0, 150.0], "log": False, "wrap": True},
        {"mnemonic": "ILD", "unit": "OHMM", "description": "Deep resistivity", "class": 2,
         "track": [900.0, 600.0], "scale": [0.2, 2000.0], "log": True, "wrap": False},
    ],
}


def _write(tmp_path, data):
    p = tmp_path / "x.calib.json"
    p.write_text(json.dumps(data))
    return p


def test_roundtrip_and_depth_mapping(tmp_path):
    cal = Calibration.load(_write(tmp_path, GOOD))
    cal.save(tmp_path / "y.calib.json")
    again = Calibration.load(tmp_path / "y.calib.json")
    assert again.as_dict() == cal.as_dict()
    assert cal.depth_at(120.0) == pytest.approx(1000.0)
    assert cal.depth_at(17500.0) == pytest.approx(1850.0)
    slope = 850.0 / 17380.0
    assert cal.depth_at(0.0) == pytest.approx(1000.0 - 120 * slope)  # extrapolated
    px = np.linspace(-100, 18000, 50)
    assert np.allclose(cal.pixel_at(cal.depth_at(px)), px)


def test_piecewise_depth_picks():
    cal = Calibration("y", "M", [(0, 100.0), (100, 110.0), (300, 115.0)], 0.1)
    assert cal.depth_at(50) == pytest.approx(105.0)
    assert cal.depth_at(200) == pytest.approx(112.5)
    assert cal.depth_at(400) == pytest.approx(117.5)
    grid = cal.depth_grid(301)
    assert grid[0] == pytest.approx(100.0) and grid[-1] == pytest.approx(115.0)
    assert np.allclose(np.diff(grid), 0.1)


def test_linear_log_and_wrap_values(tmp_path):
    cal = Calibration.load(_write(tmp_path, GOOD))
    gr, ild = cal.curves
    assert gr.value_at(35.0) == pytest.approx(0.0) and gr.value_at(510.0) == pytest.approx(150.0)
    assert gr.value_at(35.0 + 475 / 2, wraps=1) == pytest.approx(225.0)  # backup scale
    pos, k = gr.position_of(np.array([75.0, 225.0]))
    assert np.allclose(pos, [272.5, 272.5]) and list(k) == [0, 1]
    assert ild.value_at(900.0) == pytest.approx(0.2) and ild.value_at(600.0) == pytest.approx(2000.0)
    assert ild.value_at(750.0) == pytest.approx(20.0)  # half way across 4 decades
    v = np.geomspace(0.3, 1500, 20)
    p, _ = ild.position_of(v)
    assert np.allclose(ild.value_at(p), v)


def test_backup_side_round_trips_and_places_the_value(tmp_path):
    data = json.loads(json.dumps(GOOD))
    data["curves"][0]["backup"] = "low"
    cal = Calibration.load(_write(tmp_path, data))
    gr = cal.curves[0]
    assert gr.backup == "low" and cal.as_dict()["curves"][0]["backup"] == "low"
    assert "backup" not in cal.as_dict()["curves"][1]  # only written where it is set
    pos, k = gr.position_of(np.array([-75.0]))  # one track width below scale[0]: on the backup scale
    assert np.allclose(pos, [272.5]) and list(k) == [-1]
    assert gr.value_at(272.5, wraps=-1) == pytest.approx(-75.0)


@pytest.mark.parametrize(
    "edit,field",
    [
        (lambda d: d.pop("depth_picks"), "depth_picks: missing"),
        (lambda d: d.update(depth_picks=[[1, 2]]), "depth_picks: needs at least two"),
        (lambda d: d.update(depth_picks=[[0, 100], [10, 120], [20, 110]]), "not monotonic"),
        (lambda d: d["curves"][0].update(track=[40, 40]), "curves[0].track: zero width"),
        (lambda d: d["curves"][1].update(scale=[0, 100]), "curves[1].scale: a log track needs positive"),
        (lambda d: d["curves"][0].pop("class"), "curves[0].class: missing"),
        (lambda d: d["curves"][0].update({"class": 5}), "curves[0].class"),
        (lambda d: d.update(step=0), "step: must be positive"),
        (lambda d: d.update(depth_axis="z"), "depth_axis"),
        (lambda d: d["curves"][1].update(mnemonic="GR"), "curves[1].mnemonic"),
        (lambda d: d.update(version=2), "version"),
        (lambda d: d["curves"][0].update(backup="up"), 'curves[0].backup: must be "high" or "low"'),
        (lambda d: d["curves"][1].update(backup="high"), 'curves[1].backup: a backup scale needs "wrap": true'),
        (lambda d: d["curves"][0].update(backup="high", colour="#00008f", backup_colour="red"),
         "curves[0].backup_colour: 'red' is not a colour"),
        (lambda d: d["curves"][0].update(colour="#00008f", backup_colour="#ff0000"),
         "curves[0].backup_colour: the backup scale's ink needs a backup scale"),
        (lambda d: d["curves"][0].update(backup="high", backup_colour="#ff0000"),
         "curves[0].backup_colour: the backup scale's ink needs a backup scale"),
        (lambda d: d["curves"][0].update(scale_changes={"from_depth": 1200}), "curves[0].scale_changes: expected a list"),
        (lambda d: d["curves"][0].update(scale_changes=[{"scale": [0, 300]}]),
         "curves[0].scale_changes[0].from_depth: missing"),
        (lambda d: d["curves"][0].update(scale_changes=[{"from_depth": 1200, "scale": [5, 5]}]),
         "curves[0].scale_changes[0].scale: both ends are 5"),
        (lambda d: d["curves"][1].update(scale_changes=[{"from_depth": 1200, "scale": [0, 100]}]),
         "curves[1].scale_changes[0].scale: a log track needs positive ends"),
        (lambda d: d["curves"][0].update(scale_changes=[{"from_depth": 1e9, "scale": [0, 300]}]),
         "curves[0].scale_changes[0].from_depth: 1e+09 is deeper than any well"),
        (lambda d: d["curves"][0].update(scale_changes=[{"from_depth": 1200, "scale": [0, 300]},
                                                        {"from_depth": 1200, "scale": [0, 600]}]),
         "curves[0].scale_changes: two changes at one depth"),
    ],
)
def test_invalid_calibration_names_the_field(tmp_path, edit, field):
    data = json.loads(json.dumps(GOOD))
    edit(data)
    p = _write(tmp_path, data)
    with pytest.raises(CalibrationError) as ei:
        Calibration.load(p)
    assert field in ei.value.reason
    assert str(p) in ei.value.one_line()


def test_not_json_and_empty(tmp_path):
    p = tmp_path / "a.calib.json"
    p.write_text("{nope")
    with pytest.raises(CalibrationError, match="not valid JSON"):
        Calibration.load(p)
    p.write_text("")
    with pytest.raises(CalibrationError, match="empty"):
        Calibration.load(p)


def test_a_backup_scale_in_its_own_ink_round_trips(tmp_path):
    data = json.loads(json.dumps(GOOD))
    data["curves"][0].update(backup="high", colour="#00008F", backup_colour="#FF0000")
    cal = Calibration.load(_write(tmp_path, data))
    assert (cal.curves[0].colour, cal.curves[0].backup_colour) == ("#00008f", "#ff0000")
    again = Calibration.from_dict(json.loads(json.dumps(cal.as_dict())))
    assert again.curves[0].backup_colour == "#ff0000" and again.curves[1].backup_colour is None


def test_tracks_must_fit_the_image(tmp_path):
    cal = Calibration.load(_write(tmp_path, GOOD))
    cal.check_fits((18000, 1000))
    with pytest.raises(CalibrationError, match=r"curves\[1\].track"):
        cal.check_fits((18000, 800))


def test_curve_spec_reversed_scale():
    dt = CurveSpec("DT", "US/F", "", 1, (100.0, 300.0), (140.0, 40.0))
    assert dt.value_at(100.0) == 140.0 and dt.value_at(300.0) == 40.0
    assert dt.position_of(90.0)[0] == pytest.approx(200.0)


def test_scale_changes_round_trip_in_depth_order_and_a_file_without_them_stays_valid(tmp_path):
    data = json.loads(json.dumps(GOOD))
    data["curves"][0]["scale_changes"] = [{"from_depth": 1500, "scale": [0, 600]}, {"from_depth": 1200, "scale": [0, 300]}]
    cal = Calibration.load(_write(tmp_path, data))
    assert cal.curves[0].scale_changes == [(1200.0, (0.0, 300.0)), (1500.0, (0.0, 600.0))]
    written = cal.as_dict()["curves"]
    assert written[0]["scale_changes"] == [{"from_depth": 1200.0, "scale": [0.0, 300.0]},
                                           {"from_depth": 1500.0, "scale": [0.0, 600.0]}]
    assert "scale_changes" not in written[1]
    assert Calibration.from_dict(json.loads(json.dumps(cal.as_dict()))).curves[0].scale_changes == cal.curves[0].scale_changes
    assert Calibration.load(_write(tmp_path, GOOD)).curves[0].scale_changes == []
