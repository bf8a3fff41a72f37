"""What a calibration proposal is made of: the numbers read (:class:`DepthNumber`), the stretches of log body
with what their printed depths gave (:class:`ProposedSection`), and the proposal over the whole scan
(:class:`Proposal`) with the calibration files written from it.

Every step of the proposal (the layout, the reading, the fit, the passes, the messages) reads and writes these,
and the assembly (``proposal.py``) hands them from step to step: kept apart from every step, they are imported by
each without an import circle (the depth reading fills a :class:`Proposal` that ``proposal.py`` makes).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DepthNumber:
    pixel: float  # along depth, at the centre of the printed number
    value: float
    text: str
    kept: bool = False
    across: float | None = None  # where across it was read (the centre of its strip), when known
    glyphs: tuple[float, float] | None = None  # [first, last + 1) rows along depth of its glyphs, when known


@dataclass
class ProposedSection:
    """A stretch of log body (canonical columns [start, stop)): its curve tracks and other columns across, and
    what its printed depths gave."""

    start: int
    stop: int
    kind: str = "log"  # "main" (the first with depths), "repeat" (its depths repeat a main's), "log"
    picks: list[tuple[float, float]] = field(default_factory=list)
    rms_px: float | None = None
    refused: str | None = None  # why no picks were proposed for it
    tracks: list[tuple[float, float]] = field(default_factory=list)  # its curve tracks, (lo, hi) across
    # its other columns: {"kind": "depth" | "other", "cols": [lo, hi], and where measured "lines" inside, "ink" share}
    columns: list[dict] = field(default_factory=list)
    framed: bool = False  # its tracks parted by the lines that run on into its box (page/body_lines.py)

    def with_span(self, start: int, stop: int) -> ProposedSection:
        """A part of this stretch (a pass of its own): the same layout across, no depths yet."""
        return ProposedSection(start, stop, tracks=list(self.tracks), columns=[dict(c) for c in self.columns],
                               framed=self.framed)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "span": [self.start, self.stop], "picks": [list(p) for p in self.picks],
                "rms_px": self.rms_px, "refused": self.refused,
                "tracks": [[round(float(a), 1), round(float(b), 1)] for a, b in self.tracks],
                "columns": [dict(c) for c in self.columns]}


@dataclass
class Proposal:
    depth_axis: str
    tracks: list[tuple[float, float]] = field(default_factory=list)  # (lo, hi) across, in pixels
    separators: list[tuple[float, float]] = field(default_factory=list)  # depth columns and margins found
    numbers: list[DepthNumber] = field(default_factory=list)
    picks: list[tuple[float, float]] = field(default_factory=list)  # (pixel along depth, depth)
    rms_px: float | None = None  # of the kept numbers about their straight line
    messages: list[str] = field(default_factory=list)
    sections: list[ProposedSection] = field(default_factory=list)  # every stretch of log body found
    curves: list[dict] = field(default_factory=list)  # read from the header's scale box (scale_box.py)

    def as_dict(self) -> dict:
        return {"depth_axis": self.depth_axis, "tracks": [list(t) for t in self.tracks],
                "separators": [list(s) for s in self.separators],
                "numbers": [{"pixel": n.pixel, "value": n.value, "text": n.text, "kept": n.kept} for n in self.numbers],
                "picks": [list(p) for p in self.picks], "rms_px": self.rms_px, "messages": list(self.messages),
                "sections": [s.as_dict() for s in self.sections], "curves": [dict(c) for c in self.curves]}

    def _file_dict(self, picks, depth_unit: str, step: float) -> dict:
        """The fields a calibration file and a refusal's draft share: these picks, the curves, the tracks."""
        from core.digitize.calibrate.scale_box import changes_by_depth

        return {"version": 1, "depth_axis": self.depth_axis, "depth_unit": depth_unit,
                "depth_picks": [[round(p, 2), v] for p, v in picks], "step": step,
                "curves": changes_by_depth(self.curves, [(s.start, s.stop, s.picks) for s in self.sections], picks),
                "proposed_tracks": [[round(a, 1), round(b, 1)] for a, b in self.tracks]}

    def draft_dict(self, depth_unit: str = "FT", step: float = 0.5) -> dict | None:
        """What a refused proposal found, kept (the tracks, the sections' spans, the curves of the scale box) with
        the depth picks left empty and ``"draft"`` saying why: the user picks two depths by hand and goes on.
        Not yet a calibration (``digitize`` refuses it, naming the missing picks); None when nothing was found."""
        if not self.tracks and not self.curves:
            return None
        reason = next((s.refused for s in self.sections if s.refused), None) or "no printed depths were read"
        where = "; ".join(f"section {i + 1} ({s.start}–{s.stop})" for i, s in enumerate(self.sections))
        out = {**self._file_dict([], depth_unit, step),
               "draft": f"no depth picks proposed ({reason}): pick two depths by hand"
                        + (f" in each section: {where}" if len(self.sections) > 1 else "")}
        if len(self.sections) > 1 or (self.sections and self.sections[0].start > 0):
            out["sections"] = [{"kind": s.kind, "span": [s.start, s.stop],
                                **({"refused": s.refused} if s.refused else {})} for s in self.sections]
        return out

    def calibration_dict(self, depth_unit: str = "FT", step: float = 0.5) -> dict | None:
        """A draft calibration (version 1): the main section's picks, the sections with picks of their own (log
        body only: header and tail are no section), the curves read from the scale box (the user checks them and
        adds what it did not print or could not be read), and the proposed tracks under ``proposed_tracks`` for
        the app to offer; None without picks."""
        if len(self.picks) < 2:
            return None
        out = self._file_dict(self.picks, depth_unit, step)
        valid = [s for s in self.sections if len(s.picks) >= 2]
        if valid:
            out["sections"] = [{"kind": s.kind, "span": [s.start, s.stop],
                                "depth_picks": [[round(p, 2), v] for p, v in s.picks]} for s in valid]
        return out
