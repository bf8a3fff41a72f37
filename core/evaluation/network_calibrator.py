"""A calibrator for a model trained or adapted here (``welltrace fit-confidence``; the app's Run › Fit confidence…).

``CONF`` is a measured probability only for the network its calibrator was fitted on: the bundled network ships with
its own (``resources/models/confidence.json``). For another, :func:`fit_network_calibrator` reads the fit's logs
(``confidence_fit.FIT_FAMILIES`` at ``FIT_SEED``) with it, fits the calibrator the same way
(``confidence_fit.fit``) and keeps it beside the model file, where its reads find it while it names the file's
digest (``core/digitize/rules/confidence_model.py: calibrator_beside``). ``welltrace train`` and ``adapt`` fit it
for the model they write, and the app offers it with the new model (``core/cli/commands/fit_confidence.py:
fit_after_run``; ``app/window/model_offer.py``).

The network's maps of the fit's logs are kept while the fit runs, in the user's cache folder unless a folder is named
(:func:`user_fit_cache`), under the model file's digest (``evidence_cache.EvidenceCache``: another model never reads
them): a fit cancelled or cut at log 90 of 100 resumes there, re-tracing the 89 kept (a fraction of a second each)
instead of reading them with the network again (seconds each). They are removed when the fit completes and at most
:data:`FIT_CACHE_KEEP` models' unfinished fits are kept: about 5 MB a log, half a gigabyte a model.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from core.common.errors import InputError
from core.common.events import FitLogEvent
from core.evaluation.confidence_fit import (
    FIT_COUNT,
    FIT_FAMILIES,
    FIT_SEED,
    FIT_SIZE,
    Samples,
    family_sets,
    fit,
    fit_about,
    log_samples,
)

# what to install where scikit-learn is missing: the optional ``fit`` extra (pyproject.toml)
FIT_EXTRA = "pip install 'welltrace[fit]' (or: pip install 'scikit-learn>=1.4,<2')"

# models whose unfinished fits keep their maps in the user's cache: the one being fitted and the last one before it
# (a fit of a new model cancelled while an older one's was too). A fit reads 100 logs of 1600 x 480 px, kept at about
# 5 MB each (two bytes a pixel per class map): 514 MB a model measured, so two models' worth, not one per model trained
FIT_CACHE_KEEP = 2
# measured 2026-11-29 on two CPU cores shared with other work (a network of the bundled one's size, the 100 logs of
# 1600 x 480 px): read by the network and traced 287 s (2.9 s a log; 1.3-1.6 s on the cores alone), re-traced from
# the kept maps 41 s (0.4 s a log), the regression 6-7 s, and the first read of a process up to ~30 s more (PyTorch's
# warm-up, the inference memory fit): 301 s in all against 53 s resumed (docs/accuracy.md, #60: "Eighteenth round,
# helper C"). The network's share scales with the cores; the estimate is a busy machine's, so rounds up
READ_S, RETRACE_S, START_S = 3.0, 0.4, 30.0
_CACHE_FOLDER = re.compile(r"[0-9a-f]{16}-[A-Za-z0-9_]+")  # EvidenceCache's folder of one model: never anything else


def scikit_learn_missing() -> str | None:
    """Why a calibrator cannot be fitted here (scikit-learn, the ``fit`` extra, is not installed), or None; without
    importing it (train and adapt ask before their run: seconds at their end, not at their start)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("sklearn") is not None
    except (ImportError, ValueError):
        found = False
    return None if found else f"fitting a calibrator needs scikit-learn, which is not installed: {FIT_EXTRA}"


def require_scikit_learn() -> None:
    """Refuse, before any work, where scikit-learn (the ``fit`` extra) is not installed: digitising reads a fitted
    calibrator with numpy alone, but fitting one needs it."""
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise InputError(None, f"fitting a calibrator needs scikit-learn, which is not installed: {FIT_EXTRA}; "
                         "nothing was written") from None


