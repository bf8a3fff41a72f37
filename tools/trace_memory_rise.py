"""The trace stage's resident rise per pixel of the largest track band (``memory_gate.TRACE_BYTES_PER_BAND_PX``,
the reserve a streamed folder's gate holds for a scan until it is traced).

    python3 tools/trace_memory_rise.py [DATA]    (DATA: the shared data, default ../shared/data)

Each of KGS and the tallest shared scan (iqa_33-025-02289-0001, its proposed section) is read once by the bundled
network; then, from the freed heap and a reset peak, each part is traced from those maps, and the peak's rise over
the resident size before it is divided by the largest track band's rows × the part's columns.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    import torch

    from core.common.sysmem import proc_status, release_free_heap
    from core.digitize.job import pipeline
    from core.engine.memory import reset_peaks
    from core.io.calibration import Calibration
    from core.io.scan import load_scan
    from core.model import precision as prec
    from core.model.bundled import BUNDLED_MODEL
    from core.model.model_io import load_model

    data = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "data"
    model, info = load_model(BUNDLED_MODEL)
    precision = prec.for_inference("model", info["precision"], "cpu")
    for scan, cal in ((data / "scans" / "kgs_273101_bhc_sonic.tif", ROOT / "tests" / "data" / "kgs_273101_bhc_sonic.calib.json"),
                      (data / "scans" / "iqa_33-025-02289-0001.tif",
                       ROOT / "tools" / "bench_folder" / "iqa_33-025-02289-0001.calib.json")):
        img = load_scan(scan).image
        calib = Calibration.load(cal)
        with torch.no_grad():
            pages = pipeline.read_sections(img, calib, None, model=model, precision=precision, device="cpu")
        length = calib.depth_length(img.shape)
        for i, page in enumerate(pages):
            part_calib = calib.section_calibration(i) if calib.sections else calib
            part = (pipeline._cut(img, calib.depth_axis, calib.sections[i].start, min(calib.sections[i].stop, length))
                    if calib.sections else img)
            release_free_heap()
            reset_peaks(torch.device("cpu"))
            before = proc_status()["VmRSS"]
            t = time.perf_counter()
            pipeline.digitize(part, part_calib, page=page)
            rise = proc_status()["VmHWM"] - before
            across, cols = (part.shape[0], part.shape[1]) if calib.depth_axis == "x" else (part.shape[1], part.shape[0])
            band = max(min(hi, across - 1) - max(lo, 0) + 1 for lo, hi in (c.track_rows() for c in part_calib.curves))
            print(f"{scan.name} part {i + 1}: traced in {time.perf_counter() - t:.1f} s, rise {rise / 2**20:.0f} MiB over "
                  f"a band of {band} × {cols} px: {rise / (band * cols):.1f} B a band pixel", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
