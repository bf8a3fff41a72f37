"""A calibration proposed from the scan itself: its log sections, each section's tracks, and their depth picks.

Calibrating a scan by hand is a click and a typed depth per pick and a drag per track, although both are printed
on the log. The proposal reads them:

- **Sections.** The log body is where the track grid (borders and grid lines) runs
  (``core/digitize/page/sections.py``; each stretch laid out in ``section_layout.py``): header, tail, the header
  of a repeat pass and another log body on the page end one stretch and start the next.
- **Tracks.** Each section's columns are parted by the lines that run on into the header's scale box or the
  footer's (``core/digitize/page/body_lines.py``); a column is a curve track (gridded, empty, an image) or not
  (the depth column, lithology, descriptions: ``core/digitize/calibrate/columns.py``). A scan whose body has no
  box beside it is read as before: tracks are runs of lines between separators
  (``core/digitize/calibrate/tracks.py``).
- **Depths.** Each section's depth columns are read with Tesseract where numbers can be (digit-sized ink, packed;
  upright or sideways as the digits lie: ``core/digitize/calibrate/depth_numbers.py``), each number placed at
  its centre along depth and snapped to the depth line it labels; the labels that agree on one straight line at
  a standard log scale (``depth_scales.py``, ``line_fit.py``) become the section's picks
  (``core/digitize/calibrate/depth_fit.py``). Where no depth column gives a scale, the numbers printed inside the
  tracks are read (``depth_reading.py``). A section whose depths restart holds two passes (``log_passes.py``); a
  short repeat with two printed depths borrows another section's scale.

Nothing here is silently wrong: every number read, kept or rejected, and every reason is in the proposal's
messages (``proposal_report.py``) for the user to accept or correct; a section without picks says which picks to
make by hand. Tesseract is optional (``pip install pytesseract`` and the ``tesseract-ocr`` program); without it the
sections and tracks are still proposed and the message says how to install it (``ocr.ocr_available``).
``progress(done, total)`` is called at least every second or so of work (a window of numbers read, a section's
layout), so a caller can cancel from it.
"""

from __future__ import annotations

import numpy as np

from core.digitize.calibrate.depth_reading import read_depths
from core.digitize.calibrate.log_passes import name_sections
from core.digitize.calibrate.ocr import ocr_available
from core.digitize.calibrate.proposal_records import Proposal
from core.digitize.calibrate.proposal_report import conclude
from core.digitize.calibrate.section_layout import lay_out
from core.digitize.calibrate.tracks import along_depth_lines, split_at_boxes
from core.io.scan import PLAUSIBLE_DPI

MIN_DPI, MAX_DPI = PLAUSIBLE_DPI  # a resolution tag outside these is no scanner's (a TIFF that says 1 dpi)
PAGE_WIDTH_IN = 8.5  # a log's page across, for sizes where the file gives no resolution


def _sane_dpi(dpi: float | None) -> float | None:
    return float(dpi) if dpi and MIN_DPI <= dpi <= MAX_DPI else None


def propose(image: np.ndarray, depth_axis: str | None = None, ocr: bool = True, dpi: float | None = None,
            depth_unit: str = "FT", progress=None, rgb: np.ndarray | None = None) -> Proposal:
    """Propose the log sections of a scan (grey, in its own frame), each with its tracks and depth picks (``dpi``
    its resolution along depth, for the scale check; ``rgb`` its colour pixels on a colour print, for the ink
    colours of the curves read from the scale box). ``progress(done, total)``: per cent of the work."""

    def report(share: float) -> None:
        if progress:
            progress(int(round(100 * min(1.0, share))), 100)

    from core.digitize.page.frame import to_canonical
    from core.digitize.page.ink import ink_map
    from core.digitize.page.sections import find_all_sections

    axis = depth_axis or ("y" if image.shape[0] >= image.shape[1] else "x")
    dpi = _sane_dpi(dpi)
    canon = to_canonical(image, axis)
    prop = Proposal(axis)
    report(0.0)
    darkness = _beating(lambda: ink_map(canon), lambda: report(0.0))
    report(0.04)
    picture_lines = _beating(lambda: along_depth_lines(canon, darkness), lambda: report(0.04))
    report(0.08)
    def lines_of(a: int, b: int) -> list[float]:
        return [r for r, _ in along_depth_lines(canon[:, a:b], darkness[:, a:b])]

    spans = find_all_sections(darkness, [r for r, _ in picture_lines], lines_of) if picture_lines else []
    report(0.1)
    # sizes across (a track's least width, a digit's) need a resolution: where the file gives none, the page's
    # width says it (the archive's 36 scans are 8.25-10.2 in across)
    size_dpi = dpi or canon.shape[0] / PAGE_WIDTH_IN
    prop.sections = lay_out(canon, darkness, spans, picture_lines, size_dpi, lambda k, n: report(0.1 + 0.15 * k / n))
    longest = max(prop.sections, key=lambda s: s.stop - s.start)
    prop.tracks = list(longest.tracks)
    prop.separators = [tuple(c["cols"]) for c in longest.columns]
    if prop.tracks:
        prop.messages.append(f"{len(prop.tracks)} track(s) in the log body: "
                             + ", ".join(f"{a:.0f}–{b:.0f} px" for a, b in prop.tracks))
    else:
        prop.messages.append("no track borders found (no long lines along depth): drag the tracks by hand")
    report(0.25)
    if not ocr:
        return prop
    missing = ocr_available()
    if missing:
        prop.messages.append(missing + "; pick the depths by hand meanwhile")
        return prop
    if prop.sections[0].tracks and prop.sections[0].start > 0:  # the scale box sits above the first stretch of body
        _beating(lambda: _read_box(prop, canon, darkness, dpi, rgb), lambda: report(0.25))
    report(0.3)
    read_depths(prop, canon, darkness, dpi, size_dpi, depth_unit, lambda share: report(0.3 + 0.68 * share))
    name_sections(prop.sections)
    main = next((s for s in prop.sections if s.kind == "main"), None)
    if main is not None and main.tracks:
        prop.tracks = list(main.tracks)
    conclude(prop, canon.shape[1])
    report(1.0)
    return prop


