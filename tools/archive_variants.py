"""A robustness set made from the develop half of the labelled archive: each develop scan degraded the ways other
archive scans differ, with its labels carried over, so the proposal is scored on kinds of page it was not tuned on
without looking at a held-out scan.

    python3 tools/archive_variants.py write tests/data/archive_labels ../shared/data/archive [--out DIR]
        [--kinds 72dpi 100dpi 1bit jpeg]
    OMP_NUM_THREADS=1 python3 -m app.launch eval-calibration DIR DIR --split develop --jobs 1 --json F
    python3 tools/archive_variants.py table F [F_BEFORE]

The variants (written to ``--out``, default ``~/.cache/welltrace/archive_variants``: outside the project, never
committed; each ``NAME~KIND.tif`` beside its ``NAME~KIND.labels.json`` and the develop half's ``split.json``):

- ``72dpi``, ``100dpi``: resampled with area interpolation (what a low-resolution scanner's sensor averages), the
  colour mode kept (a 1-bit page comes out grey, as a scanner at that resolution would give it); only scans whose
  labelled resolution is over 1.15x the target (a 75-dpi scan is not made a 72-dpi one);
- ``1bit``: the grey page cut at a fixed threshold (160: the grey grids kept) and stored 1-bit, as the archive's bilevel scans are;
  scans already 1-bit are left out;
- ``jpeg``: a JPEG round trip at quality 30 with 4:2:0 colour (blurred strokes, ringing, blocks), stored lossless.

Skew is not made: the proposal does not claim to read a skewed page (its lines along depth are found as columns).

The labels are transformed the way the pixels were: rows, columns, each section's px per ft and the scan's size and
resolution are scaled by the resampling's factor (a label at the centre of pixel ``x`` goes to ``(x + 0.5) f - 0.5``).
The scorer's tolerances are not changed: 5 px and 1.5 px stay in the variant's own pixels (at 72 dpi 5 px is
0.07 in, where on a 200-dpi scan it was 0.025 in: a looser test in inches, the one a user of that scan meets) and
2 ft stays 2 ft of the print, as an archive scan at that resolution is scored.

``table`` reads ``eval-calibration --json`` files of a variant set and prints, per kind of variant, tracks right,
depths right and seconds (with a second file, before and after side by side).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

KINDS = ("72dpi", "100dpi", "1bit", "jpeg")
THRESHOLD = 160  # the fixed cut of a bilevel scan: grey under it is ink (the develop prints' grey grids are 128,
#   which a cut at 128 erases with the track borders: a page no calibration could be read from, not a 1-bit scan of it)
JPEG_QUALITY = 30
JPEG_STRIP = 8192  # rows a JPEG holds at a time (a JPEG is at most 65,535 rows; the archive's tallest is 66,000)
DEFAULT_OUT = Path.home() / ".cache" / "welltrace" / "archive_variants"


def _load(path: Path):
    """The scan's pixels as Pillow holds them (RGB, L or 1) and the dpi its header says."""
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = None
    img = Image.open(path)
    img.load()
    if img.mode not in ("RGB", "L", "1"):
        img = img.convert("RGB")
    return img, img.info.get("dpi")


def _resample(img, factor: float):
    import cv2
    from PIL import Image

    arr = np.asarray(img.convert("L") if img.mode == "1" else img)
    h, w = arr.shape[:2]
    size = (max(1, round(w * factor)), max(1, round(h * factor)))
    return Image.fromarray(cv2.resize(arr, size, interpolation=cv2.INTER_AREA))


def _binarise(img):
    from PIL import Image

    grey = np.asarray(img.convert("L"))
    return Image.fromarray(grey >= THRESHOLD)  # bool -> mode "1": white where the page is light


def _jpeg(img):
    from PIL import Image

    arr = np.asarray(img.convert("L") if img.mode == "1" else img)
    out = np.empty_like(arr)
    for r0 in range(0, arr.shape[0], JPEG_STRIP):
        buf = io.BytesIO()
        Image.fromarray(arr[r0:r0 + JPEG_STRIP]).save(buf, "JPEG", quality=JPEG_QUALITY, subsampling=2)
        buf.seek(0)
        out[r0:r0 + JPEG_STRIP] = np.asarray(Image.open(buf))
    return Image.fromarray(out)


def _scale_labels(obj: dict, factor: float, name: str, size: tuple[int, int]) -> dict:
    """The label file's coordinates carried through a resampling by ``factor`` (1.0: unchanged)."""

    def at(v: float) -> float:
        return round((v + 0.5) * factor - 0.5, 1) if factor != 1.0 else v

    out = json.loads(json.dumps(obj))
    out["scan"] = name
    out["size"] = list(size)
    if out.get("dpi"):
        out["dpi"] = round(out["dpi"] * factor, 2)
    for s in out.get("sections", []):
        s["rows"] = [int(round(at(r))) for r in s["rows"]]
        s["rows"][1] = min(s["rows"][1], size[1])
        s["depths"] = [[at(r), d] for r, d in s.get("depths", [])]
        if s.get("check"):
            s["check"] = [at(s["check"][0]), s["check"][1]]
        if s.get("px_per_unit"):
            s["px_per_unit"] = round(s["px_per_unit"] * factor, 4)
        s["tracks"] = [[at(a), at(b)] for a, b in s.get("tracks", [])]
        for o in s.get("other_columns", []):
            if "cols" in o:
                o["cols"] = [at(c) for c in o["cols"]]
    for b in out.get("scale_boxes", []):
        b["rows"] = [int(round(at(r))) for r in b["rows"]]
        if "applies_from_row" in b:
            b["applies_from_row"] = int(round(at(b["applies_from_row"])))
    return out


