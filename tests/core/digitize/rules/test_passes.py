"""The rules after the path as an ordered list of named passes (core/digitize/rules/passes.py): each sets its bit where
it acts, each can be switched off by name, and a switched-off pass changes what it did and nothing else."""

from dataclasses import replace

import numpy as np
import pytest

from core.digitize.rules.curve import trace_curve
from core.digitize.rules.passes import (
    BIT,
    BY_NAME,
    PASSES,
    Effect,
    check_names,
    doubt,
    flagged,
    no_reading,
    reasons,
)
from core.digitize.trace.params import Trace, TraceParams, model_params
from core.io.calibration import CurveSpec


def test_the_passes_are_listed_once_in_the_order_they_run():
    names = [p.name for p in PASSES]
    assert len(names) == len(set(names)) == len(BY_NAME)
    assert len(set(BIT.values())) == len(PASSES) and max(BIT.values()) < 2**32  # a bit each in Trace.flags (uint32)
    stages = ["curve", "scan", "picture", "values"]
    order = [stages.index(p.stage) for p in PASSES]
    assert order == sorted(order)  # the per-curve passes first, the values' last
    assert all(p.reads and p.reason for p in PASSES)


def test_an_unknown_pass_name_is_refused_with_the_names():
    assert check_names(["steep", "gap"]) == {"steep", "gap"}
    with pytest.raises(ValueError, match="no pass named nonsense.*border_ride"):
        check_names(["steep", "nonsense"])


def test_the_helpers_take_a_value_away_or_doubt_it_and_say_which_pass_did():
    cols = 10
    tr = Trace("GR", np.arange(cols, dtype=float), np.zeros(cols, np.int64), np.ones(cols, np.float32),
               np.ones(cols, bool))
    where = np.zeros(cols, bool)
    where[2:4] = True
    no_reading(tr, where, "gap")
    assert np.isnan(tr.position[2:4]).all() and not tr.observed[2:4].any() and (tr.confidence[2:4] == 0).all()
    doubt(tr, np.arange(cols) >= 3, "steep")  # a doubt of a NULL column is no doubt: nothing is written there
    assert flagged(tr.flags, "gap")[2:4].all() and not flagged(tr.flags, "steep")[3]
    assert flagged(tr.flags, "steep")[4:].all() and np.isfinite(tr.position[4:]).all()
    assert reasons(tr.flags, effect=Effect.NULL) == [("gap", 0.2)]
    assert dict(reasons(tr.flags, effect=Effect.DOUBT)) == {"steep": 0.6}


def _border_case():
    """A curve swinging mid-track, then carried along the track's right border from a jump to the log's end."""
    rows, cols = 121, 600
    spec = CurveSpec("GR", "API", "", 1, (10.0, 110.0), (0.0, 150.0))
    ev = np.zeros((rows, cols), np.float32)
    x = np.arange(cols)
    curve = np.round(60 + 20 * np.sin(x / 40.0)).astype(int)
    for c in range(400):
        ev[curve[c] - 1 : curve[c] + 2, c] = 0.9
    ev[107:111, 400:] = 0.99  # the border, which a network calls a pen, where the curve has ended
    return ev, spec


def test_a_pass_switched_off_changes_its_own_columns_and_no_other():
    ev, spec = _border_case()
    on = trace_curve(ev, spec, model_params())
    off = trace_curve(ev, spec, replace(model_params(), passes_off=frozenset({"border_ride", "second_pass"})))
    ridden = flagged(on.flags, "border_ride") | flagged(on.flags, "gap")
    assert ridden[430:].all() and np.isnan(on.position[430:]).all()  # on: the border after the curve is no reading
    assert np.isfinite(off.position[430:]).all() and not flagged(off.flags, "border_ride").any()
    assert np.allclose(on.position[:390], off.position[:390])  # the curve itself is read alike


def test_a_digitised_result_names_each_samples_passes():
    from core.digitize.job.pipeline import digitize
    from core.synth import generate_log

    lg = generate_log(7, 800, 240, "x", style="classic")
    res = digitize(lg.image, lg.calibration)  # the classical tracer: the capped confidence, the same passes
    for spec in lg.calibration.curves:
        f = res.flags[spec.mnemonic]
        assert f.shape == res.values[spec.mnemonic].shape and f.dtype == np.uint32
        null = ~np.isfinite(res.values[spec.mnemonic])
        nulling = sum(BIT[p.name] for p in PASSES if p.effect is Effect.NULL)
        assert ((f[null] & nulling) != 0).all()  # every NULL sample says which pass made it so
    off = digitize(lg.image, lg.calibration, params=TraceParams(passes_off=frozenset({"steep", "unclaimed_stroke"})))
    for spec in lg.calibration.curves:
        assert not (off.flags[spec.mnemonic] & (BIT["steep"] | BIT["unclaimed_stroke"])).any()
        assert np.array_equal(np.isfinite(off.values[spec.mnemonic]), np.isfinite(res.values[spec.mnemonic]))