def fit_output(model_path: str | Path, out: str | Path | None = None) -> Path:
    """Where a model's calibrator is written: ``out``, else beside the model file (``confidence_model.sidecar_path``,
    where reads by it find it). Never the model file itself; the bundled model's calibrator is the shipped
    ``resources/models/confidence.json``, written only where ``out`` names it (maintainers: tools/fit_confidence.py).
    The folder must take a file: checked before the logs are read, not after."""
    import os

    from core.digitize.rules.confidence_model import sidecar_path
    from core.model.bundled import BUNDLED_MODEL

    model = Path(model_path)
    if out is None and model.resolve() == BUNDLED_MODEL.resolve():
        raise InputError(model, "the bundled model's calibrator is the shipped resources/models/confidence.json "
                         "(maintainers refit it with tools/fit_confidence.py); to fit one for it elsewhere, name "
                         "the file with --out")
    path = Path(out) if out is not None else sidecar_path(model)
    if path.resolve() == model.resolve():
        raise InputError(path, "is the model file itself: a calibrator never overwrites its model")
    if path.suffix.lower() != ".json":
        raise InputError(path, "a calibrator is a JSON file: name it *.json")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir() or not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InputError(path, "cannot be written (no such folder, or no permission)")
    return path


def user_fit_cache() -> Path:
    """Where a fit keeps its maps unless told a folder: ``confidence-fit`` in ``$WELLTRACE_CACHE`` or the user's
    cache folder (platformdirs), as the app's other caches (``core/model/footprint.py``, ``core/engine/compiled.py``)."""
    from platformdirs import user_cache_dir

    return Path(os.environ.get("WELLTRACE_CACHE") or user_cache_dir("welltrace")) / "confidence-fit"


class _UserCache:
    """The user's maps cache of one model's fit: opened (and the folders of older models' fits beyond
    :data:`FIT_CACHE_KEEP` removed) before the fit, removed when it completes; a save that fails (a full disk) costs
    the resume, never the fit."""

    def __init__(self, model_path: str | Path, root: Path | None = None):
        from core.evaluation.evidence_cache import EvidenceCache

        self.root = root or user_fit_cache()
        cache = EvidenceCache(self.root, model_path, best_effort=True)
        cache.root.mkdir(parents=True, exist_ok=True)
        os.utime(cache.root)  # the most recently used: pruning keeps it
        self.cache = cache
        prune_fit_cache(self.root, FIT_CACHE_KEEP, keep_folder=cache.root)

    def completed(self) -> None:
        shutil.rmtree(self.cache.root, ignore_errors=True)


def prune_fit_cache(root: Path, keep: int = FIT_CACHE_KEEP, keep_folder: Path | None = None) -> list[Path]:
    """Remove the maps of all but the ``keep`` most recently used models' fits under ``root`` (``keep_folder``, the
    fit starting, counts as one and stays); only folders named as ``EvidenceCache`` names them. Returns those
    removed."""
    try:
        folders = [p for p in root.iterdir() if p.is_dir() and _CACHE_FOLDER.fullmatch(p.name) and p != keep_folder]
    except OSError:
        return []
    folders.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    gone = folders[max(0, keep - (keep_folder is not None)):]
    for p in gone:
        shutil.rmtree(p, ignore_errors=True)
    return gone


def fit_estimate_s(model_path: str | Path, count: int = FIT_COUNT, families=FIT_FAMILIES, size=FIT_SIZE,
                   cache_folder: str | Path | None = None) -> tuple[float, int]:
    """About how long the fit of ``model_path``'s calibrator takes here, in seconds, and how many of its logs' maps are
    kept already (in ``cache_folder``, else the user's cache: :func:`user_fit_cache`): those are re-traced. Measured
    constants (:data:`READ_S`), the network's share scaled by the cores."""
    from core.evaluation.evidence_cache import EvidenceCache
    from core.evaluation.styles import family_set_name

    cache = EvidenceCache(cache_folder if cache_folder is not None else user_fit_cache(), model_path)
    w, h = size
    kept = sum(cache.path(family_set_name(f, w, h, FIT_SEED, None), f"{f}_{i:02d}").is_file()
               for f in families for i in range(count))  # the logs' names: ``styles.family_logs``
    network_s = (READ_S - RETRACE_S) * 2 / max(2, os.cpu_count() or 2)
    total = len(families) * count
    return START_S + kept * RETRACE_S + (total - kept) * (RETRACE_S + network_s), kept


def fit_time_words(seconds: float | None, on_gpu: bool) -> str:
    """How long a fit takes, as ``train``, ``adapt`` and the app say it: :func:`about_minutes` of the CPU's estimate
    (measured, :data:`READ_S`), or "on the GPU" where the fit reads there (a GPU's time was never measured, so none
    is said)."""
    return "on the GPU" if on_gpu else about_minutes(seconds)


