"""Running the calibration proposal over labelled real scans: each scan in a process of its own, cut at a time limit
(a proposal that runs for minutes is a failure a user meets, and must not hold the run up), and a picture of the
labels beside what was proposed, to look at the failures."""

from __future__ import annotations

import multiprocessing
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from core.evaluation.archive_labels import ScanLabels


@dataclass
class ProposalRun:
    scan: str
    proposal: dict | None  # ``Proposal.as_dict()``; None when it failed or was cut
    seconds: float  # loading the scan and proposing, wall clock
    error: str = ""


def _cpu_seconds() -> float | None:
    """CPU seconds this process and the processes it waited for (Tesseract's) have used; None where the platform
    does not say (``resource`` is POSIX)."""
    try:
        import resource
    except ImportError:
        return None
    mine, theirs = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + theirs.ru_utime + theirs.ru_stime


def _propose_in_child(path: str, conn) -> None:
    """The child process: the scan loaded and proposed as ``welltrace calibrate --propose`` does. The proposal
    carries ``cpu_seconds``: the CPU time it took (threads and Tesseract's processes included), which, unlike the
    wall clock, does not grow with whatever else the machine runs meanwhile."""
    t0 = time.perf_counter()
    c0 = _cpu_seconds()
    try:
        from core.digitize.calibrate.proposal import propose_scan
        from core.io.scan import load_scan

        proposal = propose_scan(load_scan(path)).as_dict()
        c1 = _cpu_seconds()
        proposal["cpu_seconds"] = None if c0 is None or c1 is None else round(c1 - c0, 2)
        conn.send(ProposalRun(Path(path).name, proposal, time.perf_counter() - t0))
    except Exception as exc:  # noqa: BLE001 - the run goes on; the scan's failure is its result
        conn.send(ProposalRun(Path(path).name, None, time.perf_counter() - t0, f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def run_proposals(scans: list[Path], timeout_s: float, jobs: int = 1) -> Iterator[ProposalRun]:
    """Each scan proposed in a fresh process (``spawn``), at most ``jobs`` at a time, each killed at ``timeout_s``;
    runs are yielded as they end."""
    ctx = multiprocessing.get_context("spawn")
    pending = list(scans)
    running: list[tuple[Path, object, object, float]] = []
    while pending or running:
        while pending and len(running) < max(1, jobs):
            path = pending.pop(0)
            parent, child = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_propose_in_child, args=(str(path), child), daemon=True)
            proc.start()
            child.close()
            running.append((path, proc, parent, time.perf_counter()))
        time.sleep(0.05)
        for item in list(running):
            path, proc, conn, started = item
            elapsed = time.perf_counter() - started
            if conn.poll():
                try:
                    result = conn.recv()
                except EOFError:
                    result = ProposalRun(path.name, None, elapsed, "the proposal's process died")
                proc.join(5)
            elif not proc.is_alive():
                result = ProposalRun(path.name, None, elapsed, f"the proposal's process died (exit {proc.exitcode})")
            elif elapsed > timeout_s:
                proc.kill()
                proc.join(5)
                result = ProposalRun(path.name, None, elapsed, f"cut at {timeout_s:g} s")
            else:
                continue
            running.remove(item)
            yield result


def draw_overlay(scan_path: Path, labels: ScanLabels, proposal: dict | None, out: Path, panel_px: int = 1400) -> None:
    """Three panels side by side: the whole scan, the top of its first section and the bottom of its last, with
    the labels (green: section spans, tracks, ticks at the labelled depths, left) and the proposal (red: spans,
    tracks, ticks at its picks, right) drawn over the faded scan."""
    import cv2

    from core.common.atomic import atomic_path
    from core.io.scan import load_scan

    scan = load_scan(scan_path)
    img = scan.rgb if scan.rgb is not None else np.repeat(scan.image[..., None], 3, axis=2)
    img = (255 - (255 - img.astype(np.float32)) * 0.5).astype(np.uint8)  # faded, so the marks show
    h, w = img.shape[:2]
    green, red = (0, 150, 0), (220, 0, 0)
    marks: list[tuple[tuple[float, float, float, float], tuple[int, int, int], int]] = []  # (x0, y0, x1, y1)
    for s in labels.sections:
        marks.append(((0, s.rows[0], w - 1, s.rows[0]), green, 1))
        marks.append(((0, s.rows[1], w - 1, s.rows[1]), green, 1))
        marks += [((x - 1, s.rows[0], x - 1, s.rows[1]), green, 1) for t in s.tracks for x in t]
        marks += [((0, row, w * 0.04, row), green, 3) for row, _ in s.depths]
    for s in (proposal or {}).get("sections", []):
        a, b = s["span"]
        marks.append(((0, a + 2, w - 1, a + 2), red, 1))
        marks.append(((0, b - 2, w - 1, b - 2), red, 1))
        marks += [((x + 1, a, x + 1, b), red, 1) for t in s.get("tracks", proposal.get("tracks", [])) for x in t]
        marks += [((w * 0.96, row, w - 1, row), red, 3) for row, _ in s.get("picks", [])]

    def panel(r0: int, r1: int) -> np.ndarray:
        r0, r1 = max(0, r0), min(h, r1)
        f = min(panel_px / (r1 - r0), 700 / w)
        pic = cv2.resize(img[r0:r1], (max(1, int(w * f)), max(1, int((r1 - r0) * f))), interpolation=cv2.INTER_AREA)
        for (x0, y0, x1, y1), colour, thick in marks:
            if max(y0, y1) < r0 or min(y0, y1) > r1:
                continue
            cv2.line(pic, (int(x0 * f), int((y0 - r0) * f)), (int(x1 * f), int((y1 - r0) * f)), colour, thick)
        out_ = np.full((panel_px, pic.shape[1] + 8, 3), 255, np.uint8)
        out_[: pic.shape[0], : pic.shape[1]] = pic[:panel_px]
        return out_

    first = labels.sections[0].rows[0] if labels.sections else 0
    last = labels.sections[-1].rows[1] if labels.sections else h
    panels = [panel(0, h), panel(first - 900, first + 900), panel(last - 900, last + 900)]
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out) as tmp:
        cv2.imwrite(str(tmp), cv2.cvtColor(np.concatenate(panels, axis=1), cv2.COLOR_RGB2BGR))
