"""Simulate the network reading a dotted pen as dashed, on our own logs: the foreign hard prints' NULLs measured
without the judge.

On the foreign hard prints the bundled model reads the renderer's dotted pens (short marks) as DASHED: its class-3
map is empty over the track and the dotted curve's strokes lie in the dashed map beside the dashed curve's
(docs/accuracy.md, the nineteenth round, helper B). Our families' dotted pens it reads as dotted, so nothing in our
figures shows that. This tool takes the cached maps (``core/evaluation/evidence_cache.py``) of the logs of a family
that hold a dashed and a dotted curve in one track, moves the dotted map into the dashed one
(class2 = max(class2, class3), class3 = 0: a code is monotone in p, so the max of codes is the code of the max),
traces again, with and without the passes named by ``--off``, and scores the dotted and dashed curves of those
tracks: r (median), NULL, wrong anywhere, confidently wrong, low, confidently right, ECE.

    python3 tools/dotted_as_dashed.py FAMILY [FAMILY ...] --cache DIR [--count N] [--seed S] [--off NAME,...]
        [--keep]    (--keep: the maps as the network gave them, no move: the rule must not fire or not hurt)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere, as the other tools are


def moved(ev):
    """The maps with class 3 read as class 2 (a copy)."""
    from core.digitize.evidence.coded_map import CodedMap
    from core.digitize.job.pipeline import ReadEvidence

    maps = dict(ev.maps)
    if 2 in maps and 3 in maps:
        a, b = maps[2], maps[3]
        if isinstance(a, CodedMap):
            maps[2] = CodedMap(np.maximum(a.codes, b.codes))
            maps[3] = CodedMap(np.zeros_like(b.codes))
        else:
            maps[2] = np.maximum(np.asarray(a), np.asarray(b))
            maps[3] = np.zeros_like(np.asarray(b))
    return ReadEvidence(maps, ev.mask, ev.method, ev.memory)


def mixed_tracks(calib) -> set[str]:
    """The mnemonics of the dashed and dotted curves that share a track with a curve of the other broken style."""
    out = set()
    for s in calib.curves:
        if s.klass in (2, 3) and any(o.klass == 5 - s.klass and o.shares_track_with(s) for o in calib.curves):
            out.add(s.mnemonic)
    return out


def main(argv=None) -> int:
    from core.digitize.job.pipeline import digitize
    from core.digitize.trace.params import TraceParams
    from core.evaluation.evidence_cache import EvidenceCache
    from core.evaluation.styles import EVAL_SEED, expected_calibration_error, family_logs, family_set_name, score_result
    from core.model.bundled import BUNDLED_MODEL
    from core.model.model_io import load_model

    ap = argparse.ArgumentParser()
    ap.add_argument("families", nargs="+")
    ap.add_argument("--cache", required=True)
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--seed", type=int, default=EVAL_SEED)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--off", default="")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--curves", action="store_true", help="a line per scored curve")
    a = ap.parse_args(argv)
    model, _ = load_model(BUNDLED_MODEL)
    cache = EvidenceCache(a.cache, BUNDLED_MODEL)
    params = TraceParams(passes_off=frozenset(n for n in a.off.split(",") if n))
    tot = {st: dict(curves=0, n=0, null=0, wrong=0, wrong_any=0, low=0, cr=0, bins=np.zeros((10, 3)), r=[])
           for st in (2, 3)}
    logs = 0
    for lg in family_logs_range(a, family_logs, family_set_name):
        set_name, lg = lg
        mine = mixed_tracks(lg.calibration)
        if not mine:
            continue
        ev = cache.load(set_name, lg.name)
        if ev is None:
            print(f"no maps for {set_name}/{lg.name}", file=sys.stderr)
            continue
        logs += 1
        res = digitize(lg.image, lg.calibration, evidence=ev if a.keep else moved(ev), model=model, grid=True,
                       source=lg.name, rgb=lg.rgb, params=params)
        for c in score_result(lg, res):
            if c["mnemonic"] not in mine:
                continue
            t = tot[c["style"]]
            n = c["samples"]
            t["curves"] += 1
            t["n"] += n
            t["null"] += round(c["null"] * n)
            for k in ("wrong", "wrong_any", "low"):
                t[k] += c[k]
            t["cr"] += c["confident_right"]
            t["bins"] += np.asarray(c.get("bins", np.zeros((10, 3))))
            t["r"].append(c["r"])
            if a.curves:
                print(f"{c['log']} {c['mnemonic']:<6} st{c['style']} r {c['r']:.3f} n {n} null {round(c['null'] * n)} "
                      f"wrong {c['wrong']} any {c['wrong_any']} low {c['low']} cr {c['confident_right']}")
    out = {"logs": logs}
    for st, t in tot.items():
        n = max(t["n"], 1)
        out[{2: "dashed", 3: "dotted"}[st]] = {
            "curves": t["curves"], "samples": t["n"], "median_r": float(np.nanmedian(t["r"])) if t["r"] else None,
            "null_pct": 100 * t["null"] / n, "wrong_any_pct": 100 * t["wrong_any"] / n,
            "wrong_pct": 100 * t["wrong"] / n, "low_pct": 100 * t["low"] / n, "yield_pct": 100 * t["cr"] / n,
            "ece": expected_calibration_error(t["bins"])}
    print(json.dumps(out, indent=1))
    return 0


def family_logs_range(a, family_logs, family_set_name):
    for fam in a.families:
        name = family_set_name(fam, 1600, 480, a.seed, None)
        for i, lg in enumerate(family_logs(fam, a.start + a.count, 1600, 480, a.seed, None)):
            if i >= a.start:
                yield name, lg


if __name__ == "__main__":
    raise SystemExit(main())
