"""The evidence cache (core/evaluation/evidence_cache.py): a picture's maps read once and kept per model and
precision, so a re-trace of the same picture writes the same values as a fresh read."""

from __future__ import annotations

import numpy as np
import torch

from core.digitize.job.pipeline import digitize
from core.evaluation.evidence_cache import EvidenceCache
from core.model import precision as prec
from core.model.bundled import BUNDLED_MODEL
from core.model.model_io import load_model, model_digest
from core.synth.log import generate_log


def test_a_retrace_from_the_kept_maps_writes_the_fresh_reads_values_and_confidences(tmp_path):
    model, _ = load_model(BUNDLED_MODEL)
    lg = generate_log(2, 384, 192, "y", classes=(2,), style="uniform")
    mode = prec.resolve("bf16", "cpu")
    with torch.no_grad():
        fresh = digitize(lg.image, lg.calibration, model=model, precision=mode)
        cache = EvidenceCache(tmp_path, BUNDLED_MODEL, "bf16")
        assert cache.load("set", "case") is None
        first = cache.digitize("set", "case", lg.image, lg.calibration, model=model, precision=mode)
    kept = cache.path("set", "case")
    assert kept.is_file() and kept.parent.parent.name == f"{model_digest(BUNDLED_MODEL)}-bf16"
    # the second reading takes the maps from disk: no network is given to it
    again = cache.digitize("set", "case", lg.image, lg.calibration, model=None, precision=mode)
    for res in (first, again):
        assert list(res.values) == list(fresh.values)
        for name in fresh.values:
            np.testing.assert_array_equal(res.values[name], fresh.values[name])
            np.testing.assert_array_equal(res.confidence[name], fresh.confidence[name])
    # another precision keeps its own maps
    assert EvidenceCache(tmp_path, BUNDLED_MODEL, "fp32").load("set", "case") is None
