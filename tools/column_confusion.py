"""How the column classifier scores every labelled column of the archive: curve track or not, a confusion table.

    python3 tools/column_confusion.py tests/data/archive_labels ../shared/data/archive [--split develop]
        [--only NAME ...] [--cache DIR] [--verbose] [--margins] [--export FILE]

For each labelled scan of the split, each stretch of log body the proposal finds (``find_all_sections``, as
``propose`` finds them) is read once for its lines along depth, with how far each runs on into the header's and
footer's boxes (``page/body_lines.py: section_lines``), and its ink; both are cached (``--cache``, default
``~/.cache/welltrace/columns``), so a change to the framing rule (``body_lines.mark_frames``) or to the classifier
(``columns.classify``, ``columns.measure``) is scored over every column in seconds, not minutes of proposals.
The cache is keyed by the code that finds the lines and measures how far they run on (``page/grid.py``,
``page/sections.py``, ``body_lines.section_lines`` and the functions it calls): a change to any of them reads the
bodies again; a change to the framing rule or the classifier does not.

Every labelled column (each section's ``tracks`` and ``other_columns``) is matched to the proposed column whose
both borders lie within 5 px (the scorer's tolerance), and counted by its label (curve track or not) against what
the classifier called it; a labelled column no proposed column matches is "not parted" (its framing lines were
not both found, or a line inside it was taken for one). Proposed columns that match no labelled one and were
called tracks are counted apart (a false track that costs its scan). A scan's tracks are right where its main
section's labelled tracks are exactly the proposed tracks, as ``eval-calibration`` scores them on framed bodies.

``--margins``: for each labelled column, the test that settled its kind and by how much (``columns.decide``: the
least relative distance of a measure from its threshold on the way, 0.1 = 10 % short of flipping), the thinnest
first, and per kind of column the least margin; for columns the width rule told apart, also the margin of the
tests behind it (as they would tell it were it wider): how far a lithology column is from passing as a track where
its width does not say.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.digitize.calibrate.columns import Column, classify, columns_of, decide, measure  # noqa: E402
from core.digitize.page.body_lines import BodyLine, BodyLines, mark_frames, section_lines  # noqa: E402

TOLERANCE_PX = 5.0
CACHE_VERSION = 1


def _source_key() -> str:
    """The cache's key: the code that finds and measures lines (a change to it invalidates what was cached)."""
    import inspect

    from core.digitize.page import body_lines, grid, sections

    # the body lines' reading only: a change to the framing rule (mark_frames) or the classifier keeps the cache
    reading = (body_lines._core, body_lines._lines_of, body_lines._run_end, body_lines.frame_share,
               body_lines.section_lines, body_lines._frames_inside, body_lines._rules_across, body_lines.rule_ink)
    text = "".join(Path(m.__file__).read_text() for m in (grid, sections)) + "".join(
        inspect.getsource(f) for f in reading)
    return hashlib.sha1(f"{CACHE_VERSION}{text}".encode()).hexdigest()[:12]


