"""A calibration proposal scored against labels read by eye (``core/evaluation/archive_labels.py``).

Three things a proposal must get right on a real scan, each scored the way a user would judge it:

- **Tracks**: a labelled section's curve tracks are right when the proposal gives exactly as many tracks for it and
  each border lies within :data:`TRACK_TOLERANCE_PX` of the labelled border line. A proposal that names tracks per
  section (``sections[i]["tracks"]``) is judged section by section; one list of tracks for the whole scan stands
  for every section. A scan's tracks are right when its main section's are (every section's is reported too).
- **Depths**: a labelled section's depths are right when the proposed section that covers most of it reads both
  labelled depths within :data:`DEPTH_TOLERANCE_FT` (or a pixel and a half, on a print too coarse for two feet to
  be a pixel: a 1:12,000 summary log is 0.07 px a foot), from its own picks, piecewise linear and extrapolated
  as the calibration contract says.
- **Curves**: a labelled scale-box curve is proposed right when one proposed curve of its mnemonic family reads
  both its printed ends, left and right as printed (a reversed scale stays reversed), where its box's scales hold:
  a box printed partway down (a gas scale changed) is answered by the proposed curve's scale change, not by a
  curve of its own. Each proposed curve answers for one labelled curve of a box at most.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

import numpy as np

from core.evaluation.archive_labels import LabelledSection, ScanLabels

TRACK_TOLERANCE_PX = 5.0
DEPTH_TOLERANCE_FT = 2.0
DEPTH_TOLERANCE_PX = 1.5  # no depth is read finer than the print's pixel allows

# mnemonic families: the names printers and service companies give one measurement. Two mnemonics name one curve
# when they are equal or match one family's pattern; the gas components keep their own names (C1 is not C2).
FAMILIES = {
    "gamma ray": r"(S|C|E|H|EC|N)?GR[A-Z0-9]*|GAM(MA)?[A-Z]*|GRGC|SGR|CGR",
    "caliper": r"(H|D|L|S)?CAL[A-Z0-9]*|CLDC|CALI|C13|C24|HD|DCAL",
    "bit size": r"BS|BIT[A-Z]*",
    "resistivity": r"I[LDM][A-Z0-9]*|LL[DS8][A-Z0-9]*|MSFL|SFL[A-Z]*|RT|RXO[A-Z0-9]*|RES[A-Z0-9]*|AT[0-9]+|AHT[A-Z0-9]*|"
                   r"HDRS|HMRS|HLLD|HLLS|RLA[0-9]|M2R[0-9]|RD|RS|RM|MINV|MNOR|RILD|RILM|RLL3",
    "sonic": r"DT[A-Z0-9]*|AC|SONIC|DTCO|DTSM",
    "neutron porosity": r"NPHI|NPOR|CNPOR|NPL|TNPH|NEU[A-Z]*|CNC[A-Z]*|PHIN|CN|NPHS",
    "density": r"RHOB|RHOZ|DEN[A-Z]*|ZDEN|ZDNC|HDEN|DRHB",
    "density correction": r"DRHO|ZCOR|HDRA|DRH",
    "photoelectric": r"PEF[A-Z]*|PE|PDPE",
    "spontaneous potential": r"SP[A-Z]*",
    "tension": r"TENS?[A-Z]*|LTEN|SMTU|TEN",
    "rate of penetration": r"ROP[A-Z0-9]*|ROF",
    "total gas": r"TG|GAS|TGAS|TOTGAS|TOTAL ?GAS",
    "weight on bit": r"WOB",
    "temperature": r"TEMP[A-Z]*|WTEP|MTEM",
    "casing collar": r"CCL[A-Z]*|ECCE",
    "sonic porosity": r"SPHI|PHIS|SPOR",
    "amplitude": r"AMP[A-Z0-9]*|CBL|CBLF",
    "travel time": r"TT[0-9]*|TTSL",
    # casing inspection: one measurement, several vendors' names (a caliper tool's thickness and inner diameter)
    "minimum thickness": r"TMIN|MINTH|THMN|THMIN",
    "maximum thickness": r"TMAX|MAXTH|THMX|THMAX",
    "average thickness": r"TAVG|THAV|AVTH",
    "minimum inner diameter": r"MINID|IDMN|IDMIN",
    "maximum inner diameter": r"MAXID|IDMX|IDMAX",
    "average inner diameter": r"IDAV|AVID|IDAVG",
    "nominal inner diameter": r"NOMID|IDNOM",
    "cement bond": r"BOND(ED)?",
}
_FAMILY_RE = {name: re.compile(rf"^(?:{pattern})$") for name, pattern in FAMILIES.items()}


def family_of(mnemonic: str) -> str:
    """The family a mnemonic belongs to (its own name, upper-cased, when none claims it)."""
    m = re.sub(r"[^A-Z0-9 ]", "", mnemonic.upper()).strip()
    for name, pattern in _FAMILY_RE.items():
        if pattern.match(m):
            return name
    return m


def same_curve_name(a: str, b: str) -> bool:
    return a.strip().upper() == b.strip().upper() or family_of(a) == family_of(b)


def _ends_equal(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


@dataclass
class SectionScore:
    kind: str
    rows: tuple[int, int]
    tracks_right: bool
    tracks_detail: str
    depths_right: bool | None  # None: the section prints no legible depth, nothing to score
    depth_detail: str


@dataclass
class ScanScore:
    scan: str
    well: str
    seconds: float
    error: str = ""  # the proposal's failure (a refusal is not one: it is scored on what it kept)
    sections: list[SectionScore] = field(default_factory=list)
    curves_labelled: int = 0
    curves_right: int = 0
    curve_misses: list[str] = field(default_factory=list)
    cpu_seconds: float | None = None  # the proposal's CPU time (its threads and Tesseract's), where measured

    @property
    def tracks_right(self) -> bool:
        """The main section's tracks (the first labelled main pass, else the first section)."""
        main = next((s for s in self.sections if s.kind == "main"), self.sections[0] if self.sections else None)
        return bool(main and main.tracks_right)

    def as_dict(self) -> dict:
        return {**asdict(self), "tracks_right": self.tracks_right}


