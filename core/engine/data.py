"""Training data: labelled scans from a project or synthetic folder, and an on-the-fly synthetic stream.

Everything is handed to the network in the canonical wide frame (depth along
the width). Images are never resized along depth; random crops along depth
and mask-preserving augmentations are optional. The multiclass stage pads a
batch of different sizes to a common size with a validity mask so padded
pixels count in neither the loss nor the metrics.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from core.common.errors import DataError, InputError
from core.digitize.page.frame import to_canonical
from core.io.calibration import Calibration
from core.io.file_names import calib_path_for, mask_path_for
from core.io.scan import is_scan_file, load_mask, load_scan
from core.model.network import image_to_input

MIN_ACROSS = 32  # px across the tracks
MIN_ALONG = 32  # px along depth


@dataclass
class LabelledLog:
    name: str
    image: np.ndarray  # canonical: (amplitude, depth) uint8, 0 ink
    mask: np.ndarray  # canonical classes 0..3
    calibration: Calibration | None = None
    truth_path: Path | None = None
    source: Path | None = None
    truth: tuple[np.ndarray, dict[str, np.ndarray]] | None = None  # in-memory (depth, curves), e.g. synthetic

    def truth_curves(self) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
        """The truth depth grid and curves, from memory or the truth LAS beside the scan."""
        if self.truth is None and self.truth_path is not None:
            from core.io.las_io import read_las

            las = read_las(self.truth_path)
            self.truth = (las.depth, {c.mnemonic.upper(): c.values for c in las.curves})
        return self.truth


def load_labelled(scan_path: Path) -> LabelledLog:
    scan = load_scan(scan_path)
    mpath = mask_path_for(scan_path)
    mask = load_mask(mpath, scan.image.shape)
    cpath = calib_path_for(scan_path)
    calib = Calibration.load(cpath) if cpath.exists() else None
    axis = calib.depth_axis if calib else scan.info.depth_axis
    img, m = to_canonical(scan.image, axis), to_canonical(mask, axis)
    if img.shape[0] < MIN_ACROSS or img.shape[1] < MIN_ALONG:
        raise DataError(scan_path, f"image is {scan.image.shape[1]} × {scan.image.shape[0]} px; the network needs at "
                        f"least {MIN_ALONG} px along depth and {MIN_ACROSS} across")
    truth = scan_path.with_name(scan_path.stem + ".truth.las")
    return LabelledLog(scan_path.stem, img, m, calib, truth if truth.exists() else None, scan_path)


def load_folder(folder: str | Path) -> tuple[list[LabelledLog], list[LabelledLog]]:
    """(train, validation) logs of a project or synthetic folder.

    The split comes from ``project.json`` when it has one; otherwise the last
    fifth of the logs (at least one, when there are two or more) validates.
    """
    root = Path(folder)
    scans = labelled_scan_paths(root)
    if not scans:
        raise DataError(root, "no labelled images (a scan NAME.png needs its mask NAME.mask.png beside it)")
    logs = [load_labelled(p) for p in scans]
    split = _project_split(root)
    if split:
        val_names = set(split)
        val = [lg for lg in logs if lg.name in val_names]
        train = [lg for lg in logs if lg.name not in val_names]
    else:
        n_val = max(1, len(logs) // 5) if len(logs) >= 2 else 0
        train, val = logs[: len(logs) - n_val], logs[len(logs) - n_val :]
    if not train:
        raise DataError(root, "every labelled image is in the validation split; nothing to train on")
    return train, val


def labelled_scan_paths(root: Path) -> list[Path]:
    """The scans of a folder that have a mask beside them (NAME.png with NAME.mask.png), sorted."""
    if not root.exists():
        raise DataError(root, "no such folder")
    if not root.is_dir():
        raise DataError(root, "is not a folder of scans")
    return sorted(p for p in root.iterdir() if p.is_file() and is_scan_file(p) and mask_path_for(p).exists())


def _project_split(root: Path) -> list[str] | None:
    pj = root / "project.json"
    if not pj.exists():
        return None
    from core.io.project import read_project_file

    data = read_project_file(pj)
    split = data.get("split", {})
    val = split.get("validation") if isinstance(split, dict) else None
    if val is None:
        return None
    if not isinstance(val, list) or not all(isinstance(v, str) for v in val):
        raise DataError(pj, "split.validation: expected a list of scan names")
    return [Path(v).stem for v in val]


# -- samples -------------------------------------------------------------------


@dataclass
class Augment:
    crop_along: int | None = None  # random crop length along depth (None: whole log)
    flips: bool = True
    photometric: bool = True


def make_sample(log: LabelledLog, rng: np.random.Generator, aug: Augment | None) -> tuple[np.ndarray, np.ndarray]:
    img, mask = log.image, log.mask
    if aug and aug.crop_along and img.shape[1] > aug.crop_along:
        start = int(rng.integers(0, img.shape[1] - aug.crop_along + 1))
        img, mask = img[:, start : start + aug.crop_along], mask[:, start : start + aug.crop_along]
    x = image_to_input(img)
    if aug and aug.flips:
        if rng.random() < 0.5:  # reverse depth
            x, mask = x[:, ::-1], mask[:, ::-1]
        if rng.random() < 0.5:  # mirror the tracks
            x, mask = x[::-1], mask[::-1]
    if aug and aug.photometric:
        x = x * rng.uniform(0.75, 1.15) + rng.uniform(-0.05, 0.08)
        if rng.random() < 0.5:
            x = x + rng.normal(0, rng.uniform(0.01, 0.05), x.shape).astype(np.float32)
        x = np.clip(x, 0.0, 1.0)
    return np.ascontiguousarray(x, dtype=np.float32), np.ascontiguousarray(mask)


def collate(samples: list[tuple[np.ndarray, np.ndarray]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pad different-size samples to a common size; ``valid`` is 1 on real pixels only."""
    h = max(s[0].shape[0] for s in samples)
    w = max(s[0].shape[1] for s in samples)
    x = torch.zeros(len(samples), 1, h, w)
    y = torch.zeros(len(samples), h, w, dtype=torch.long)
    valid = torch.zeros(len(samples), h, w)
    for i, (xi, yi) in enumerate(samples):
        hh, ww = xi.shape
        x[i, 0, :hh, :ww] = torch.from_numpy(xi)
        y[i, :hh, :ww] = torch.from_numpy(yi.astype(np.int64))
        valid[i, :hh, :ww] = 1.0
    return x, y, valid


