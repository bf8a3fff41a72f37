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


# -- header text, decimals and truncation (issue 63) ----------------------------------------------------------

from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from core.io.las_text import control_character  # noqa: E402

# text with the characters that end or start a header line, or an item's parts, mixed in
header_strings = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(list("\n\r\t\x0b\x0c\x00\x1b\x85"
                                                                                  "\u2028\u2029\u202e~.: #"))),
                         max_size=30)


def _write_one(path, mnemonic="GR", unit="GAPI", description="Gamma ray", well=None, provenance=None):
    write_las(path, 1000.0 + 0.5 * np.arange(5), [LasCurve(mnemonic, unit, description, np.arange(5.0))],
              step=0.5, well=well, provenance=provenance)


@settings(max_examples=60)
@given(description=header_strings, well=header_strings, scan=header_strings)
@example(description="sp\nWELL.  PWNED : WELL\n~Other INJECTED", well="W1\nCOMP.  EVIL : COMPANY", scan="a.png")
@example(description="x", well="W", scan="scan\n~A  1 2 3\n.png")
def test_any_header_text_stays_on_its_line(tmp_path_factory, description, well, scan):
    """A description, the well's name and the scan's file name may hold anything: the LAS read back has the same
    items (DEPT and GR; one WELL), the text on one line, escaped where it held a control character."""
    p = tmp_path_factory.mktemp("las") / "h.las"
    _write_one(p, description=description, well={"WELL": well, "COMP": "ACME"}, provenance={"source scan": scan})
    las = lasio.read(str(p))
    assert [c.mnemonic for c in las.curves] == ["DEPT", "GR"]
    assert [w.mnemonic for w in las.well].count("WELL") == 1 and las.well["COMP"].value == "ACME"
    back = read_las(p)
    assert back.curve("GR").values.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    for text in (back.curve("GR").description, back.well["WELL"]):
        assert control_character(text) is None
    lines = back.other.splitlines()  # one line a fact: source scan, date, software
    assert len(lines) == 3 and lines[0].startswith("source scan:") and lines[2] == "software: WellTrace"
    if control_character(description) is None and ":" not in description:
        assert back.curve("GR").description == description.strip()
    if control_character(well) is None:
        assert back.well["WELL"] == well.strip()


@settings(max_examples=100)
@given(mnemonic=st.text(max_size=10), unit=st.text(max_size=8))
@example(mnemonic="S.P:X", unit="M V")
@example(mnemonic="ΓΡ", unit="")
@example(mnemonic="GR", unit="µs/ft")
def test_a_mnemonic_or_unit_is_read_back_as_written_or_refused(tmp_path_factory, mnemonic, unit):
    p = tmp_path_factory.mktemp("las") / "n.las"
    try:
        _write_one(p, mnemonic=mnemonic, unit=unit)
    except LasError as exc:
        assert "\n" not in exc.one_line() and not p.exists()
        return
    back = read_las(p)
    assert back.mnemonics == [mnemonic.upper()] and back.curve(mnemonic).unit == unit


def test_a_curve_named_twice_or_dept_is_refused(tmp_path):
    with pytest.raises(LasError, match="a second curve of that name"):
        write_las(tmp_path / "d.las", np.arange(3.0), [LasCurve("SP", "MV", "", np.zeros(3)),
                                                       LasCurve("sp", "MV", "", np.zeros(3))], step=1.0)
    with pytest.raises(LasError, match="DEPT"):
        write_las(tmp_path / "d.las", np.arange(3.0), [LasCurve("DEPT", "", "", np.zeros(3))], step=1.0)


def test_a_non_ascii_description_reads_back_as_written(tmp_path):
    _write_one(tmp_path / "u.las", description="Résistivité profonde")
    assert read_las(tmp_path / "u.las").curve("GR").description == "Résistivité profonde"


def test_a_non_ascii_well_name_reads_back_as_written_in_lasio_itself(tmp_path):
    """A well named "Müller #1 – Ø" (the app's Export dialog, --well, or a scan file name in ~Other) came back from
    lasio.read as "MÃ¼ller #1 â€“ Ã˜": without chardet lasio guesses windows-1252 for a UTF-8 file. A file that
    holds non-ASCII text starts with the UTF-8 byte-order mark, which lasio reads as UTF-8; an ASCII file is as
    before, byte for byte."""
    _write_one(tmp_path / "u.las", description="Résistivité", well={"WELL": "Müller #1 – Ø", "COMP": "Ørsted"},
               provenance={"source scan": "Bohrung_Süd.tif"})
    las = lasio.read(str(tmp_path / "u.las"))
    assert las.well["WELL"].value == "Müller #1 – Ø" and las.well["COMP"].value == "Ørsted"
    assert las.curves["GR"].descr == "Résistivité" and "Bohrung_Süd.tif" in las.other
    assert read_las(tmp_path / "u.las").curve("GR").description == "Résistivité"
    _write_one(tmp_path / "a.las", well={"WELL": "Smith 1"})
    assert (tmp_path / "a.las").read_bytes().startswith(b"~Version")


def test_fine_steps_and_small_scales_keep_every_depth_and_value_distinct(tmp_path):
    """A 0.00025 step wrote depths to 6 decimals at most (a finer one printed non-increasing depths and STEP 0.0);
    a 0-0.001 curve written to 4 decimals took 8 distinct values over 1,001 samples."""
    from core.io.las_io import value_decimals_for

    depth = np.round(1000.0 + 0.00012345 * np.arange(1001), 10)
    values = np.linspace(0.0, 0.001, 1001)
    write_las(tmp_path / "f.las", depth, [LasCurve("X", "", "", values, decimals=value_decimals_for(0, 0.001))],
              step=0.00012345)
    las = lasio.read(str(tmp_path / "f.las"))
    assert las.well["STEP"].value == 0.00012345
    assert np.all(np.diff(las.index) > 0) and np.allclose(las.index, depth, atol=1e-9)
    assert len(np.unique(las["X"])) == 1001
    assert value_decimals_for(0, 150) == 4 and value_decimals_for(0.2, 2000, log=True) == 4


def test_a_truncated_las_is_refused_not_read_as_a_shorter_log(tmp_path):
    """``eval`` of a LAS cut off while copied reported r 1.000 over 67 of its 1,002 samples."""
    depth = 1000.0 + 0.5 * np.arange(1002)
    write_las(tmp_path / "full.las", depth, [LasCurve("GR", "GAPI", "", np.sin(np.arange(1002.0)))], step=0.5)
    text = (tmp_path / "full.las").read_text()
    cut = text.index("    1064.50")
    for end in (cut, cut + 9):  # after a whole row; in the middle of one
        (tmp_path / "cut.las").write_text(text[:end])
        with pytest.raises(LasError) as ei:
            read_las(tmp_path / "cut.las")
        assert "cut.las" in ei.value.one_line() and "\n" not in ei.value.one_line()
    (tmp_path / "cut.las").write_text(text[:cut])
    with pytest.raises(LasError, match="data run from 1000 to 1064, its header from STRT 1000 to STOP 1500.5: the "
                                       "file is truncated"):
        read_las(tmp_path / "cut.las")
