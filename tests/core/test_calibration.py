import json
import re

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
        # finite but past any log's reading (1e308 wrote 309-digit values into the LAS)
        (lambda d: d["curves"][0].update(scale=[0, 1e308]), "curves[0].scale: 1e+308 is larger than any log reads"),
        (lambda d: d["curves"][1].update(scale=[-1e12, 2000]), "curves[1].scale: -1e+12 is larger than any log"),
        (lambda d: d["curves"][0].update(scale_changes=[{"from_depth": 1200, "scale": [0, 1e300]}]),
         "curves[0].scale_changes[0].scale: 1e+300 is larger than any log reads"),
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


# -- the typed schema (issue 63): a value of the wrong type is refused naming the field, never read for its truth --

from pathlib import Path  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

not_bool = st.one_of(st.none(), st.integers(), st.floats(), st.text(max_size=8),
                     st.lists(st.booleans(), max_size=2), st.dictionaries(st.text(max_size=3), st.booleans(),
                                                                         max_size=2))
not_number = st.one_of(st.none(), st.booleans(), st.text(max_size=8), st.lists(st.integers(), max_size=3),
                       st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                       st.sampled_from([float("nan"), float("inf"), -float("inf"), 10 ** 400]))
not_text = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.lists(st.text(max_size=3), max_size=2))
not_class = st.one_of(st.none(), st.booleans(), st.floats(), st.text(max_size=4), st.integers().filter(
    lambda v: not 1 <= v <= 3))

# (where the value goes, the field the error must name, the words it must say) for each typed field
TYPED = [
    (("curves", 0, "log"), "curves[0].log", "must be true or false", not_bool),
    (("curves", 1, "wrap"), "curves[1].wrap", "must be true or false", not_bool),
    (("curves", 0, "proposed"), "curves[0].proposed", "must be true or false", not_bool),
    (("step",), "step", "expected a finite number", not_number),
    (("curves", 1, "scale", 0), "curves[1].scale[0]", "expected a finite number", not_number),
    (("curves", 0, "track", 1), "curves[0].track[1]", "expected a finite number", not_number),
    (("depth_picks", 1, 1), "depth_picks[1][1]", "expected a finite number", not_number),
    (("curves", 0, "unit"), "curves[0].unit", "must be text", not_text),
    (("curves", 1, "description"), "curves[1].description", "must be text", not_text),
    (("curves", 0, "class"), "curves[0].class", "must be 1, 2 or 3", not_class),
]


def _put(data, where, value):
    target = data
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value


@settings(max_examples=300)
@given(case=st.sampled_from(range(len(TYPED))), data=st.data())
def test_a_value_of_the_wrong_type_is_refused_naming_the_field(case, data):
    where, field, words, values = TYPED[case]
    value = data.draw(values)
    edited = json.loads(json.dumps(GOOD))
    _put(edited, where, value)
    with pytest.raises(CalibrationError) as ei:
        Calibration.from_dict(edited, "x.calib.json")
    assert ei.value.one_line().startswith(f"x.calib.json: {field}: {words}"), ei.value.one_line()


@pytest.mark.parametrize("field,value,words", [
    ("log", "false", "curves[0].log: must be true or false, got 'false'"),
    ("wrap", "no", "curves[0].wrap: must be true or false, got 'no'"),
    ("log", 0, "curves[0].log: must be true or false, got 0"),
    ("wrap", 1, "curves[0].wrap: must be true or false, got 1"),
])
def test_flags_in_quotes_or_as_numbers_are_refused_not_read_as_true(tmp_path, field, value, words):
    """``"log": "false"`` read as a true log track put a linear curve's values off by up to 45.5 of 100."""
    data = json.loads(json.dumps(GOOD))
    data["curves"][0][field] = value
    with pytest.raises(CalibrationError, match=re.escape(words)):
        Calibration.load(_write(tmp_path, data))


