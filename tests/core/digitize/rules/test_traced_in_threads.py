"""The curves of a page traced over two threads (``core/common/threads.py``): the same traces, signals, flags and
confidence, bit for bit, as one after another (a same-style group beside a chain of curves that share a class and
explain each other's strokes away, and wrapping curves)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.common.threads import set_work_threads
from core.digitize.job.pipeline import digitize
from core.digitize.rules.all_curves import _chains
from core.digitize.trace.crossings import same_style_groups
from core.io.calibration import CurveSpec
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


def _spec(name: str, klass: int, track: tuple[float, float]) -> CurveSpec:
    return CurveSpec(name, "", "", klass, track, (0.0, 1.0))


def test_curves_that_read_no_one_s_work_are_chains_of_their_own():
    """KGS's layout: GR (class 1) and CALI (class 2) in one track, SPHI (class 2) in the next; none explains a later
    curve's strokes away, so each is traced on its own. A class where one curve's strokes are explained away for a
    later one sharing its track stays one chain in the calibration's order, its curve in another track with it
    (it reads the map with the earlier lines taken out, as in one chain of all)."""
    maps = {1: None, 2: None, 3: None}
    kgs = [_spec("GR", 1, (1, 499)), _spec("CALI", 2, (1, 499)), _spec("SPHI", 2, (665, 1663))]
    assert _chains([0, 1, 2], kgs, maps) == [[0], [1], [2]]
    shared = [_spec("A", 2, (0, 200)), _spec("B", 1, (0, 200)), _spec("C", 2, (300, 500)),
              _spec("D", 2, (0, 200))]  # A's strokes are explained away for D: class 2 one chain (A, C, D)
    assert _chains([0, 1, 2, 3], shared, maps) == [[0, 2, 3], [1]]
    assert _chains([0, 1, 2, 3], shared, {1: None}) == [[0], [1], [2], [3]]  # class 2 on the binary map: no one's