@dataclass(frozen=True)
class Draw:
    """One training log as the sampler chose it: ``("stream", i)`` or ``("log", i)``, and its augmentation seed."""

    source: tuple
    aug_seed: int


class SyntheticStream:
    """An endless, seeded stream of freshly generated synthetic logs."""

    def __init__(self, seed: int, width: int = 1600, height: int = 384, depth_axis: str = "x",
                 families: tuple[str, ...] | None = None):
        self.seed, self.width, self.height, self.depth_axis = seed, width, height, depth_axis
        self.families = families  # print-style families drawn evenly (None: all of them)
        self.index = 0

    def _make(self, tag: int, index: int, name: str) -> LabelledLog:
        from core.synth import generate_log

        log_seed = int(np.random.SeedSequence([self.seed, tag, index]).generate_state(1)[0])
        axis = self.depth_axis if self.depth_axis in ("x", "y") else ("x", "y")[index % 2]
        lg = generate_log(log_seed, self.width, self.height, axis, name=name, families=self.families)
        return LabelledLog(lg.name, to_canonical(lg.image, axis), to_canonical(lg.mask, axis), lg.calibration,
                           truth=(lg.depth, {k.upper(): v for k, v in lg.truth.items()}))

    def claim(self, rank: int, world: int) -> int:
        """This rank's index of the next draw: every rank draws ``world`` logs and keeps its own, so ranks never
        share a log and the stream position stays global (a run resumes on any number of ranks)."""
        i = self.index + rank
        self.index += world
        return i

    def log(self, i: int) -> LabelledLog:
        """The stream's ``i``-th training log (a function of the seed and ``i`` alone: any process can make it)."""
        return self._make(1_000_003, i, f"stream_{i + 1}")

    def validation(self, count: int) -> list[LabelledLog]:
        """Held-out logs from a separate seed stream (never drawn for training)."""
        return [self._make(2_000_003, i, f"stream_val_{i}") for i in range(count)]


