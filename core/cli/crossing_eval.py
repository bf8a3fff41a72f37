"""``welltrace eval-crossings``: tracks of 2–3 crossing curves, every pairing of line styles, scored.

Each log draws every one of its tracks with exactly the curves of one pairing
(solid 1, dashed 2, dotted 3: distinct styles, same-style pairs, triples),
none wrapping, with shapes whose ranges overlap so that they cross. Traced
from their true masks (``--from-mask``: the tracer's ceiling, what a user's
hand-corrected label gives) or from a model's evidence, and scored per
pairing against the truth: median r and RMSE, the worst curve, and for
same-style groups the *separation*: where the curves are more than 8 px
apart, the share of columns where their traces lie on two different curves
(within 3 px each), whatever their names. r measures identity too, which at
a meeting of two same-style curves the image often cannot give
(``core/digitize/crossings.py``); separation measures what the tracer can.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import numpy as np

from core.digitize.metrics import CurveScores, compare_curve
from core.digitize.pipeline import digitize
from core.synth import generate_log

PAIRINGS: tuple[tuple[int, ...], ...] = ((1, 2), (1, 3), (2, 3), (1, 1), (2, 2), (3, 3), (1, 2, 3), (1, 1, 2))
# colour logs: curves of one line style told apart by their inks (each curve of a track has its own)
COLOUR_PAIRINGS: tuple[tuple[int, ...], ...] = ((1, 1), (1, 1, 1), (1, 2), (2, 2))
CROSSING_SEED = 515151  # never a training stream's seed
APART_PX = 8.0  # same-style curves farther apart than this must be traced on two different curves ...
ON_CURVE_PX = 3.0  # ... each within this of one


@dataclass
class PairingScore(CurveScores):
    pairing: tuple[int, ...]
    curves: list[dict] = field(default_factory=list)  # per curve: log, mnemonic, class, r, rmse_pct
    separated: int = 0  # same-style columns traced on two different curves
    apart: int = 0  # same-style columns where the curves are apart

    @property
    def separation(self) -> float | None:
        return self.separated / self.apart if self.apart else None

    def worst(self) -> dict | None:
        ok = [c for c in self.curves if np.isfinite(c["r"])]
        return min(ok, key=lambda c: c["r"]) if ok else None

    def as_dict(self) -> dict:
        return {"pairing": "+".join(map(str, self.pairing)), "median_r": self.median_r,
                "median_rmse_pct": self.median_rmse_pct, "separation": self.separation,
                "curves": len(self.curves), "worst": self.worst()}


def crossing_logs(pairing: tuple[int, ...], count: int, style: str = "uniform", width: int = 1600,
                  height: int = 384, seed: int = CROSSING_SEED):
    """``count`` logs whose every track carries exactly ``pairing``'s line styles, alternately tall and wide."""
    for i in range(count):
        s = int(np.random.SeedSequence([seed, *pairing, len(pairing), i]).generate_state(1)[0])
        yield generate_log(s, width, height, ("x", "y")[i % 2], style=style, classes=pairing,
                           name=f"{'+'.join(map(str, pairing))}_{i:02d}")


def _separation(lg, res) -> tuple[int, int]:
    specs = lg.calibration.curves
    cols = res.traces[0].position.size
    depth = lg.calibration.depth_at(np.arange(cols, dtype=np.float64))
    good = total = 0
    groups: dict[tuple, list[int]] = {}
    for k, s in enumerate(specs):
        groups.setdefault((s.klass, s.track), []).append(k)
    for ks in groups.values():
        if len(ks) != 2:
            continue
        truth = np.array([specs[k].position_of(np.interp(depth, lg.depth, lg.truth[specs[k].mnemonic]))[0] for k in ks])
        traced = np.array([res.traces[k].position for k in ks])
        apart = np.abs(truth[0] - truth[1]) > APART_PX
        nearest = np.argmin(np.abs(traced[:, None, :] - truth[None, :, :]), axis=1)  # (2, cols)
        dist = np.min(np.abs(traced[:, None, :] - truth[None, :, :]), axis=1)
        on = np.isfinite(traced).all(0) & (dist < ON_CURVE_PX).all(0) & (nearest[0] != nearest[1])
        good += int((apart & on).sum())
        total += int(apart.sum())
    return good, total