def _read_bodies(scan_path: Path, cache: Path) -> dict:
    """The stretches of body of a scan, each with its lines (as ``section_lines`` leaves them before framing) and
    its ink (packed bits, rows across × columns along depth); cached."""
    target = cache / f"{scan_path.stem}.{_source_key()}.npz"
    if target.exists():
        z = np.load(target, allow_pickle=False)
        meta = json.loads(str(z["meta"]))
        for i, body in enumerate(meta["bodies"]):
            body["ink"] = np.unpackbits(z[f"ink{i}"], axis=1, count=body["length"]).astype(bool)
        return meta
    from core.digitize.calibrate.proposal import PAGE_WIDTH_IN, _sane_dpi
    from core.digitize.calibrate.tracks import along_depth_lines
    from core.digitize.page.frame import to_canonical
    from core.digitize.page.ink import ink_map
    from core.digitize.page.sections import find_all_sections
    from core.io.scan import load_scan

    scan = load_scan(scan_path)
    image = scan.image
    axis = "y" if image.shape[0] >= image.shape[1] else "x"
    dpi = _sane_dpi(scan.info.dpi[1 if axis == "y" else 0] if scan.info.dpi else None)
    canon = to_canonical(image, axis)
    darkness = ink_map(canon)
    picture = along_depth_lines(canon, darkness)

    def lines_of(a: int, b: int) -> list[float]:
        return [r for r, _ in along_depth_lines(canon[:, a:b], darkness[:, a:b])]

    spans = find_all_sections(darkness, [r for r, _ in picture], lines_of) if picture else []
    size_dpi = dpi or canon.shape[0] / PAGE_WIDTH_IN
    meta = {"dpi": size_dpi, "bodies": []}
    arrays = {}
    for i, ((a, b), later) in enumerate(spans):
        found = section_lines(darkness, a, b, size_dpi)
        ink = darkness[:, a:b] > 0.5
        lines = [{**asdict(ln), "rows": list(ln.rows)} for ln in found.lines]
        meta["bodies"].append({"span": [a, b], "later": later, "boxed": found.boxed,
                               "lines": lines, "length": b - a})
        arrays[f"ink{i}"] = np.packbits(ink, axis=1)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(target, meta=json.dumps(meta), **arrays)
    for i, body in enumerate(meta["bodies"]):
        body["ink"] = np.unpackbits(arrays[f"ink{i}"], axis=1, count=body["length"]).astype(bool)
    return meta


def body_columns_from(body: dict, dpi: float) -> tuple[BodyLines, list[Column]]:
    """The framing rule and the classifier replayed on a cached body, as ``columns.body_columns`` runs them."""
    lines = [BodyLine(**{**ln, "rows": tuple(ln["rows"]), "frame": False}) for ln in body["lines"]]
    found = mark_frames(BodyLines(lines, boxed=body["boxed"]), dpi)
    cols = columns_of(found)
    ink = body["ink"].astype(np.float32)
    for col in cols:
        measure(col, ink)
        col.kind = classify(col, dpi)
    return found, cols


def _matching_body(bodies: list[dict], rows: tuple[float, float]) -> int | None:
    best, cover = None, 0.5 * (rows[1] - rows[0])
    for i, body in enumerate(bodies):
        a, b = body["span"]
        c = max(0.0, min(b, rows[1]) - max(a, rows[0]))
        if c >= cover:
            best, cover = i, c
    return best


