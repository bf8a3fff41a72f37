"""A calibrator for every model (issue #60, seventeenth round): ``welltrace fit-confidence --model M`` fits the
calibrated confidence for M and keeps it beside the model file (``core/evaluation/network_calibrator.py:
fit_network_calibrator``); a read by M uses it while it names M's digest, ignores it and says so when it does not
(``core/digitize/rules/confidence_model.py: calibrator_beside``), and reads as before where there is none."""

import functools
import json
import shutil
import sys
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from core.cli.main import main
from core.digitize.rules.confidence_model import (
    BUNDLED_CONFIDENCE,
    ConfidenceModel,
    bundled_confidence,
    calibrator_beside,
    calibrator_for,
    confidence_basis,
    sidecar_path,
)
from core.digitize.trace.params import model_params
from core.model.bundled import BUNDLED_MODEL
from tests.model_copies import nudged_bundled_model

DIGEST = "0123456789abcdef"


def _sidecar(path, digest: str, name: str = "mine.safetensors", flat: float | None = None) -> ConfidenceModel:
    """The shipped calibrator's numbers saved as the calibrator of the network ``digest`` (``flat``: its isotonic map
    one share everywhere, so a read that uses it is told apart by its CONF)."""
    d = json.loads(BUNDLED_CONFIDENCE.read_text())
    d["about"] = {**d["about"], "network": name, "network_sha256_16": digest}
    if flat is not None:
        d["isotonic_y"], d["decision_caps"] = [flat] * len(d["isotonic_y"]), {}
    path.write_text(json.dumps(d))
    return ConfidenceModel.from_dict(d)


def test_a_calibrator_beside_the_model_is_found_by_its_name_and_used_for_its_network_alone(tmp_path):
    model = tmp_path / "mine.safetensors"
    net = SimpleNamespace(file_path=model, file_digest=DIGEST)
    assert sidecar_path(model) == tmp_path / "mine.confidence.json"
    assert calibrator_beside(net) == (None, None)  # none beside: the shipped one, as before
    assert calibrator_beside(SimpleNamespace()) == (None, None)  # a network built in memory
    assert calibrator_for(model_params()) is bundled_confidence()

    _sidecar(sidecar_path(model), DIGEST)
    own, warning = calibrator_beside(net)
    assert warning is None and own.about["network_sha256_16"] == DIGEST
    assert calibrator_for(replace(model_params(), calibrator=own)) is own
    assert calibrator_for(replace(model_params(), calibrated=False, calibrator=own)) is None  # the fit itself
    basis, said = confidence_basis(own, DIGEST, model)
    assert basis == f"probability within 5 % of the scale, calibrated on mine.safetensors ({DIGEST})" and said is None

    _sidecar(sidecar_path(model), "fedcba9876543210")  # the model file changed since its calibrator was fitted
    own, warning = calibrator_beside(net)
    assert own is None
    assert "mine.confidence.json" in warning and "fedcba9876543210" in warning and DIGEST in warning
    assert "not used" in warning and f"welltrace fit-confidence --model {model}" in warning

    older = json.loads(BUNDLED_CONFIDENCE.read_text())  # fitted by a release whose tracer gave one signal less
    last = older["features"].pop()  # the last feature (a pass's flag, a linear term): the last term
    assert last not in older["splines"]
    older["decision_caps"].pop(last, None)
    for key in ("mean", "scale", "coef"):
        older[key].pop()
    older["about"]["network_sha256_16"] = DIGEST
    ConfidenceModel.from_dict(older)  # a calibrator in itself
    sidecar_path(model).write_text(json.dumps(older))
    own, warning = calibrator_beside(net)
    assert own is None and "another release" in warning and "fit-confidence" in warning

    sidecar_path(model).write_text("{not json")
    own, warning = calibrator_beside(net)
    assert own is None and "cannot be read" in warning and "fit-confidence" in warning


def test_another_network_without_its_own_calibrator_is_told_how_to_fit_one():
    shipped = bundled_confidence()
    basis, warning = confidence_basis(shipped, DIGEST, "/x/mine.safetensors")
    assert "applied to another network" in basis
    assert warning.endswith("fit one for it: welltrace fit-confidence --model /x/mine.safetensors")


@pytest.fixture(scope="module")
def mine(tmp_path_factory):
    """A model file of its own (the bundled network's weights nudged: another digest)."""
    folder = tmp_path_factory.mktemp("mine")
    return nudged_bundled_model(folder / "mine.safetensors")


