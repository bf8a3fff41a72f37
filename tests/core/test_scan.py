import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from core.cli.main import main
from core.common.errors import ScanError
from core.io.scan import load_mask, load_scan, read_info


def test_kgs_g4_tiff_opens(kgs_scan):
    scan = load_scan(kgs_scan)
    assert scan.image.shape == (17864, 1664)
    assert scan.image.dtype == np.uint8
    assert set(np.unique(scan.image)) <= {0, 255}
    assert scan.info.mode == "1" and scan.info.depth_axis == "y"
    assert scan.info.dpi == (200.0, 200.0)
    ink = (scan.image == 0).mean()
    assert 0.03 < ink < 0.25  # a log: mostly paper, grid and curves


def test_kgs_band_png_opens(shared_data):
    scan = load_scan(shared_data / "scans" / "kgs_track_band.png")
    assert scan.image.shape == (2600, 224)
    assert scan.info.mode == "L" and scan.info.depth_axis == "y"


def _save(img: Image.Image, path, **kw):
    img.save(path, **kw)
    return path


def test_sixteen_bit_scaled_by_real_range(tmp_path):
    arr = np.full((40, 30), 1000, np.uint16)
    arr[:, :10] = 3000  # real range 1000..3000, far below 65535
    p = _save(Image.fromarray(arr), tmp_path / "s16.png")
    scan = load_scan(p)
    assert scan.image[:, :10].min() == 255 and scan.image[:, 10:].max() == 0
    assert any("scaled" in n for n in scan.info.notes)


def test_palette_rgba_cmyk_and_rgb(tmp_path):
    base = np.full((20, 16), 255, np.uint8)
    base[5:8] = 0
    rgb = Image.fromarray(np.stack([base] * 3, -1))
    for name, img, kw in [
        ("p.png", rgb.convert("P"), {}),
        ("rgba.png", rgb.convert("RGBA"), {}),
        ("cmyk.tif", rgb.convert("CMYK"), {}),
        ("rgb.jpg", rgb, {"quality": 95}),
        ("g.bmp", rgb.convert("L"), {}),
    ]:
        scan = load_scan(_save(img, tmp_path / name, **kw))
        assert scan.image.shape == (20, 16), name
        assert scan.image[6].mean() < 40 and scan.image[15].mean() > 215, name


def test_transparent_pixels_composite_on_white(tmp_path):
    rgba = np.zeros((10, 10, 4), np.uint8)  # fully transparent black
    rgba[2, :, 3] = 255  # one opaque black row
    scan = load_scan(_save(Image.fromarray(rgba), tmp_path / "t.png"))
    assert scan.image[0].min() == 255 and scan.image[2].max() == 0


def test_multipage_tiff_uses_first_page(tmp_path):
    a = Image.fromarray(np.zeros((10, 12), np.uint8))
    b = Image.fromarray(np.full((10, 12), 255, np.uint8))
    p = tmp_path / "multi.tif"
    a.save(p, save_all=True, append_images=[b])
    scan = load_scan(p)
    assert scan.info.pages == 2 and scan.image.max() == 0
    assert any("first" in n for n in scan.info.notes)


def test_exif_orientation_applied(tmp_path):
    arr = np.full((10, 30), 255, np.uint8)
    arr[:, 0] = 0  # left column black
    img = Image.fromarray(arr)
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to view
    p = tmp_path / "o.jpg"
    img.save(p, exif=exif, quality=100)
    scan = load_scan(p)
    assert scan.image.shape == (30, 10)
    assert scan.image[0].mean() < 100  # the black column became the top row
    assert read_info(p).height == 30


def test_one_bit_g4_tiff_roundtrip(tmp_path):
    arr = np.full((64, 64), 255, np.uint8)
    arr[10:20, 5:50] = 0
    p = tmp_path / "g4.tif"
    Image.fromarray(arr).convert("1").save(p, compression="group4")
    scan = load_scan(p)
    assert np.array_equal(scan.image, arr)


def _png_header_only(width, height) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    # a valid header claiming 10 gigapixels, followed by a few bytes of data
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")