def score(labels_dir: Path, scans_dir: Path, split: str, only: list[str] | None, cache: Path,
          verbose: bool) -> dict:
    from core.evaluation.archive_labels import load_folder, load_split

    half = {w: name for name, wells in load_split(labels_dir).items() for w in wells}
    table: Counter = Counter()
    kinds: Counter = Counter()
    margins = []
    scans_right, scans = 0, 0
    rows_out = []
    for lab in load_folder(labels_dir):
        if split != "all" and half.get(lab.well) != split:
            continue
        if only and lab.stem not in only:
            continue
        meta = _read_bodies(scans_dir / lab.scan, cache)
        scans += 1
        main_ok = None
        for s_i, sec in enumerate(lab.sections):
            b_i = _matching_body(meta["bodies"], sec.rows)
            cols = body_columns_from(meta["bodies"][b_i], meta["dpi"])[1] if b_i is not None else []
            used = set()
            labelled = [("track", t[0], t[1], "track") for t in sec.tracks] + \
                       [("other", o["cols"][0], o["cols"][1], o["kind"].split(" ")[0]) for o in sec.other_columns]
            for truth, lo, hi, kind in labelled:
                hit = next((k for k, c in enumerate(cols)
                            if abs(c.lo - lo) <= TOLERANCE_PX and abs(c.hi - hi) <= TOLERANCE_PX), None)
                got = "not parted" if hit is None else cols[hit].kind
                if hit is not None:
                    used.add(hit)
                    c = cols[hit]
                    kind_of, test, margin = decide(c, meta["dpi"])
                    behind = decide(c, meta["dpi"], by_width=False) if test == "narrow" else None
                    margins.append({"scan": lab.stem, "section": s_i, "kind": kind, "truth": truth,
                                    "cols": (lo, hi), "got": kind_of, "test": test, "margin": margin,
                                    "behind": behind})
                table[(truth, got)] += 1
                kinds[(kind, got)] += 1
                if verbose:
                    c = cols[hit] if hit is not None else None
                    rows_out.append(f"{lab.stem} s{s_i} {kind:<14} {lo:7.1f}–{hi:7.1f} -> {got:<10}"
                                    + (f" w={c.width / meta['dpi']:.2f}in lines={len(c.inner)} ink={c.ink:.3f} "
                                       f"inked={c.inked:.2f} busy={c.busy:.2f} across/in={c.crossings * meta['dpi']:.2f}" if c else ""))
            extra = [c for k, c in enumerate(cols) if k not in used and c.kind == "track"]
            table[("none", "track")] += len(extra)
            if verbose:
                for c in extra:
                    rows_out.append(f"{lab.stem} s{s_i} {'(unlabelled)':<14} {c.lo:7.1f}–{c.hi:7.1f} -> track "
                                    f"w={c.width / meta['dpi']:.2f}in lines={len(c.inner)} ink={c.ink:.3f} "
                                    f"inked={c.inked:.2f} busy={c.busy:.2f}")
            if main_ok is None and (sec.kind == "main" or s_i == len(lab.sections) - 1):
                tracks = [(c.lo, c.hi) for c in cols if c.kind == "track"]
                main_ok = len(tracks) == len(sec.tracks) and all(
                    abs(p[0] - w[0]) <= TOLERANCE_PX and abs(p[1] - w[1]) <= TOLERANCE_PX
                    for p, w in zip(tracks, sec.tracks))
                if verbose and not main_ok:
                    rows_out.append(f"{lab.stem}: main section's tracks WRONG: "
                                    + ", ".join(f"{a:.0f}–{b:.0f}" for a, b in tracks))
        scans_right += bool(main_ok)
    return {"table": table, "kinds": kinds, "scans": scans, "scans_right": scans_right, "rows": rows_out,
            "margins": margins}


def print_margins(margins: list[dict]) -> None:
    """Each labelled column's deciding test and margin, the thinnest first (a wrong kind's margin signed
    negative), then the least margin per kind of column."""
    def signed(m: dict) -> float:
        return m["margin"] if m["got"] == m["truth"] else -m["margin"]

    print("\nmargins (labelled column: the test that settled it, its margin; narrow ones: the tests behind width)")
    for m in sorted(margins, key=signed):
        behind = m["behind"]
        extra = ""
        if behind is not None:
            right = (behind[0] == m["truth"])
            extra = f"   behind width: {behind[0]:<5} by {behind[1]:<8} {behind[2] if right else -behind[2]:+.2f}"
        print(f"{m['scan']} s{m['section']} {m['kind']:<14} {m['cols'][0]:7.1f}–{m['cols'][1]:7.1f} "
              f"{m['got']:<5} by {m['test']:<8} {signed(m):+.2f}{extra}")
    print("\nleast margin per kind of column (and behind the width rule, where it told them):")
    for kind in sorted({m["kind"] for m in margins}):
        ms = [m for m in margins if m["kind"] == kind]
        least = min(ms, key=signed)
        line = f"  {kind:<14} {len(ms):>3} columns  least {signed(least):+.2f} ({least['scan']}, by {least['test']})"
        behind = [m for m in ms if m["behind"] is not None]
        if behind:
            vals = [(b["behind"][2] if b["behind"][0] == b["truth"] else -b["behind"][2], b) for b in behind]
            v, b = min(vals, key=lambda x: x[0])
            wrong = sum(x < 0 for x, _ in vals)
            line += f"; behind width {len(behind)}: least {v:+.2f} ({b['scan']}, by {b['behind'][1]}), {wrong} wrong"
        print(line)