def test_a_read_by_a_model_uses_its_own_calibrator_warns_when_it_is_stale_and_the_las_keeps_the_basis(mine, tmp_path):
    from core.digitize.job.pipeline import digitize
    from core.digitize.output.las import result_from_las, write_result
    from core.model.model_io import load_model
    from core.synth import generate_log

    net, _ = load_model(mine)
    log = generate_log(77, 1200, 384, "x")
    side = sidecar_path(mine)
    try:
        _sidecar(side, net.file_digest, mine.name, flat=0.625)
        res = digitize(log.image, log.calibration, model=net)
        assert res.confidence_basis == (f"probability within 5 % of the scale, calibrated on {mine.name} "
                                        f"({net.file_digest})")
        assert not any(w.startswith("confidence:") for w in res.warnings)
        conf = np.concatenate([c[np.isfinite(res.values[k])] for k, c in res.confidence.items()])
        assert conf.size and np.mean(np.isclose(conf, 0.625)) > 0.9  # its own map, not the shipped one
        write_result(tmp_path / "o.las", res, log.calibration, "x.png", mine.name)
        back = result_from_las(tmp_path / "o.las", log.calibration, log.image.shape)
        assert back.confidence_basis == res.confidence_basis  # read back and saved again, it says the same

        _sidecar(side, "fedcba9876543210", mine.name, flat=0.625)  # fitted on what the file held before
        res = digitize(log.image, log.calibration, model=net)
        said = [w for w in res.warnings if w.startswith("confidence:")]
        assert len(said) == 1 and "not used" in said[0] and "fit-confidence" in said[0]
        assert "applied to another network" in res.confidence_basis  # the shipped fit's, as with none beside
        conf = np.concatenate([c[np.isfinite(res.values[k])] for k, c in res.confidence.items()])
        assert np.mean(np.isclose(conf, 0.625)) < 0.1
    finally:
        side.unlink(missing_ok=True)


def test_fit_confidence_without_scikit_learn_says_what_to_install_and_writes_nothing(mine, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # `import sklearn` raises ImportError
    assert main(["fit-confidence", "--model", str(mine)]) == 2
    err = capsys.readouterr().err
    assert "scikit-learn" in err and "welltrace[fit]" in err and "nothing was written" in err
    assert "Traceback" not in err and not sidecar_path(mine).exists()


def test_fit_confidence_never_writes_the_model_nor_the_bundled_model_s_calibrator_unasked(mine, capsys):
    assert main(["fit-confidence", "--model", str(BUNDLED_MODEL)]) == 2
    assert "resources/models/confidence.json" in capsys.readouterr().err
    assert not sidecar_path(BUNDLED_MODEL).exists()
    before = mine.read_bytes()
    assert main(["fit-confidence", "--model", str(mine), "--out", str(mine)]) == 2
    assert "never overwrites its model" in capsys.readouterr().err and mine.read_bytes() == before
    assert main(["fit-confidence", "--model", str(mine), "--out", str(mine.parent / "nowhere" / "c.json")]) == 2
    assert "cannot be written" in capsys.readouterr().err


def test_fit_confidence_on_a_device_that_is_not_there_is_refused_before_any_work(mine, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here: the refusal is for a machine without one")
    assert main(["fit-confidence", "--model", str(mine), "--device", "cuda"]) == 2
    err = capsys.readouterr().err
    assert "no CUDA device" in err and "Traceback" not in err and not sidecar_path(mine).exists()


def test_a_small_fit_end_to_end_writes_the_calibrator_beside_the_model_and_its_reads_use_it(
        mine, tmp_path, monkeypatch, capsys):
    """Two small logs (the fit's families at the fit's seed, but one log each of two families, drawn small), fitted
    through the command: it prints a line per log read, writes ``mine.confidence.json`` naming the model's digest,
    and a read by the model is then calibrated on it."""
    from core.evaluation import network_calibrator
    from core.model.model_io import load_model, model_digest

    model = tmp_path / "mine.safetensors"
    shutil.copyfile(mine, model)
    small = functools.partial(network_calibrator.fit_network_calibrator, families=("random", "dense"), size=(800, 320))
    monkeypatch.setattr(network_calibrator, "fit_network_calibrator", small)
    assert main(["fit-confidence", "--model", str(model), "--count", "1", "--cache", str(tmp_path / "maps"),
                 "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "1/2 random_00" in out and "2/2 dense_00" in out and f"wrote {sidecar_path(model)}" in out
    fitted = ConfidenceModel.load(sidecar_path(model))
    assert fitted.about["network_sha256_16"] == model_digest(model) and fitted.about["network"] == model.name
    assert fitted.about["logs_per_family"] == 1 and fitted.about["samples"] > 1000
    assert model.read_bytes() == mine.read_bytes()  # the model is never written

    # the maps kept: a second fit re-traces them, and says so
    assert main(["fit-confidence", "--model", str(model), "--count", "1", "--cache", str(tmp_path / "maps"),
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cached_logs"] == 2 and report["beside"] is True

    net, _ = load_model(model)
    own, warning = calibrator_beside(net)
    assert warning is None and own.about["network_sha256_16"] == net.file_digest
    basis, said = confidence_basis(calibrator_for(replace(model_params(), calibrator=own)), net.file_digest, model)
    assert said is None and f"calibrated on {model.name}" in basis