class LogSampler:
    """Draws training logs: from a folder's logs, the synthetic stream, or both mixed.

    Under data-parallel training every rank holds the same sampler state and
    draws the same ``world`` logs at each step, keeping the ``rank``-th: the
    sharding of ``torch.utils.data.DistributedSampler`` (one seeded permutation
    per epoch, padded with its own items to a multiple of the world size, rank
    r taking every world-th item), but with a global cursor, so a checkpoint
    written by N ranks resumes on M. The source decision (folder or stream)
    and the permutation come from the shared generator; crops and flips from a
    per-rank one. In a world of one both are the same generator, as they were
    before data-parallel training existed, so seeded single-process runs are
    unchanged.
    """

    def __init__(self, logs: list[LabelledLog], stream: SyntheticStream | None, mix: float, seed: int,
                 rank: int = 0, world: int = 1):
        if not logs and stream is None:
            raise InputError(None, "no training data: give a folder of labelled scans or the synthetic stream")
        if logs and len(logs) < world and (stream is None or mix < 1.0):
            raise InputError(None, f"{len(logs)} training log(s) cannot be shared among {world} ranks: "
                             "give at least one log per rank, or fewer ranks")
        self.logs, self.stream, self.mix = logs, stream, mix
        self.seed, self.rank, self.world = seed, rank, world
        self.rng = np.random.default_rng(seed)
        self.aug_rng = self.rng if world == 1 else np.random.default_rng([seed, rank])
        self.order: list[int] = []
        self.draws = 0

    def state(self) -> dict:
        return {"rng": self.rng.bit_generator.state, "order": [int(i) for i in self.order],
                "stream_index": self.stream.index if self.stream else 0, "draws": self.draws}

    def load_state(self, st: dict) -> None:
        self.rng.bit_generator.state = st["rng"]
        self.order = list(st["order"])
        self.draws = int(st.get("draws", 0))
        if self.stream:
            self.stream.index = int(st["stream_index"])
        if self.world > 1:  # the per-rank generator is not saved: reseed it where the run stands
            self.aug_rng = np.random.default_rng([self.seed, self.rank, self.draws])

    def _refill(self) -> None:
        n = len(self.logs)
        perm = [int(i) for i in self.rng.permutation(n)]
        pad = (-n) % self.world
        # items are popped from the end, so the epoch's last draw is the list's head: pad it with items that
        # draw does not already hold (positions world-pad … world-1), so its ranks still get distinct logs
        self.order = perm[self.world - pad : self.world] + perm + self.order if pad else perm + self.order

    def draw(self) -> Draw:
        """The next training log as a recipe (which log, which augmentation seed): cheap, taken in the training
        process in order, so the run is the same whatever makes the pixels (``core/engine/loader.py``)."""
        self.draws += 1
        use_stream = self.stream is not None and (not self.logs or self.rng.random() < self.mix)
        if use_stream:
            source: tuple = ("stream", self.stream.claim(self.rank, self.world))
        else:
            if len(self.order) < self.world:  # epoch: a fresh permutation
                self._refill()
            picked = [self.order.pop() for _ in range(self.world)]
            source = ("log", picked[self.rank])
        return Draw(source, int(self.aug_rng.integers(2**63 - 1)))

    def next(self) -> LabelledLog:
        return self.log_of(self.draw())

    def log_of(self, draw: Draw) -> LabelledLog:
        kind, i = draw.source
        return self.stream.log(i) if kind == "stream" else self.logs[i]

    def make_batch(self, draws: list[Draw], aug: Augment | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The pixels of ``draws``: each log generated or read, augmented by its own seed, padded together."""
        return collate([make_sample(self.log_of(d), np.random.default_rng(d.aug_seed), aug) for d in draws])


def training_data(cfg, world) -> tuple[list[LabelledLog], list[LabelledLog], LogSampler]:
    """A run's training and validation logs and the sampler that draws its batches (``cfg``: its
    :class:`core.engine.config.TrainConfig`, ``world``: its ranks): a folder's logs, logs given in memory, or the
    synthetic stream (which then also gives the validation logs a folder does not)."""
    train_logs: list[LabelledLog] = []
    val_logs: list[LabelledLog] = []
    if cfg.train_val is not None:
        train_logs, val_logs = list(cfg.train_val[0]), list(cfg.train_val[1])
    elif cfg.data:
        train_logs, val_logs = load_folder(cfg.data)
    elif not cfg.synthetic:
        raise DataError(None, "no training data: give a folder (DATA) or the synthetic stream")
    stream = (SyntheticStream(cfg.seed, *cfg.stream_size, depth_axis="mixed", families=cfg.styles)
              if cfg.synthetic else None)
    if stream is not None and not val_logs:
        val_logs = stream.validation(cfg.val_count)
    sampler = LogSampler(train_logs, stream, cfg.mix if train_logs else 1.0, cfg.seed, rank=world.rank,
                         world=world.size)
    return train_logs, val_logs, sampler