def _rounded(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def export(labels_dir: Path, scans_dir: Path, split: str, cache: Path) -> dict:
    """What the classifier and the framing rule read of every labelled section of the split, for a test that
    replays them without the scans: each body's lines (centre, strength, darkness, up, down) with its labelled
    tracks and other columns, and each labelled column measured between its labelled borders."""
    from core.evaluation.archive_labels import load_folder, load_split

    half = {w: name for name, wells in load_split(labels_dir).items() for w in wells}
    out = {"source": f"tools/column_confusion.py --export, the {split} half of {labels_dir.name}",
           "bodies": [], "columns": []}
    for lab in load_folder(labels_dir):
        if split != "all" and half.get(lab.well) != split:
            continue
        meta = _read_bodies(scans_dir / lab.scan, cache)
        for s_i, sec in enumerate(lab.sections):
            b_i = _matching_body(meta["bodies"], sec.rows)
            if b_i is None:
                continue
            body = meta["bodies"][b_i]
            out["bodies"].append({
                "scan": lab.stem, "section": s_i, "dpi": meta["dpi"], "boxed": body["boxed"],
                "lines": [[round(ln["centre"], 2), round(ln["strength"], 4), round(ln["darkness"], 4),
                           round(ln["up"], 4), round(ln["down"], 4), _rounded(ln["up_row"]), _rounded(ln["down_row"])]
                          for ln in body["lines"]],
                "tracks": [list(t) for t in sec.tracks], "other": [list(o["cols"]) for o in sec.other_columns]})
            lines = [BodyLine(**{**ln, "rows": tuple(ln["rows"])}) for ln in body["lines"]]
            ink = body["ink"].astype(np.float32)
            labelled = [("track", t, "track") for t in sec.tracks] + \
                       [("other", o["cols"], o["kind"]) for o in sec.other_columns]
            for truth, (lo, hi), kind in labelled:
                col = Column(float(lo), float(hi), [ln for ln in lines if lo + TOLERANCE_PX < ln.centre < hi - TOLERANCE_PX])
                measure(col, ink)
                out["columns"].append({"scan": lab.stem, "truth": truth, "kind": kind, "cols": [lo, hi],
                                       "lines": len(col.inner), "ink": round(col.ink, 4),
                                       "inked": round(col.inked, 4), "busy": round(col.busy, 4),
                                       "crossings": round(col.crossings, 6), "dpi": meta["dpi"]})
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("labels", type=Path)
    p.add_argument("scans", type=Path)
    p.add_argument("--split", choices=("all", "develop", "held_out"), default="develop")
    p.add_argument("--only", nargs="+")
    p.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "welltrace" / "columns")
    p.add_argument("--verbose", action="store_true", help="one line per labelled column, with its measures")
    p.add_argument("--margins", action="store_true",
                   help="each labelled column's deciding test and margin, the thinnest first, and the least per kind")
    p.add_argument("--export", type=Path, metavar="FILE",
                   help="write what the classifier and the framing rule read of every labelled section (JSON)")
    a = p.parse_args()
    if a.export:
        a.export.write_text(json.dumps(export(a.labels, a.scans, a.split, a.cache), separators=(",", ":")) + "\n")
        return 0
    out = score(a.labels, a.scans, a.split, a.only, a.cache, a.verbose)
    for line in out["rows"]:
        print(line)
    if a.margins:
        print_margins(out["margins"])
    t = out["table"]
    print(f"\n{a.split}: columns by label (rows) and as the classifier read them (columns)")
    print(f"{'':<14}{'track':>8}{'other':>8}{'not parted':>12}")
    for truth in ("track", "other"):
        print(f"{truth:<14}{t[(truth, 'track')]:>8}{t[(truth, 'other')]:>8}{t[(truth, 'not parted')]:>12}")
    print(f"{'unlabelled':<14}{t[('none', 'track')]:>8}")
    k = out["kinds"]
    print("\nother columns by kind: " + ", ".join(
        f"{kind} {k[(kind, 'other')]}/{sum(v for (kk, _), v in k.items() if kk == kind)} told apart"
        for kind in sorted({kk for kk, _ in k if kk != 'track'})))
    print(f"\nscans whose main section's framed columns give its tracks: {out['scans_right']}/{out['scans']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