def test_every_calibration_file_of_the_project_stays_valid(tmp_path):
    """The schema refuses wrong types only: the calibrations shipped and written by ``synth`` all still read."""
    from core.synth import generate_log

    files = sorted(ROOT.glob("resources/**/*.calib.json")) + sorted(ROOT.glob("tests/data/*.calib.json"))
    assert len(files) >= 4
    for f in files:
        assert Calibration.load(f).curves
    for seed in range(6):
        lg = generate_log(seed, 800, 256, "x")
        lg.calibration.save(tmp_path / f"s{seed}.calib.json")
        assert Calibration.load(tmp_path / f"s{seed}.calib.json").as_dict() == lg.calibration.as_dict()


def test_version_true_and_a_byte_order_mark(tmp_path):
    data = json.loads(json.dumps(GOOD))
    data["version"] = True  # Python counts it as 1: refused, it is no version number
    with pytest.raises(CalibrationError, match="version: True is not supported"):
        Calibration.load(_write(tmp_path, data))
    p = tmp_path / "bom.calib.json"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode())  # what Notepad writes
    assert Calibration.load(p).curves[0].mnemonic == "GR"


def test_json_nested_past_pythons_limit_is_one_line(tmp_path):
    p = tmp_path / "deep.calib.json"
    p.write_text("[" * 100_000)
    with pytest.raises(CalibrationError, match="nested too deeply") as ei:
        Calibration.load(p)
    assert str(p) in ei.value.one_line()
    p.write_text('{"version": 1, "curves": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(CalibrationError) as ei:
        Calibration.load(p)
    assert "\n" not in ei.value.one_line()


@pytest.mark.parametrize("edit,words", [
    (lambda d: d.update(step=2.5e-7), "step: 2.5e-07 is finer than any log can be read at"),
    (lambda d: d.update(curves=[dict(GOOD["curves"][0], mnemonic=f"C{i}") for i in range(101)]),
     "curves: 101 curves: at most 100"),
    (lambda d: d["curves"][1].update(mnemonic="GR_CONF"), "curves[1].mnemonic: GR_CONF is the name of GR's "
                                                          "confidence curve"),
    (lambda d: d["curves"][1].update(mnemonic="S.P:X"), "curves[1].mnemonic: 'S.P:X' must be letters"),
    (lambda d: d["curves"][1].update(mnemonic="ΓΡ"), "curves[1].mnemonic: 'ΓΡ' must be letters"),
    (lambda d: d["curves"][0].update(unit="M V"), "curves[0].unit: 'M V' must be printable ASCII"),
    (lambda d: d["curves"][0].update(unit="µs/ft"), "curves[0].unit: 'µs/ft' must be printable ASCII"),
    (lambda d: d["curves"][0].update(description="sp\nWELL.  PWNED : WELL\n~Other INJECTED"),
     "curves[0].description: holds the control character U+000A"),
])
def test_names_and_steps_a_las_cannot_hold_are_refused_by_curve(tmp_path, edit, words):
    data = json.loads(json.dumps(GOOD))
    edit(data)
    with pytest.raises(CalibrationError, match=re.escape(words)):
        Calibration.load(_write(tmp_path, data))


def test_depths_beyond_any_well_or_too_many_samples_over_the_picture_name_the_calibration(tmp_path):
    """The picks are checked when read; what they reach over the whole picture when the picture is known:
    ``[[0, 0], [1, 99000]]`` extrapolates to 1.58e8 ft over a 1,600 px scan; picks 16 px apart with a fine
    step ask for 1,000 samples over the picks and 12.5 million over a 200,000 px picture."""
    data = json.loads(json.dumps(GOOD))
    data.update(depth_picks=[[0, 0.0], [1, 99000.0]], step=100.0)
    cal = Calibration.load(_write(tmp_path, data))
    with pytest.raises(CalibrationError, match=r"depth_picks: extrapolated over the scan s\.png's 1600 px") as ei:
        cal.check_fits((1600, 1000), "s.png")
    assert ei.value.path == str(tmp_path / "x.calib.json")
    data.update(depth_picks=[[0, 1000.0], [16, 1000.1]], step=1e-4)
    cal = Calibration.load(_write(tmp_path, data))
    with pytest.raises(CalibrationError, match=r"step: 0.0001 asks for 12,499,938 samples over the image's"):
        cal.check_fits((200_000, 1000))
    cal.check_fits((1000, 1000))  # 6,244 samples over a short picture: fine


def test_a_track_outside_the_picture_names_the_calibration_and_the_scan(tmp_path):
    """Issue 62 item 11: the message named no file (from the command line: the scan, not the file to fix)."""
    cal = Calibration.load(_write(tmp_path, GOOD))
    with pytest.raises(CalibrationError) as ei:
        cal.check_fits((18000, 800), "log.tif")
    assert ei.value.one_line() == (f"{tmp_path / 'x.calib.json'}: curves[1].track: [900, 600] lies outside the "
                                   "scan log.tif's 800 px across the amplitude axis")
    part = cal.section_calibration(0) if cal.sections else Calibration.from_dict(GOOD, "y.calib.json")
    with pytest.raises(CalibrationError, match="y.calib.json"):
        part.check_fits((18000, 800))


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


def test_a_misspelt_field_is_named_when_the_calibration_is_digitised(tmp_path, capsys):
    """Unknown fields are ignored (files of other releases stay readable), but a user writing the file by hand as
    the README shows got no word of a misspelt one: `"Log": true` read the resistivity on a linear scale, `"bakup"`
    and `"colour "` were dropped, every value of the curve wrong. The run names each ignored field and the field
    meant; the fields this project's own files carry (a draft's, a proposal's) are no such fields."""
    from core.cli.main import main
    from core.synth import write_set

    write_set(tmp_path, 1, seed=4, width=900, height=256, depth_axis="y", style="clean")
    path = tmp_path / "synth_000.calib.json"
    data = json.loads(path.read_text())
    data["curves"][1]["Log"] = True
    data["curves"][0]["bakup"] = "high"
    data["stepp"] = 0.25
    data["proposed_tracks"] = [[2.0, 102.0]]
    data["sections"] = [{"kind": "main", "span": [0, 899], "refused": "no depth column"}]
    path.write_text(json.dumps(data))
    cal = Calibration.load(path)
    assert cal.ignored_fields == ['curves[0].bakup (did you mean "backup"?)', 'curves[1].Log (did you mean "log"?)',
                                    'stepp (did you mean "step"?)']
    assert main(["digitize", str(tmp_path / "synth_000.png"), "--classical", "--no-qc"]) == 0
    err = capsys.readouterr().err
    assert 'curves[1].Log (did you mean "log"?)' in err and "ignored" in err and "refused" not in err, err
    assert Calibration.load(tmp_path / "synth_000.calib.json").ignored_fields == cal.ignored_fields
    assert Calibration.from_dict(GOOD).ignored_fields == []


def test_the_depth_under_a_pixel_is_its_sections():
    """The app's status bar read every pixel's depth from the top-level picks, over a repeat pass (which prints
    depths of its own) too: 1000-1850 ft there where the repeat reads 1500-1600. ``depth_under`` takes the picks
    of the section under the pixel, the calibration's elsewhere."""
    from core.io.calibration import Section

    cal = Calibration.from_dict(GOOD)
    cal.sections = [Section(100, 9000, "main"), Section(10000, 17000, "repeat", [(10000.0, 1500.0), (17000.0, 1600.0)])]
    assert cal.depth_under(13500.0) == pytest.approx(1550.0)
    assert cal.depth_under(5000.0) == pytest.approx(float(cal.depth_at(5000.0)))  # the main pass: the top level's
    assert cal.depth_under(9500.0) == pytest.approx(float(cal.depth_at(9500.0)))  # between sections