def make_variant(img, header_dpi, label_dpi: float, kind: str):
    """(picture, factor, dpi to write) of one kind, or None where the kind does not apply to this scan."""
    if kind in ("72dpi", "100dpi"):
        target = float(kind[:-3])
        if not label_dpi or label_dpi <= 1.15 * target:
            return None
        factor = target / label_dpi
        dpi = tuple(d * factor for d in header_dpi) if header_dpi and header_dpi[0] >= 50 else header_dpi
        return _resample(img, factor), factor, dpi
    if kind == "1bit":
        return (None if img.mode == "1" else (_binarise(img), 1.0, header_dpi))
    if kind == "jpeg":
        return _jpeg(img), 1.0, header_dpi
    raise ValueError(kind)


def write(args) -> int:
    from core.evaluation.archive_labels import load_split

    labels_dir, scans_dir, out = Path(args.labels), Path(args.scans), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    split = load_split(labels_dir)
    (out / "split.json").write_text(json.dumps({"rule": "develop wells only: variants of develop scans",
                                                "develop": split["develop"], "held_out": []}, indent=1))
    for path in sorted(labels_dir.glob("*.labels.json")):
        obj = json.loads(path.read_text())
        if obj["well"] not in split["develop"] or (args.only and Path(obj["scan"]).stem not in args.only):
            continue
        img, header_dpi = _load(scans_dir / obj["scan"])
        for kind in args.kinds:
            name = f"{Path(obj['scan']).stem}~{kind}.tif"
            made = make_variant(img, header_dpi, obj.get("dpi"), kind)
            if made is None:
                continue
            pic, factor, dpi = made
            save = {"compression": "group4"} if pic.mode == "1" else {"compression": "tiff_deflate"}
            if dpi:
                save["dpi"] = dpi
            pic.save(out / name, **save)
            (out / name.replace(".tif", ".labels.json")).write_text(
                json.dumps(_scale_labels(obj, factor, name, pic.size), indent=1))
            print(f"{name}: {pic.size[0]} x {pic.size[1]} {pic.mode}, factor {factor:.3f}", flush=True)
    return 0


def _kind_of(scan: str) -> str:
    return scan.split("~", 1)[1] if "~" in scan else "original"


def _rows(path: str) -> dict[str, dict]:
    per: dict[str, dict] = defaultdict(lambda: {"scans": 0, "tracks": 0, "sections": 0, "depths": 0, "seconds": [],
                                                "failed": []})
    for sc in json.loads(Path(path).read_text()):
        row = per[_kind_of(sc["scan"])]
        row["scans"] += 1
        row["tracks"] += bool(sc["tracks_right"])
        scored = [s["depths_right"] for s in sc["sections"] if s["depths_right"] is not None]
        row["sections"] += len(scored)
        row["depths"] += sum(scored)
        row["seconds"].append(sc["cpu_seconds"] if sc.get("cpu_seconds") is not None else sc["seconds"])
        if not sc["tracks_right"] or not all(scored):
            row["failed"].append(sc["scan"].split("~")[0][3:] + ("" if sc["tracks_right"] else " T")
                                 + ("" if all(scored) else f" D{sum(scored)}/{len(scored)}"))
    return per


def table(args) -> int:
    runs = [_rows(p) for p in args.json]
    kinds = sorted({k for r in runs for k in r}, key=lambda k: (KINDS + ("original",)).index(k)
                   if k in KINDS + ("original",) else 99)
    head = " | ".join(f"{lab} tracks | {lab} depths | {lab} CPU s median, max"
                      for lab in (["before", "after"] if len(runs) == 2 else ["run"]))
    print(f"| variant | scans | {head} |")
    print("|---|---|" + "---|" * (3 * len(runs)))
    for k in kinds:
        cells = []
        for r in runs:
            row = r.get(k)
            if row is None:
                cells += ["–"] * 3
                continue
            s = np.asarray(row["seconds"])
            cells += [f"{row['tracks']}/{row['scans']} ({100 * row['tracks'] / row['scans']:.0f} %)",
                      f"{row['depths']}/{row['sections']} ({100 * row['depths'] / max(1, row['sections']):.0f} %)",
                      f"{np.median(s):.1f}, {s.max():.1f}"]
        print(f"| {k} | {max(r.get(k, {'scans': 0})['scans'] for r in runs)} | " + " | ".join(cells) + " |")
    for lab, r in zip(["before", "after"] if len(runs) == 2 else ["run"], runs):
        for k in kinds:
            if k in r and r[k]["failed"]:
                print(f"{lab} {k} wrong: {', '.join(r[k]['failed'])}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="write the develop scans' variants and their labels")
    w.add_argument("labels")
    w.add_argument("scans")
    w.add_argument("--out", default=str(DEFAULT_OUT))
    w.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    w.add_argument("--only", nargs="+", metavar="NAME")
    w.set_defaults(func=write)
    t = sub.add_parser("table", help="per kind of variant: tracks, depths, seconds from eval-calibration --json")
    t.add_argument("json", nargs="+", help="one file, or two (before, after)")
    t.set_defaults(func=table)
    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