def about_minutes(seconds: float | None) -> str:
    """A duration as the fit's estimate is said (``train``, ``adapt``, the app's offer): "about 6 minutes", rounded
    up to a whole minute."""
    import math

    m = max(1, math.ceil((seconds or 0.0) / 60))
    return f"about {m} minute{'s' if m > 1 else ''}"


@dataclass
class CalibratorFit:
    """What :func:`fit_network_calibrator` did: the calibrator written and what it was fitted on."""

    out: str
    network: str
    digest: str
    beside: bool  # written beside the model (reads by it use it), not elsewhere (--out)
    samples: int
    right: float  # the share of the samples right
    logs: int
    cached_logs: int  # of which the maps came from the cache
    read_s: float  # reading (or re-tracing) the logs
    fit_s: float  # the regression and the isotonic map
    cache: str | None = None  # where the maps were kept (None: nowhere; the user's cache: removed once fitted)


def fit_network_calibrator(model_path: str | Path, out: str | Path | None = None,
                           cache_folder: str | Path | None = None, count: int = FIT_COUNT, families=FIT_FAMILIES,
                           size=FIT_SIZE, user_cache: bool = True, device: str = "cpu"
                           ) -> Iterator[FitLogEvent | CalibratorFit]:
    """Fit the calibrated confidence for the network of ``model_path`` (``welltrace fit-confidence``, ``train``,
    ``adapt``; the app): ``count`` logs of each of ``families`` at :data:`FIT_SEED` read with it, the calibrator fitted
    on their written samples (:func:`fit`) and written to :func:`fit_output` (beside the model: reads by it then use
    it, ``confidence_model.calibrator_beside``). The maps are kept in ``cache_folder`` (and left there), else where
    ``user_cache`` in the user's cache folder until the fit completes (module docstring); kept maps are traced again.
    ``device`` (auto, cpu, cuda): where the network reads the logs (a GPU's minutes are a CPU's seconds; the maps are
    the ones the model's reads on that device see). Yields a :class:`~core.common.events.FitLogEvent` per log read,
    then a :class:`CalibratorFit`. Refuses before any work where scikit-learn is missing (:func:`require_scikit_learn`),
    the device is not there or the file cannot be written; writes nothing until the fit is done (stopping the
    iteration early writes nothing)."""
    from core.digitize.rules.confidence_model import sidecar_path
    from core.digitize.trace.params import TraceParams
    from core.engine.config import pick_device
    from core.evaluation.evidence_cache import EvidenceCache
    from core.model.model_io import load_model

    require_scikit_learn()
    if count < 1:
        raise InputError(None, f"the fit reads at least one log a family, not {count}")
    where = pick_device(device)  # a device not there is refused before the model is read
    model, _ = load_model(model_path)  # a file that is no model is named first
    model.to(where)
    path = fit_output(model_path, out)
    own = None
    if cache_folder:
        cache = EvidenceCache(cache_folder, model_path)
    elif user_cache:
        try:
            own = _UserCache(model_path)
        except OSError:  # no cache folder can be made: every log read by the network, as without one
            own = None
        cache = own.cache if own is not None else None
    else:
        cache = None
    sets = family_sets(families, count, FIT_SEED, size)
    total, done, cached_logs, read_s, parts = len(families) * count, 0, 0, 0.0, []
    for group, lg, s, cached, dt in log_samples(model, sets, TraceParams(calibrated=False), cache, str(where)):
        done, cached_logs, read_s = done + 1, cached_logs + int(cached), read_s + dt
        if s.right.size:
            parts.append(s)
        yield FitLogEvent(done, total, group, lg.name, cached, dt)
    if not parts:
        raise InputError(model_path, "the network wrote no value on the fit's logs: nothing to fit a calibrator on")
    samples = Samples.join(parts)
    t0 = time.perf_counter()
    m = fit(samples, fit_about(model_path, count, families, size, model.file_digest))
    fit_s = time.perf_counter() - t0
    m.save(path)
    if own is not None:
        own.completed()  # the calibrator holds what they were kept for
    yield CalibratorFit(str(path), Path(model_path).name, model.file_digest,
                        path.resolve() == sidecar_path(model_path).resolve(), int(samples.right.size),
                        float(samples.right.mean()), done, cached_logs, read_s, fit_s,
                        None if cache is None else str(cache.root))
