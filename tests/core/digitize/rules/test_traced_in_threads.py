"""The curves of a page traced over two threads (``core/common/threads.py``): the same traces, signals, flags and
confidence, bit for bit, as one after another (a same-style group beside a chain of curves that share a class and
explain each other's strokes away, and wrapping curves)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.common.threads import set_work_threads
from core.digitize.job.pipeline import digitize
from core.digitize.trace.crossings import same_style_groups
from core.model.bundled import BUNDLED_MODEL
from core.model.model_io import load_model
from core.synth.log import generate_log


@pytest.fixture(autouse=True)
def _default_budget():
    yield
    set_work_threads(None)


def test_curves_traced_over_two_threads_are_those_traced_one_after_another():
    lg = generate_log(10, 1024, 480, "y", same_style=1.0)
    curves = lg.calibration.curves
    assert same_style_groups(curves, skip={}) and any(c.wrap for c in curves)  # a group, and a chain with wraps
    model, _ = load_model(BUNDLED_MODEL)
    kept = []
    with torch.no_grad():
        digitize(lg.image, lg.calibration, model=model, keep_evidence=kept)  # read once, traced twice
    assert {1, 2, 3} <= set(kept[0].maps)  # the network's maps by style: the group is traced jointly
    reads = {}
    for n in (1, 2):
        set_work_threads(n)
        reads[n] = digitize(lg.image, lg.calibration, evidence=kept[0])
    one, two = reads[1], reads[2]
    assert sorted(one.values) == sorted(two.values) == sorted(c.mnemonic for c in curves)
    for k in one.values:
        np.testing.assert_array_equal(one.values[k], two.values[k])
        np.testing.assert_array_equal(one.confidence[k], two.confidence[k])
    for a, b in zip(one.traces, two.traces):
        np.testing.assert_array_equal(a.flags, b.flags)
        assert a.signals.keys() == b.signals.keys()
        for key in a.signals:
            np.testing.assert_array_equal(a.signals[key], b.signals[key])