def _tracks_for(proposal: dict, index: int | None) -> list[tuple[float, float]]:
    if index is not None and "tracks" in proposal["sections"][index]:
        return [tuple(t) for t in proposal["sections"][index]["tracks"]]
    return [tuple(t) for t in proposal.get("tracks", [])]


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


def _covering_section(proposal: dict, rows: tuple[int, int]) -> int | None:
    """The proposed section that covers most of the labelled rows (at least half of them)."""
    best, best_cover = None, 0.5 * (rows[1] - rows[0])
    for i, s in enumerate(proposal.get("sections", [])):
        cover = _overlap(tuple(s["span"]), rows)
        if cover >= best_cover:
            best, best_cover = i, cover
    return best


def depth_at(picks: list[list[float]], row: float) -> float:
    """The depth at ``row`` through picks: piecewise linear, extrapolated linearly outside them."""
    p = np.asarray(sorted(picks), np.float64)
    if row <= p[0, 0]:
        a, b = p[0], p[1]
    elif row >= p[-1, 0]:
        a, b = p[-2], p[-1]
    else:
        return float(np.interp(row, p[:, 0], p[:, 1]))
    return float(a[1] + (row - a[0]) * (b[1] - a[1]) / (b[0] - a[0]))


def _score_tracks(labelled: LabelledSection, proposed: list[tuple[float, float]]) -> tuple[bool, str]:
    want = list(labelled.tracks)
    if not want:
        return True, "no curve track labelled"
    if len(proposed) != len(want):
        return False, f"{len(proposed)} proposed for {len(want)}: " + ", ".join(f"{a:.0f}–{b:.0f}" for a, b in proposed)
    off = max(max(abs(p[0] - w[0]), abs(p[1] - w[1])) for p, w in zip(sorted(proposed), want))
    return off <= TRACK_TOLERANCE_PX, f"borders within {off:.1f} px"


def _score_depths(labelled: LabelledSection, proposal: dict, index: int | None) -> tuple[bool | None, str]:
    if len(labelled.depths) < 2:
        return None, "no depth labelled"
    if index is None:
        return False, "no proposed section covers it"
    picks = proposal["sections"][index].get("picks") or []
    if len(picks) < 2:
        refused = proposal["sections"][index].get("refused")
        return False, f"no picks ({refused})" if refused else "no picks"
    tolerance = max(DEPTH_TOLERANCE_FT, DEPTH_TOLERANCE_PX / labelled.px_per_unit if labelled.px_per_unit else 0.0)
    errors = [depth_at(picks, row) - depth for row, depth in labelled.depths]
    worst = max(errors, key=abs)
    rms = proposal["sections"][index].get("rms_px")
    # how many printed depths agreed on the line, and how tightly: a section right by a thin margin shows here
    return abs(worst) <= tolerance, (f"off by {worst:+.1f} (tolerance {tolerance:.1f}); {len(picks)} picks"
                                     + (f", rms {rms:.2f} px" if rms is not None else ""))


