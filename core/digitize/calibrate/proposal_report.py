"""The proposal's conclusion (:func:`conclude`): its picks, the main section's, and its messages: per section
what was read, kept or refused, the header and tail that are no log, and the numbers rejected.

Apart from the steps that find things: nothing here reads the scan; it says what they found, so that nothing
is silently wrong and a section without picks says which picks to make by hand.
"""

from __future__ import annotations

from core.digitize.calibrate.depth_fit import EDGE_PX
from core.digitize.calibrate.proposal_records import Proposal


def conclude(prop: Proposal, length: int) -> None:
    """The proposal's picks (the main section's) and a message per section: what was read, kept, refused."""
    unit_rows = "rows" if prop.depth_axis == "y" else "columns"
    for i, sec in enumerate(prop.sections):
        where = f"section {i + 1} ({unit_rows} {sec.start}–{sec.stop})"
        if sec.picks:
            kept = [n for n in prop.numbers if n.kept and sec.start - EDGE_PX <= n.pixel < sec.stop + EDGE_PX]
            prop.messages.append(f"{where}, {sec.kind}: {len(sec.picks)} printed depths agree "
                                 f"({kept[0].text}–{kept[-1].text}, {sec.rms_px:.1f} px RMS about a straight line)")
        else:
            prop.messages.append(f"{where}: no depth picks ({sec.refused}): pick two depths by hand there")
    header = prop.sections[0].start if prop.sections else 0
    tail = length - prop.sections[-1].stop if prop.sections else 0
    if prop.sections and (header > 0 or tail > 0):
        prop.messages.append(f"not log: {header} {unit_rows} of header above the first section and {tail} of tail "
                             "below the last")
    main = next((s for s in prop.sections if s.kind == "main" and s.picks), None)
    if main is None:
        prop.messages.append("no section has printed depths that make a plausible depth scale: pick the depths "
                             "by hand")
        for n in prop.numbers:
            n.kept = False
        return
    prop.picks, prop.rms_px = list(main.picks), main.rms_px
    rejected = [n for n in prop.numbers if not n.kept]
    if rejected:
        prop.messages.append(f"rejected {len(rejected)} number(s) outside every section's depth scale (misreads, "
                             "header text, table entries): " + ", ".join(f"{n.text} at {n.pixel:.0f} px"
                                                                          for n in rejected[:10])
                             + (" …" if len(rejected) > 10 else ""))