def propose_scan(scan, depth_axis: str | None = None, depth_unit: str = "FT", progress=None) -> Proposal:
    """:func:`propose` for a loaded scan (``core.io.scan.Scan``): its depth axis the long one unless given, its
    resolution along depth from the file (for the scale check), its colour pixels for the curves' inks. The
    command line's ``calibrate --propose`` and ``eval-calibration`` both read a scan this way."""
    image = scan.image
    axis = depth_axis or ("y" if image.shape[0] >= image.shape[1] else "x")
    dpi = scan.info.dpi[1 if axis == "y" else 0] if scan.info.dpi else None
    return propose(image, axis, dpi=dpi, depth_unit=depth_unit, progress=progress, rgb=scan.rgb)


HEARTBEAT_S = 0.5  # a step that reports nothing itself is waited for in beats this long, each reported


def _beating(work, beat):
    """``work()``'s result, run in a thread while this one calls ``beat()`` every :data:`HEARTBEAT_S` until it is
    done: a step that says nothing of its progress (the ink map and the lines of a 66,000-row scan, 1-4 s each; the
    scale box's reading) still lets a caller cancel from ``beat`` within a beat. A cancel leaves the step to end on
    its own (a second or two)."""
    from concurrent.futures import ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(max_workers=1)
    try:
        future = pool.submit(work)
        while not wait([future], timeout=HEARTBEAT_S).done:
            beat()
        return future.result()
    finally:
        pool.shutdown(wait=False)


def _read_box(prop: Proposal, canon: np.ndarray, darkness: np.ndarray, dpi: float | None,
              rgb: np.ndarray | None) -> None:
    """The curves of the scale boxes above the sections and the scales printed in the log body
    (``core/digitize/calibrate/scale_box.py: read_scales``, each section's box read against its own tracks;
    ``rgb``: the scan's colour pixels, in its own frame, for the pens' inks), and the first section's tracks split
    where a box ends on a line inside one (``tracks.split_at_boxes``) unless its framing lines parted them
    already (a box's cells over the sectors of a cement log's image track end on its sector lines: the framed
    tracks were right, the split ones not); in place."""
    from core.digitize.calibrate.scale_box import read_scales

    first = prop.sections[0]
    # upright, as the boxes are read: a tall scan's rows are already depth down, a wide one's columns are turned
    upright_rgb = None if rgb is None else rgb if prop.depth_axis == "y" else rgb.swapaxes(0, 1)
    prop.curves, said = read_scales(canon.T, upright_rgb, first.tracks, [(s.start, s.stop) for s in prop.sections],
                                    dpi, section_tracks=[s.tracks for s in prop.sections])
    prop.messages += said
    if first.framed:  # its tracks are already parted by the lines that run on into its box
        return
    lines = [r for r, _ in along_depth_lines(canon[:, first.start : first.stop],
                                             darkness[:, first.start : first.stop])]
    split = split_at_boxes(first.tracks, [tuple(c["track"]) for c in prop.curves], lines)
    if len(split) > len(first.tracks):
        prop.messages.append("tracks split where a scale box ends on a line inside them: "
                             + ", ".join(f"{a:.0f}–{b:.0f} px" for a, b in split))
        same = prop.tracks == first.tracks
        first.tracks = split
        if same:
            prop.tracks = list(split)