def _proposed_ends(curve: dict, row: float | None = None) -> tuple[float, float]:
    """(value at the left border, value at the right border) of a proposed calibration curve; at ``row``, the
    scale of the last of its ``scale_changes`` printed at or above that row (``from_pixel``), if any."""
    (t0, t1), (s0, s1) = curve["track"], curve["scale"]
    if row is not None:
        for change in sorted(curve.get("scale_changes", []), key=lambda c: c["from_pixel"]):
            if change["from_pixel"] <= row:
                s0, s1 = change["scale"]
    return (s0, s1) if t0 <= t1 else (s1, s0)


def _score_curves(labels: ScanLabels, proposal: dict) -> tuple[int, int, list[str]]:
    """Box by box: each labelled curve against the proposed curves' scales where the box's scales hold (below the
    box, from the row it applies from), each proposed curve answering for one curve of a box. A box partway down
    (a gas scale changed) is right when the proposal's curve has changed to its scale there; a repeat pass's box
    that prints the main pass's curves again is answered by the same curves (a calibration's curves are those of
    every section)."""
    wanted = 0
    right, misses = 0, []
    for box in labels.scale_boxes:
        at = float(max(box.rows[1], box.applies_from_row))
        free = list(proposal.get("curves", []))
        for c in box.curves:
            wanted += 1
            match = next((p for p in free if same_curve_name(p["mnemonic"], c.mnemonic)
                          and all(_ends_equal(x, y) for x, y in zip(_proposed_ends(p, at), (c.left, c.right)))), None)
            if match is not None:
                free.remove(match)
                right += 1
            else:
                misses.append(f"{c.mnemonic} {c.left:g}–{c.right:g}" + (f" (box at row {box.rows[0]})"
                                                                         if len(labels.scale_boxes) > 1 else ""))
    return wanted, right, misses


def score_scan(labels: ScanLabels, proposal: dict | None, seconds: float, error: str = "") -> ScanScore:
    """One scan's proposal (``Proposal.as_dict()``; None when it failed or ran out of time) against its labels."""
    proposal = proposal or {"tracks": [], "sections": [], "curves": []}
    out = ScanScore(labels.stem, labels.well, seconds, error, cpu_seconds=proposal.get("cpu_seconds"))
    for s in labels.sections:
        index = _covering_section(proposal, s.rows)
        tracks_ok, tracks_detail = _score_tracks(s, _tracks_for(proposal, index))
        depths_ok, depth_detail = _score_depths(s, proposal, index)
        out.sections.append(SectionScore(s.kind, s.rows, tracks_ok, tracks_detail, depths_ok, depth_detail))
    out.curves_labelled, out.curves_right, out.curve_misses = _score_curves(labels, proposal)
    return out


@dataclass
class Summary:
    scans: int
    tracks_right: int
    sections_scored: int
    depths_right: int
    curves_labelled: int
    curves_right: int
    median_seconds: float
    max_seconds: float
    failed: int
    median_cpu: float | None = None  # of the proposals that say their CPU time
    max_cpu: float | None = None

    def line(self, name: str) -> str:
        def share(a: int, b: int) -> str:
            return f"{a}/{b} ({100 * a / b:.0f} %)" if b else "–"

        return (f"{name}: {self.scans} scans; tracks right {share(self.tracks_right, self.scans)}; depths right "
                f"{share(self.depths_right, self.sections_scored)} of sections; scale-box curves "
                f"{share(self.curves_right, self.curves_labelled)}; seconds median {self.median_seconds:.1f}, max "
                f"{self.max_seconds:.1f}"
                + (f" (CPU median {self.median_cpu:.1f}, max {self.max_cpu:.1f})" if self.median_cpu is not None else "")
                + f"; {self.failed} failed or cut")


def summarise(scores: list[ScanScore]) -> Summary:
    depth = [s.depths_right for sc in scores for s in sc.sections if s.depths_right is not None]
    secs = [sc.seconds for sc in scores] or [0.0]
    cpu = [sc.cpu_seconds for sc in scores if sc.cpu_seconds is not None]
    return Summary(len(scores), sum(sc.tracks_right for sc in scores), len(depth), sum(depth),
                   sum(sc.curves_labelled for sc in scores), sum(sc.curves_right for sc in scores),
                   float(np.median(secs)), float(max(secs)), sum(bool(sc.error) for sc in scores),
                   float(np.median(cpu)) if cpu else None, float(max(cpu)) if cpu else None)
