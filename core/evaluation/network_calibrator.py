"""A calibrator for a model trained or adapted here (``welltrace fit-confidence``; the app's Run › Fit confidence…).

``CONF`` is a measured probability only for the network its calibrator was fitted on: the bundled network ships with
its own (``resources/models/confidence.json``). For another, :func:`fit_network_calibrator` reads the fit's logs
(``confidence_fit.FIT_FAMILIES`` at ``FIT_SEED``) with it, fits the calibrator the same way
(``confidence_fit.fit``) and keeps it beside the model file, where its reads find it while it names the file's
digest (``core/digitize/rules/confidence_model.py: calibrator_beside``).
"""

from __future__ import annotations

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


def fit_network_calibrator(model_path: str | Path, out: str | Path | None = None,
                           cache_folder: str | Path | None = None, count: int = FIT_COUNT, families=FIT_FAMILIES,
                           size=FIT_SIZE) -> Iterator[FitLogEvent | CalibratorFit]:
    """Fit the calibrated confidence for the network of ``model_path`` (``welltrace fit-confidence``; the app's Run ›
    Fit confidence…): ``count`` logs of each of ``families`` at :data:`FIT_SEED` read with it (``cache_folder``: its
    maps kept there, traced again where they are), the calibrator fitted on their written samples (:func:`fit`) and
    written to :func:`fit_output` (beside the model: reads by it then use it, ``confidence_model.calibrator_beside``).
    Yields a :class:`~core.common.events.FitLogEvent` per log read, then a :class:`CalibratorFit`. Refuses before any
    work where scikit-learn is missing (:func:`require_scikit_learn`) or the file cannot be written; writes nothing
    until the fit is done (stopping the iteration early writes nothing)."""
    from core.digitize.rules.confidence_model import sidecar_path
    from core.digitize.trace.params import TraceParams
    from core.evaluation.evidence_cache import EvidenceCache
    from core.model.model_io import load_model

    require_scikit_learn()
    if count < 1:
        raise InputError(None, f"the fit reads at least one log a family, not {count}")
    model, _ = load_model(model_path)  # a file that is no model is named first
    path = fit_output(model_path, out)
    cache = EvidenceCache(cache_folder, model_path) if cache_folder else None
    sets = family_sets(families, count, FIT_SEED, size)
    total, done, cached_logs, read_s, parts = len(families) * count, 0, 0, 0.0, []
    for group, lg, s, cached, dt in log_samples(model, sets, TraceParams(calibrated=False), cache):
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
    yield CalibratorFit(str(path), Path(model_path).name, model.file_digest,
                        path.resolve() == sidecar_path(model_path).resolve(), int(samples.right.size),
                        float(samples.right.mean()), done, cached_logs, read_s, fit_s)