@pytest.mark.parametrize(
    "kind,reason",
    [
        ("empty", "empty"),
        ("text", "not an image"),
        ("truncated", "truncated"),
        ("dir", "directory"),
        ("missing", "no such file"),
        ("bomb", "above the"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, capsys, kind, reason):
    p = tmp_path / "bad.png"
    if kind == "empty":
        p.write_bytes(b"")
    elif kind == "text":
        p.write_text("hello, I am not a PNG\n")
    elif kind == "truncated":
        buf = io.BytesIO()
        Image.fromarray(np.random.default_rng(0).integers(0, 255, (200, 200), dtype=np.uint8)).save(buf, "PNG")
        p.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    elif kind == "dir":
        p.mkdir()
    elif kind == "bomb":
        p.write_bytes(_png_header_only(100_000, 100_000))
    with pytest.raises(ScanError) as ei:
        load_scan(p)
    assert reason in ei.value.reason and str(p) in ei.value.one_line()
    before = sorted(x.name for x in tmp_path.iterdir())
    assert main(["info", str(p)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(p) in err[0] and reason in err[0]
    assert "Traceback" not in err[0]
    assert sorted(x.name for x in tmp_path.iterdir()) == before  # nothing written


def test_a_truncated_compressed_tiff_is_one_line_with_libtiffs_reason(tmp_path, capfd):
    """A compressed TIFF cut short is decoded by libtiff, which printed its own "TIFFFillStrip: Read error on
    strip 0 ..." on stderr before WellTrace's line (whose reason was Pillow's "decoder error -2"): the library's
    message is captured and becomes the reason, one line in all."""
    import tifffile

    whole = tmp_path / "whole.tif"
    tifffile.imwrite(whole, np.random.default_rng(0).integers(0, 255, (600, 400), dtype=np.uint8),
                     compression="zlib", rowsperstrip=600)
    p = tmp_path / "cut.tif"
    p.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(ScanError) as ei:
        load_scan(p)
    assert "truncated" in ei.value.reason and "Read error on strip 0" in ei.value.reason, ei.value.reason
    assert capfd.readouterr().err == ""
    assert main(["info", str(p)]) == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(p) in err[0] and "Read error on strip 0" in err[0], err
    assert load_scan(whole).image.shape == (600, 400) and capfd.readouterr().err == ""


def test_a_dpi_no_scanner_gives_is_said_and_not_used(tmp_path, capsys):
    """33-025-02299-0001.tif says 1 dpi: `info` printed "dpi 1 × 1" with no word. Outside 50-2400 dpi (the bounds
    the calibration proposal takes a resolution within, else it judges sizes from the page's width) the file's
    figure is shown, said implausible and not used; a plausible one has no such note."""
    from core.digitize.calibrate.proposal import MAX_DPI, MIN_DPI
    from core.io.scan import PLAUSIBLE_DPI

    assert PLAUSIBLE_DPI == (MIN_DPI, MAX_DPI)  # the note says what the proposal does
    page = Image.fromarray(np.full((300, 200), 255, np.uint8))
    for dpi, said in (((1, 1), True), ((300, 1), True), ((10000, 10000), True), ((50, 2400), False)):
        p = tmp_path / f"at_{dpi[0]}_{dpi[1]}.tif"
        page.save(p, dpi=dpi)
        info = load_scan(p).info
        assert info.dpi == pytest.approx(dpi) and info.dpi_plausible is not said
        assert any("implausible" in n for n in info.notes) is said, info.notes
        assert main(["info", str(p)]) == 0
        line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("dpi"))
        assert ("implausible: not used" in line) is said and f"{dpi[0]:g} × {dpi[1]:g}" in line, line
    none = tmp_path / "none.png"
    page.save(none)
    assert load_scan(none).info.dpi is None and load_scan(none).info.dpi_plausible is False


def test_pixel_bound_is_configurable(tmp_path, monkeypatch):
    p = _save(Image.fromarray(np.zeros((100, 100), np.uint8)), tmp_path / "a.png")
    monkeypatch.setenv("WELLTRACE_MAX_PIXELS", "5000")
    with pytest.raises(ScanError, match="above the"):
        load_scan(p)


def test_mask_size_must_match_its_scan(tmp_path):
    p = _save(Image.fromarray(np.zeros((10, 12), np.uint8)), tmp_path / "x.mask.png")
    assert load_mask(p, (10, 12)).shape == (10, 12)
    with pytest.raises(ScanError, match="12 × 10 but its scan is 13 × 10"):
        load_mask(p, (10, 13))
    q = _save(Image.fromarray(np.full((10, 12), 7, np.uint8)), tmp_path / "y.mask.png")
    with pytest.raises(ScanError, match="class 7"):
        load_mask(q, (10, 12))


def test_info_command_prints_facts(kgs_scan, capsys):
    assert main(["info", str(kgs_scan)]) == 0
    out = capsys.readouterr().out
    assert "1664 × 17864" in out and "mode 1" in out and "200 × 200" in out and "depth axis  y" in out