def evaluate_pairing(pairing: tuple[int, ...], model=None, count: int = 6, style: str = "uniform",
                     width: int = 1600, height: int = 384, seed: int = CROSSING_SEED, from_mask: bool | None = None,
                     colour: bool = True) -> PairingScore:
    """Trace ``count`` logs of one pairing from their true masks (default when ``model`` is None) or from
    evidence (the model's, or the classical ink with ``from_mask=False``); ``colour``: give the tracer the
    colour pixels of a colour log (off: the same logs as a grey scan)."""
    score = PairingScore(tuple(pairing))
    from_mask = model is None if from_mask is None else from_mask
    for lg in crossing_logs(pairing, count, style, width, height, seed):
        res = digitize(lg.image, lg.calibration, model, mask=lg.mask if from_mask else None, source=lg.name,
                       rgb=lg.rgb if colour else None)
        for spec in lg.calibration.curves:
            pred = np.interp(lg.depth, res.depth, res.values[spec.mnemonic], left=np.nan, right=np.nan)
            m = compare_curve(spec.mnemonic, lg.depth, pred, lg.truth[spec.mnemonic], spec.value_range)
            score.curves.append({"log": lg.name, "mnemonic": spec.mnemonic, "class": spec.klass,
                                 "r": float(m.r), "rmse_pct": float(m.rmse_pct)})
        good, total = _separation(lg, res)
        score.separated += good
        score.apart += total
    return score


def add_eval_crossings_command(sub) -> None:
    e = sub.add_parser("eval-crossings", help="tracks of 2–3 crossing curves, every pairing of line styles, scored",
                       description="Pairings: " + ", ".join("+".join(map(str, p)) for p in PAIRINGS)
                       + " (1 solid, 2 dashed, 3 dotted).")
    src = e.add_mutually_exclusive_group()
    src.add_argument("--model", help="trace the model's evidence (default: the bundled model)")
    src.add_argument("--from-mask", action="store_true", help="trace the true masks (the tracer's ceiling)")
    src.add_argument("--classical", action="store_true", help="trace the classical tracer's ink evidence")
    e.add_argument("--style", default="uniform", help="print-style family of the logs (default uniform; colour: "
                   "curves told apart by their inks, scored with their colour and as grey scans)")
    e.add_argument("--count", type=int, default=6, help="logs per pairing (default 6)")
    e.add_argument("--width", type=int, default=1600)
    e.add_argument("--height", type=int, default=384)
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_eval_crossings)


def cmd_eval_crossings(args) -> int:
    from core.common.errors import UsageError
    from core.synth.styles import FAMILIES

    if args.style not in FAMILIES:
        raise UsageError(f"--style must be one of {', '.join(FAMILIES)}, not {args.style!r}")
    if args.count < 1:
        raise UsageError("--count must be at least 1")
    if args.width < 64 or args.height < 96:
        raise UsageError(f"--width/--height: a log needs at least 64 × 96 px, got {args.width} × {args.height}")
    model, label = None, "true masks"
    if not args.from_mask and not args.classical:
        from core.model.bundled import BUNDLED_MODEL
        from core.model.model_io import load_model

        path = args.model or BUNDLED_MODEL
        model, _ = load_model(path)
        label = f"model {getattr(path, 'name', path)}"
    if args.classical:
        model, label = None, "classical tracer"
    coloured = args.style == "colour"
    runs = (True, False) if coloured else (True,)  # a colour log is scored with its colour and as a grey scan
    rows, every = [], {run: [] for run in runs}
    for pairing in COLOUR_PAIRINGS if coloured else PAIRINGS:
        for use_colour in runs:
            t0 = time.perf_counter()
            s = evaluate_pairing(pairing, model, args.count, args.style, args.width, args.height,
                                 from_mask=args.from_mask, colour=use_colour)
            rows.append({**s.as_dict(), **({"colour": use_colour} if coloured else {})})
            every[use_colour] += [c["r"] for c in s.curves if np.isfinite(c["r"])]
            if not args.json:
                w = s.worst()
                sep = f"  separation {s.separation:.3f}" if s.separation is not None else ""
                how = ("  colour" if use_colour else "  grey  ") if coloured else ""
                print(f"{'+'.join(map(str, pairing)):<6}{how} median r {s.median_r:6.3f}  RMSE {s.median_rmse_pct:5.2f} %"
                      f"{sep}  worst {w['mnemonic']} on {w['log']} r {w['r']:.2f}  ({time.perf_counter() - t0:.0f} s)"
                      if w else f"{pairing}: no curve scored", flush=True)
    overall = {run: float(np.median(v)) if v else float("nan") for run, v in every.items()}
    if args.json:
        out = {"method": label, "style": args.style, "pairings": rows, "median_r": overall[True]}
        if coloured:
            out["median_r_grey"] = overall[False]
        print(json.dumps(out, indent=2))
    else:
        print(f"\n{label}, {args.style}: median r over all {len(every[True])} curves {overall[True]:.3f}"
              + (f" with colour, {overall[False]:.3f} as grey scans" if coloured else ""))
    return 0
