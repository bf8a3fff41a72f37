"""Accuracy per print-style family, and leave-one-family-out: the honest held-out figure.

A model graded on logs drawn in the styles it trained on says little about a
print it has never seen. ``evaluate_family`` digitises fresh logs of one
family (seeds no training stream draws: a separate seed sequence) and
compares the traces with the truth; ``leave_one_out`` trains one model per
family on the stream of every *other* family and evaluates it on the one
left out, beside the in-distribution figure of the same model on the
families it trained on.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from core.digitize.job.pipeline import digitize
from core.digitize.output.metrics import CurveScores, compare_curve, excursions
from core.synth import generate_log
from core.synth.styles import FAMILIES, GREY_FAMILIES

EVAL_SEED = 424242  # never a training stream's seed: a training stream draws with its own tags (data.py)


@dataclass
class FamilyScore(CurveScores):
    family: str
    method: str
    # per curve: log, mnemonic, log_scale, line style, r, rmse_pct, null, excursions, samples
    curves: list[dict] = field(default_factory=list)
    seconds: float = 0.0

    def worst(self, n: int = 3) -> list[dict]:
        return sorted(self.curves, key=lambda c: c["r"] if np.isfinite(c["r"]) else -2.0)[:n]

    @property
    def excursions_per_1000(self) -> float:
        """Out-and-back departures (``metrics.excursions``) per 1,000 depth samples, over every curve."""
        n = sum(c["samples"] for c in self.curves)
        return 1000.0 * sum(c["excursions"] for c in self.curves) / n if n else float("nan")

    def subset(self, name: str, keep: Callable[[dict], bool]) -> "FamilyScore":
        """The same scores over the curves ``keep`` selects (the log-scale curves, the dotted ones)."""
        return FamilyScore(name, self.method, [c for c in self.curves if keep(c)], self.seconds)

    def _share(self, key: str) -> float:
        n = sum(c["samples"] for c in self.curves)
        return 100.0 * sum(c.get(key, 0) for c in self.curves) / n if n else float("nan")

    @property
    def wrong_pct(self) -> float:
        """Confidently wrong samples (``score_curve``'s ``wrong``) in % of every curve's samples."""
        return self._share("wrong")

    @property
    def low_pct(self) -> float:
        """Samples written but flagged low-confidence, in %."""
        return self._share("low")

    @property
    def yield_pct(self) -> float:
        """Samples written confident and right, in % of every curve's samples: what a petrophysicist can use as it
        stands."""
        return self._share("confident_right")

    @property
    def reliability(self) -> np.ndarray:
        """(tenths of confidence, 3): per tenth the written samples, those of them right and their summed
        confidence, over every curve (:func:`score_curve`'s ``bins``)."""
        out = np.zeros((CONFIDENCE_BINS, 3))
        for c in self.curves:
            if "bins" in c:
                out += np.asarray(c["bins"], np.float64)
        return out

    def at(self, threshold: float) -> tuple[float, float]:
        """(confidently wrong, yield) in % of every curve's samples, were values flagged below ``threshold`` (a tenth:
        the reliability bins' edges) instead of ``LOW_CONFIDENCE``: what another line between sure and unsure
        would give."""
        k = int(round(threshold * CONFIDENCE_BINS))
        if not np.isclose(k, threshold * CONFIDENCE_BINS):
            raise ValueError(f"a threshold on the reliability bins is a tenth, not {threshold}")
        rel = self.reliability[k:]
        n = sum(c["samples"] for c in self.curves)
        if not n:
            return float("nan"), float("nan")
        return 100.0 * (rel[:, 0].sum() - rel[:, 1].sum()) / n, 100.0 * rel[:, 1].sum() / n

    @property
    def calibration_error(self) -> float:
        """The expected calibration error: per tenth of confidence, the share of its written samples that are right
        against their mean confidence, weighted by the tenth's samples (:func:`expected_calibration_error`)."""
        return expected_calibration_error(self.reliability)

    def as_dict(self) -> dict:
        return {"family": self.family, "method": self.method, "median_r": self.median_r,
                "median_rmse_pct": self.median_rmse_pct, "mean_null_pct": self.mean_null_pct,
                "wrong_pct": self.wrong_pct, "wrong_any_pct": self._share("wrong_any"), "low_pct": self.low_pct,
                "yield_pct": self.yield_pct, "calibration_error": self.calibration_error,
                "reliability": self.reliability.tolist(),
                "excursions_per_1000": self.excursions_per_1000, "curves": len(self.curves), "worst": self.worst(),
                "seconds": round(self.seconds, 1)}


# a family's seed index: the grey families sorted (as before the colour family), the others after them, so adding
# a family never changes another's logs
FAMILY_SEED_ORDER = sorted(GREY_FAMILIES) + [f for f in FAMILIES if f not in GREY_FAMILIES]


def family_logs(family: str, count: int, width: int, height: int, seed: int = EVAL_SEED,
                las_dir: str | None = None):
    """``count`` fresh logs of one family, alternating tall and wide, deterministic for ``seed``. ``las_dir``:
    draw the curve shapes from these LAS files (wells the shape library never held) instead of the bundled ones."""
    for i in range(count):
        log_seed = int(np.random.SeedSequence([seed, FAMILY_SEED_ORDER.index(family), i]).generate_state(1)[0])
        yield generate_log(log_seed, width, height, ("y", "x")[i % 2], style=family, name=f"{family}_{i:02d}",
                           las_dir=las_dir if las_dir else "default")


WRONG_SHARE = 0.05  # a value this far from the truth, in track fractions (5 % of the printed range or decades)
CONFIDENCE_BINS = 10  # the reliability diagram's bins: tenths of confidence


def confidence_bins(confidence: np.ndarray, right: np.ndarray) -> np.ndarray:
    """(tenths, 3): per tenth of ``confidence`` (the last holds 1.0) the samples, those ``right`` and their summed
    confidence."""
    k = np.clip((np.asarray(confidence, np.float64) * CONFIDENCE_BINS).astype(np.int64), 0, CONFIDENCE_BINS - 1)
    out = np.zeros((CONFIDENCE_BINS, 3))
    np.add.at(out[:, 0], k, 1.0)
    np.add.at(out[:, 1], k, right.astype(np.float64))
    np.add.at(out[:, 2], k, confidence)
    return out


def expected_calibration_error(bins: np.ndarray) -> float:
    """Σ over tenths of (samples / all) · |share right − mean confidence|: 0 for a confidence that means what it
    says. The mean confidence of the tenth, not its middle: a calibrated 0.99 is right 99 times in 100, and
    against a middle of 0.95 would count 0.04 off. NaN without samples."""
    n = bins[:, 0]
    if n.sum() == 0:
        return float("nan")
    seen = n > 0
    gap = np.abs(bins[seen, 1] - bins[seen, 2]) / n[seen]
    return float(np.sum(n[seen] * gap) / n.sum())


def score_curve(spec, depth: np.ndarray, pred: np.ndarray, truth: np.ndarray,
                confidence: np.ndarray | None = None) -> dict:
    """One curve's figures, taken in track fractions: identical to the values' for a linear scale (r, and RMSE
    in % of the scale range), and for a logarithmic one in decades as printed (a resistivity's r in ohm-m
    would be decided by its few highest readings, its RMSE by nothing but them).

    ``wrong``: the samples written with a value more than :data:`WRONG_SHARE` of the printed scale from the
    truth and *not* flagged low-confidence (``confidence`` below ``LOW_CONFIDENCE``): the confidently wrong
    numbers a petrophysicist cannot tell from good ones. ``low``: the samples written but flagged.
    ``confident_right``: written, not flagged and right (the yield's samples); ``bins``: the written samples'
    reliability (:func:`confidence_bins`), where a confidence is given."""
    from core.digitize.rules.confidence import LOW_CONFIDENCE

    pf, tf = spec.unwrapped_fraction(pred), spec.unwrapped_fraction(truth)
    m = compare_curve(spec.mnemonic, depth, pf, tf, 1.0)
    known = np.isfinite(tf)
    written = known & np.isfinite(pf)
    with np.errstate(invalid="ignore"):
        flagged = written & (confidence < LOW_CONFIDENCE) if confidence is not None else np.zeros_like(written)
        off = written & (np.abs(pf - tf) > WRONG_SHARE)
    out = {"mnemonic": spec.mnemonic, "log_scale": bool(spec.log), "style": int(spec.klass), "r": float(m.r),
           "rmse_pct": float(m.rmse_pct), "null": float(m.null_fraction), "excursions": excursions(pf, tf),
           "samples": int(known.sum()), "wrong": int((off & ~flagged).sum()), "wrong_any": int(off.sum()),
           "low": int(flagged.sum()), "confident_right": int((written & ~off & ~flagged).sum())}
    if confidence is not None:
        out["bins"] = confidence_bins(np.nan_to_num(confidence[written]), ~off[written]).tolist()
    return out


def score_result(lg, res) -> list[dict]:
    """Every curve of a digitised log scored against its truth (``lg``: depth, truth and calibration)."""
    out = []
    for spec in lg.calibration.curves:
        pred = np.interp(lg.depth, res.depth, res.values[spec.mnemonic], left=np.nan, right=np.nan)
        conf = res.confidence.get(spec.mnemonic)
        conf = None if conf is None else np.interp(lg.depth, res.depth, conf, left=np.nan, right=np.nan)
        out.append({"log": lg.name, **score_curve(spec, lg.depth, pred, lg.truth[spec.mnemonic], conf)})
    return out


def family_set_name(family: str, width: int, height: int, seed: int, las_dir: str | None) -> str:
    """The name a family's draw is kept under in an evidence cache: every argument that changes its pictures."""
    return f"{family}-{width}x{height}-s{seed}" + (f"-las-{Path(las_dir).name}" if las_dir else "")


def _digitize(lg, model, grid: bool, params, cache, set_name: str, device="cpu"):
    """One case digitised, from the evidence cache's maps where there is one (``evidence_cache.py``); ``device``: the
    one ``model`` is on, where its maps are read."""
    kwargs = dict(model=model, grid=grid, source=lg.name, rgb=lg.rgb, params=params, device=device)
    if cache is not None and model is not None:
        return cache.digitize(set_name, lg.name, lg.image, lg.calibration, **kwargs)
    return digitize(lg.image, lg.calibration, **kwargs)


def evaluate_family(model, family: str, count: int = 8, width: int = 1600, height: int = 480,
                    seed: int = EVAL_SEED, grid: bool = True, las_dir: str | None = None,
                    overlays: Path | None = None, params=None, cache=None) -> FamilyScore:
    """Digitise ``count`` fresh logs of ``family`` with ``model`` (None: the classical tracer). ``overlays``: a
    folder to draw the logs of the family's worst curves in (``worst_logs``; ``overlay.py``). ``params``: the
    tracer's (``TraceParams``; its ``passes_off`` measure a rule's worth); ``cache``: an ``EvidenceCache`` whose
    maps are traced again instead of read."""
    t0 = time.perf_counter()
    score = FamilyScore(family, "model" if model is not None else "classical")
    kept = {}
    set_name = family_set_name(family, width, height, seed, las_dir)
    for lg in family_logs(family, count, width, height, seed, las_dir):
        res = _digitize(lg, model, grid, params, cache, set_name)
        score.curves += score_result(lg, res)
        if overlays is not None:
            kept[lg.name] = (lg, res)
    score.seconds = time.perf_counter() - t0
    if overlays is not None:
        _write_worst(score, kept, Path(overlays), family)
    return score


def _write_worst(score: "FamilyScore", kept: dict, folder: Path, prefix: str) -> None:
    from .overlay import write_overlay

    for what, name in worst_logs(score).items():
        lg, res = kept[name]
        write_overlay(folder / f"{prefix}_worst_{what}.png", lg, res, [c for c in score.curves if c["log"] == name])


@dataclass
class CaseLog:
    """A picture scored against the LAS it was drawn from: what a synthetic log gives the scoring."""

    name: str
    image: np.ndarray
    rgb: np.ndarray | None
    calibration: object
    depth: np.ndarray
    truth: dict


def folder_cases(folder: str | Path) -> Iterator[CaseLog]:
    """The cases of a folder: each ``NAME.png`` (or another scan) with ``NAME.calib.json`` and
    ``NAME.truth.las`` beside it, in name order; a picture without both is not a case."""
    from core.io.calibration import Calibration
    from core.io.file_names import calib_path_for
    from core.io.las_io import read_las
    from core.io.scan import is_scan_file, load_scan

    for scan in sorted(p for p in Path(folder).iterdir() if p.is_file() and is_scan_file(p)):
        stem = scan.name[: -len(scan.suffix)]
        calib, truth = calib_path_for(scan), scan.with_name(f"{stem}.truth.las")
        if stem.endswith(".mask") or not calib.is_file() or not truth.is_file():
            continue
        las = read_las(truth)
        cal = Calibration.load(calib)
        pic = load_scan(scan)
        yield CaseLog(stem, pic.image, pic.rgb, cal, las.depth,
                      {c.mnemonic: las.curve(c.mnemonic).values for c in cal.curves if c.mnemonic in las.mnemonics})


def evaluate_folder(model, folder: str | Path, grid: bool = True, overlays: Path | None = None, params=None,
                    cache=None) -> "FamilyScore":
    """Digitise every case of a folder (``folder_cases``: pictures drawn by a renderer that is not ours, with
    the LAS each was drawn from) and score it as a family is scored (``params``, ``cache``: as
    :func:`evaluate_family`'s)."""
    t0 = time.perf_counter()
    score = FamilyScore(Path(folder).name, "model" if model is not None else "classical")
    kept = {}
    set_name = "folder-" + hashlib.sha256(str(Path(folder).resolve()).encode()).hexdigest()[:12]
    for lg in folder_cases(folder):
        res = _digitize(lg, model, grid, params, cache, set_name)
        score.curves += [c for c in score_result(lg, res) if c["samples"]]
        if overlays is not None:
            kept[lg.name] = (lg, res)
    score.seconds = time.perf_counter() - t0
    if not score.curves:
        from core.common.errors import InputError

        raise InputError(str(folder), "no case: a case is NAME.png with NAME.calib.json and NAME.truth.las beside it")
    if overlays is not None:
        _write_worst(score, kept, Path(overlays), score.family)
    return score


def worst_logs(score: FamilyScore) -> dict[str, str]:
    """The logs holding the family's worst curve overall, its worst log-scale curve and its worst dotted curve
    (by r), each named once: {"curve" | "log_scale" | "dotted": log name}."""
    out: dict[str, str] = {}
    for what, keep in (("curve", lambda c: True), ("log_scale", lambda c: c["log_scale"]),
                       ("dotted", lambda c: c["style"] == 3)):
        worst = score.subset(what, keep).worst(1)
        if worst and worst[0]["log"] not in out.values():
            out[what] = worst[0]["log"]
    return out


@dataclass
class HeldOutRow:
    family: str  # the family left out of training
    held_out: FamilyScore  # the model on the family it never saw
    in_distribution: FamilyScore  # the same model on the families it trained on (pooled)
    model_path: str | None = None


def leave_one_out(train_fn: Callable[[tuple[str, ...], Path], Path], families: tuple[str, ...], out: Path,
                  count: int, width: int, height: int, seed: int = EVAL_SEED) -> Iterator[HeldOutRow]:
    """For each family: ``train_fn(other_families, model_path)`` trains a model, which is then scored on
    the family left out and, for comparison, on the families it trained on (``count`` logs each,
    split evenly among them)."""
    from core.model.model_io import load_model

    for fam in families:
        rest = tuple(f for f in families if f != fam)
        path = train_fn(rest, out / f"without_{fam}.safetensors")
        model, _ = load_model(path)
        held = evaluate_family(model, fam, count, width, height, seed)
        pooled = FamilyScore("+".join(rest), "model")
        per = max(1, count // max(1, len(rest)))
        for other in rest:
            s = evaluate_family(model, other, per, width, height, seed)
            pooled.curves += s.curves
            pooled.seconds += s.seconds
        yield HeldOutRow(fam, held, pooled, str(path))
