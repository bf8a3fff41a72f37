"""``core/digitize/job/memory_gate.py: scan_memory``: a scan counted from its read to its LAS, stage by stage, from
its header and calibration alone (the figures per pixel are checked against measured peaks by
``tools/scan_memory_check.py``)."""

from __future__ import annotations

import types

import pytest

from core.cli.main import main
from core.digitize.evidence.memory_plan import RUNTIME_OVERHEAD, MemoryCeilingError
from core.digitize.job import memory_gate as mg
from core.digitize.job.scan_job import ReadOptions, ScanJob
from core.io.calibration import Calibration
from core.model.network import preset
from core.model.precision import resolve


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gate")
    assert main(["synth", str(folder), "--count", "1", "--seed", "3", "--width", "900", "--height", "2048"]) == 0
    return ScanJob(folder / "synth_000.png", folder / "synth_000.calib.json", folder / "out.las")


def _read():
    model = types.SimpleNamespace(cfg=preset("demo", classes=4), trained_precision="bf16")
    return ReadOptions(model=model, precision=resolve("bf16", "cpu"))


def test_each_stage_is_counted_from_the_scan_s_size(synth):
    memory = mg.scan_memory(synth, _read(), base=300 * 2**20)
    calib = Calibration.load(synth.calib)
    from PIL import Image

    with Image.open(synth.scan) as img:
        w, h = img.size
        colour = img.mode in ("RGB", "RGBA", "P")
    px = w * h
    canon = calib.amplitude_length((h, w)) * calib.depth_length((h, w))
    picture = px * (1 + (mg.COLOUR_BYTES_PER_PX if colour else 0))
    # kept: the picture (with what its load leaves), every class's coded map and the mask (7 B/px), the ink (1)
    residue = mg.RESIDUE_KEPT_RGB_BYTES_PER_PX if colour else mg.RESIDUE_KEPT_GREY_BYTES_PER_PX
    assert memory.kept == int(picture + residue * px) + (7 + mg.INK_BYTES_PER_PX) * canon
    # the page stage: at least the canonical copy and its floats beside the picture, or the picture's load
    assert memory.page >= picture + (1 + mg.PAGE_BYTES_PER_PX) * canon
    assert memory.page >= px * (mg.LOAD_COLOUR_BYTES_PER_PX if colour else mg.LOAD_GREY_BYTES_PER_PX)
    # the reading: the canonical copy, the ink and the maps beside the picture, the forward and the runtime
    assert memory.reading > picture + (1 + 1 + 7) * canon + RUNTIME_OVERHEAD
    # the tracing's rise: its fixed part, the largest band, every part's results
    band = max(min(hi, calib.amplitude_length((h, w)) - 1) - max(lo, 0) + 1
               for lo, hi in (c.track_rows() for c in calib.curves))
    assert memory.tracing >= mg.TRACE_FIXED_BYTES + mg.TRACE_BYTES_PER_BAND_PX * band * calib.depth_length((h, w))
    assert memory.held == memory.kept + memory.tracing
    assert memory.peak == max(memory.page, memory.reading, memory.held) and memory.starting <= memory.peak
    # the base is the process's own: the stages are over it, whatever it is
    assert mg.scan_memory(synth, _read(), base=900 * 2**20) == memory


def test_a_reading_no_window_of_fits_under_the_ceiling_is_refused_from_the_header(synth):
    with pytest.raises(MemoryCeilingError, match="needs at least"):
        mg.scan_memory(synth, _read(), ceiling=400 * 2**20, base=300 * 2**20)


def test_ink_coloured_curves_count_their_maps_held_and_one_band_being_made(synth, tmp_path):
    """On a colour scan each ink-coloured curve holds its float32 band to the trace's signals (three with a backup
    ink: its own and its two inks'), and the largest one is made beside them; a grey scan's inks hold nothing."""
    import json

    from PIL import Image

    rgb = tmp_path / "rgb.png"
    with Image.open(synth.scan) as img:
        img.convert("RGB").save(rgb)
        w, h = img.size
    doc = json.loads(synth.calib.read_text())
    plain = tmp_path / "plain.calib.json"
    plain.write_text(json.dumps(doc))
    doc["curves"][0]["colour"] = "#cc2020"
    doc["curves"][1]["colour"] = "#2040c0"
    doc["curves"][1].update(wrap=True, backup="high", backup_colour="#20a020")
    inked = tmp_path / "inked.calib.json"
    inked.write_text(json.dumps(doc))
    calib = Calibration.load(inked)
    cols = calib.depth_length((h, w))
    n = [min(hi, calib.amplitude_length((h, w)) - 1) - max(lo, 0) + 1
         for lo, hi in (c.track_rows() for c in calib.curves[:2])]

    def tracing(scan, cal):
        return mg.scan_memory(ScanJob(scan, cal, tmp_path / "o.las"), _read()).tracing

    rise = tracing(rgb, inked) - tracing(rgb, plain)
    assert rise == mg.INK_MAP_BYTES_PER_PX * (n[0] + 3 * n[1]) * cols + mg.INK_MAKING_BYTES_PER_PX * max(n) * cols
    assert mg.INK_MAP_BYTES_PER_PX >= 4  # a float32 band, at the least
    grey = tmp_path / "grey.png"
    with Image.open(synth.scan) as img:
        img.convert("L").save(grey)
    assert tracing(grey, inked) == tracing(grey, plain)


def test_the_tracing_counts_as_many_bands_at_once_as_the_process_has_work_threads(synth):
    """The curves' pieces are traced over the process's threads: two threads hold the two largest bands' tracing."""
    from core.common.threads import set_work_threads

    calib = Calibration.load(synth.calib)
    from PIL import Image

    with Image.open(synth.scan) as img:
        w, h = img.size
    bands = sorted((min(hi, calib.amplitude_length((h, w)) - 1) - max(lo, 0) + 1
                    for lo, hi in (c.track_rows() for c in calib.curves)), reverse=True)
    try:
        set_work_threads(1)
        one = mg.scan_memory(synth, _read()).tracing
        set_work_threads(2)
        two = mg.scan_memory(synth, _read()).tracing
    finally:
        set_work_threads(None)
    assert len(bands) >= 2
    assert two - one == mg.TRACE_BYTES_PER_BAND_PX * bands[1] * calib.depth_length((h, w))
