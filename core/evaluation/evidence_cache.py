"""A network's maps of the pictures an evaluation reads, kept on disk: the rules and the confidence measured again in
seconds, not the minutes the network takes.

The tracer's rules and the calibrated confidence are chosen on held-out sets (``docs/accuracy.md``): every pass
switched off in turn, the calibrator refitted, each a re-trace of the same maps. A picture's maps are read once
(``core/digitize/job/pipeline.py: digitize``, ``keep_evidence``) and kept here, two bytes a pixel as the tracer keeps
them (``core/digitize/evidence/coded_map.py``), under a folder named for the model file's digest and the precision,
so a changed model or precision never reuses another's maps. What a re-trace reads is the picture itself (its ink
and grid, cheap) and these maps: the same LAS as a fresh read, byte for byte (``tests/core/evaluation/test_evidence_cache.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from core.common.atomic import atomic_write_bytes
from core.digitize.evidence.coded_map import CodedMap
from core.digitize.job.pipeline import ReadEvidence, digitize
from core.model.model_io import model_digest


class EvidenceCache:
    """Maps kept per picture under ``folder / <model digest>-<precision> / <set> / <picture>.npz``."""

    def __init__(self, folder: str | Path, model_path: str | Path, precision: str = "model", best_effort: bool = False):
        self.root = Path(folder) / f"{model_digest(model_path)}-{precision}"
        self.best_effort = best_effort  # a save that fails (a full disk) costs the next run's time, not this run

    def path(self, set_name: str, case: str) -> Path:
        return self.root / set_name / f"{case}.npz"

    def load(self, set_name: str, case: str) -> ReadEvidence | None:
        path = self.path(set_name, case)
        if not path.is_file():
            return None
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            maps = {int(k): CodedMap(z[f"codes_{k}"]) if meta["coded"] else z[f"codes_{k}"] for k in meta["classes"]}
            return ReadEvidence(maps, z["mask"], meta["method"], meta["memory"])

    def save(self, set_name: str, case: str, ev: ReadEvidence) -> None:
        import io

        coded = all(isinstance(m, CodedMap) for m in ev.maps.values())
        arrays = {f"codes_{k}": (m.codes if coded else np.asarray(m, np.float32)) for k, m in ev.maps.items()}
        meta = {"classes": sorted(ev.maps), "coded": coded, "method": ev.method, "memory": ev.memory}
        buf = io.BytesIO()
        np.savez(buf, mask=ev.mask, meta=np.array(json.dumps(meta, default=float)), **arrays)
        path = self.path(set_name, case)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, buf.getvalue())
        except OSError:
            if not self.best_effort:
                raise

    def digitize(self, set_name: str, case: str, image: np.ndarray, calib, **kwargs):
        """``digitize`` the picture, from its kept maps where there are some, else reading them and keeping them."""
        ev = self.load(set_name, case)
        if ev is not None:
            return digitize(image, calib, evidence=ev, **kwargs)
        kept: list = []
        res = digitize(image, calib, keep_evidence=kept, **kwargs)
        self.save(set_name, case, kept[0])
        return res
