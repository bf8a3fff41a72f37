"""Curve shapes for synthetic logs: windows of real LAS curves and a random layered process.

Real curves give the generator the look of real logs (sharp bed boundaries,
spiky resistivity, smooth caliper); the random process adds variety and works
where no LAS library is present. Shapes are returned normalised to [0, 1].
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.common.runs import true_runs

LAS_DIR_ENV = "WELLTRACE_LAS_DIR"


@dataclass(frozen=True)
class ShapeSource:
    name: str  # "file.las:MNEM" or "random"
    values: np.ndarray  # normalised to [0, 1], NaN-free
    log: bool  # the curve is a resistivity-like quantity (log-normal)


BUNDLED = Path(__file__).resolve().parents[2] / "resources" / "shapes" / "curve_shapes.npz"


def default_las_dir() -> Path | None:
    """``WELLTRACE_LAS_DIR`` when set (a folder of LAS files to draw shapes from), else None: the bundled library."""
    env = os.environ.get(LAS_DIR_ENV)
    if env:
        return Path(env) if Path(env).is_dir() else None
    return None


def shape_library_name() -> str:
    """What the generator draws real shapes from, for manifests."""
    d = default_las_dir()
    return str(d) if d else f"bundled: {BUNDLED.name} (lasio's MIT-licensed example logs)"


def default_library() -> tuple["ShapeSource", ...]:
    """The shapes the generator draws by default: ``WELLTRACE_LAS_DIR``'s LAS files, else the bundled library
    (``resources/shapes``), so every checkout draws the same logs for a seed."""
    d = default_las_dir()
    return load_library(str(d)) if d else bundled_library()


@functools.lru_cache(maxsize=1)
def bundled_library() -> tuple["ShapeSource", ...]:
    """The real curve shapes that ship with WellTrace (``tools/build_shape_library.py``); () if absent."""
    try:
        with np.load(BUNDLED, allow_pickle=False) as z:
            names, logs = [str(n) for n in z["names"]], z["logs"].tolist()
            return tuple(ShapeSource(n, z[f"v{i}"].astype(np.float64), bool(lg))
                         for i, (n, lg) in enumerate(zip(names, logs)))
    except (OSError, KeyError, ValueError):
        return ()


# Curves that are not measurements of the rock: positions, survey, depth and time indexes.
# Their windows are near-constant or monotonic, not the shapes a logging tool draws.
_NOT_SHAPES = ("X_LOC", "Y_LOC", "Z_LOC", "TVD", "TVDSS", "DEPT", "DEPTH", "MD", "TIME", "ETIM", "DEVI", "AZIM",
               "HAZI", "INCL", "LAT", "LONG", "LON", "EAST", "NORTH", "EASTING", "NORTHING", "TENS", "SPEED")
LIBRARY_VERSION = 2  # bump when the parsing rules change: the disk cache is keyed by it
_LOG_MNEMONICS = ("RDEP", "RMED", "RSHA", "ILD", "ILM", "LLD", "LLS", "MSFL", "SFLU", "RT", "RXO", "DFAR", "DNEAR", "COND")


def _cache_file(las_dir: Path) -> Path:
    """A cache key from the LAS files' names, sizes and times: re-parsing an
    unreadable 2.7 MB file costs lasio seconds on every start otherwise."""
    import hashlib

    import platformdirs

    h = hashlib.sha256(f"v{LIBRARY_VERSION};".encode())
    for path in sorted(las_dir.glob("*")):
        st = path.stat()
        h.update(f"{path.name}:{st.st_size}:{st.st_mtime_ns};".encode())
    return Path(platformdirs.user_cache_dir("welltrace")) / f"shapes-{h.hexdigest()[:16]}.npz"


@functools.lru_cache(maxsize=4)
def load_library(las_dir: str | None) -> tuple[ShapeSource, ...]:
    """Every usable curve in the LAS files of ``las_dir`` (cached on disk); unreadable files are skipped."""
    if not las_dir:
        return ()
    cache = _cache_file(Path(las_dir))
    try:
        with np.load(cache, allow_pickle=False) as z:
            names = [str(n) for n in z["names"]]
            logs = z["logs"].tolist()
            return tuple(ShapeSource(n, z[f"v{i}"], bool(lg)) for i, (n, lg) in enumerate(zip(names, logs)))
    except (OSError, KeyError, ValueError):
        pass
    sources = _parse_library(Path(las_dir))
    try:
        from core.common.atomic import atomic_path

        cache.parent.mkdir(parents=True, exist_ok=True)
        arrays = {f"v{i}": s.values for i, s in enumerate(sources)}
        with atomic_path(cache) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, names=np.array([s.name for s in sources]), logs=np.array([s.log for s in sources]), **arrays)
    except OSError:
        pass  # a read-only cache folder only costs time
    return sources


def _parse_library(las_dir: Path) -> tuple[ShapeSource, ...]:
    from core.common.errors import LasError
    from core.io.las_io import read_las

    sources = []
    for path in sorted(las_dir.glob("*")):
        if path.suffix.lower() != ".las":
            continue
        try:
            data = read_las(path)
        except LasError:
            continue  # e.g. the Wellington file lasio cannot reshape
        for curve in data.curves:
            if curve.mnemonic.upper() in _NOT_SHAPES:
                continue
            v = np.asarray(curve.values, dtype=np.float64)
            ok = np.isfinite(v)
            if ok.sum() < 200:
                continue
            # keep the longest run of valid samples
            v = _longest_finite_run(v)
            if v.size < 200 or np.nanstd(v) == 0:
                continue
            is_log = curve.mnemonic.upper() in _LOG_MNEMONICS
            if is_log:
                v = np.log10(np.clip(v, 1e-3, None))
            lo, hi = np.percentile(v, [1, 99])
            if hi - lo <= 1e-9:
                continue
            norm = np.clip((v - lo) / (hi - lo), 0.0, 1.0)
            if np.unique(np.round(norm, 3)).size < 20:  # flags, lithology codes
                continue
            steps = np.diff(norm)
            if max((steps > 0).mean(), (steps < 0).mean()) > 0.95:  # a drift or an index, not beds
                continue
            sources.append(ShapeSource(f"{path.name}:{curve.mnemonic}", norm, is_log))
    return tuple(sources)


def _longest_finite_run(v: np.ndarray) -> np.ndarray:
    starts, ends = true_runs(np.isfinite(v))
    if starts.size == 0:
        return v[:0]
    i = int(np.argmax(ends - starts))
    return v[starts[i] : ends[i]]


def _smooth(x: np.ndarray, sigma: float) -> np.ndarray:
    if sigma <= 0:
        return x
    radius = int(3 * sigma) + 1
    k = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    k /= k.sum()
    return np.convolve(np.pad(x, radius, mode="reflect"), k, mode="valid")


def random_layered(n: int, rng: np.random.Generator) -> np.ndarray:
    """Beds of random thickness with sharp-ish boundaries, in-bed noise and a trend."""
    mean_bed = rng.uniform(8, 60)
    edges = np.cumsum(rng.exponential(mean_bed, size=int(n / mean_bed * 3) + 8)).astype(int)
    edges = edges[edges < n]
    levels = rng.beta(0.8, 0.8, size=edges.size + 1)
    beds = levels[np.searchsorted(edges, np.arange(n), side="right")]
    beds = _smooth(beds, rng.uniform(0.5, 3.0))
    noise = _smooth(rng.normal(0, 1, n), rng.uniform(1.0, 4.0))
    noise /= noise.std() + 1e-9
    trend = np.linspace(0, rng.normal(0, 0.3), n)
    x = beds + rng.uniform(0.02, 0.12) * noise + trend
    return _normalise(x)


def _normalise(x: np.ndarray) -> np.ndarray:
    lo, hi = np.percentile(x, [0.5, 99.5])
    if hi - lo < 1e-9:
        return np.full_like(x, 0.5)
    return np.clip((x - lo) / (hi - lo), 0.0, 1.0)


# A window spanning less of its source's (normalised) range than this is flat: stretched to
# the full track it would draw noise, or a constant line whose r against anything is undefined.
MIN_WINDOW_RANGE = 0.1
MAX_WINDOW_TRIES = 4


def draw_shape(
    n: int, rng: np.random.Generator, library: tuple[ShapeSource, ...], want_log: bool | None = None
) -> tuple[np.ndarray, str]:
    """A normalised shape of ``n`` samples and the name of where it came from."""
    pool = [s for s in library if want_log is None or s.log == want_log] or list(library)
    if pool and rng.random() < 0.7:
        src = pool[int(rng.integers(len(pool)))]
        for _ in range(MAX_WINDOW_TRIES):
            # resample a window: stretch factor between 0.5× and 2× of the source sampling
            factor = rng.uniform(0.5, 2.0)
            span = min(src.values.size - 1, max(16, int(n / factor)))
            start = int(rng.integers(0, src.values.size - span))
            window = src.values[start : start + span + 1]
            lo, hi = np.percentile(window, [0.5, 99.5])
            if hi - lo >= MIN_WINDOW_RANGE:
                break
        else:  # a source flat over most of its length (padded or clipped curves): draw beds instead
            return _normalise(_pen_smoothing(random_layered(n, rng), rng)), "random"
        if rng.random() < 0.5:
            window = window[::-1]
        x = np.interp(np.linspace(0, window.size - 1, n), np.arange(window.size), window)
        return _normalise(_pen_smoothing(x, rng)), src.name
    return _normalise(_pen_smoothing(random_layered(n, rng), rng)), "random"


def fast_shape(
    n: int, rng: np.random.Generator, library: tuple[ShapeSource, ...], want_log: bool | None = None
) -> tuple[np.ndarray, str]:
    """A fast, spiky log of ``n`` samples (normalised) and where its shape came from: a real curve's window
    compressed 1-3 times (or beds 3-15 samples thick), never smoothed by the pen, with spikes 1-4 samples wide
    every 30-120 samples (thin beds, a sonic's cycle skips, a resistivity's streaks) up and down. The value
    between two dashes of a broken pen is then often not on the line that bridges them."""
    pool = [s for s in library if want_log is None or s.log == want_log] or list(library)
    name = "random"
    if pool and rng.random() < 0.7:
        src = pool[int(rng.integers(len(pool)))]
        span = min(src.values.size - 1, max(16, int(n / rng.uniform(1 / 3, 1.0))))
        start = int(rng.integers(0, max(1, src.values.size - span)))
        window = src.values[start : start + span + 1]
        x = np.interp(np.linspace(0, window.size - 1, n), np.arange(window.size), window)
        name = src.name
    else:
        edges = np.cumsum(rng.exponential(rng.uniform(3, 15), size=n + 8)).astype(int)
        edges = edges[edges < n]
        x = rng.beta(0.8, 0.8, size=edges.size + 1)[np.searchsorted(edges, np.arange(n), side="right")]
    x = _normalise(x)
    k = int(rng.poisson(n / rng.uniform(30, 120)))
    at, wide = rng.integers(0, n, k), rng.integers(1, 5, k)
    lift = rng.uniform(0.15, 0.7, k) * rng.choice([-1.0, 1.0], k)
    for a, w, h in zip(at, wide, lift):
        x[a : a + w] += h
    return _normalise(x), f"{name}+spikes"


def _pen_smoothing(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Tool response and pen inertia: most paper logs are smooth at the sample scale."""
    return _smooth(x, rng.choice([0.0, 0.7, 1.2, 2.0]))
