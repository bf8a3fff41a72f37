"""``core/digitize/evidence/scan.py``: a hand-painted class mask as evidence, and where it is refused."""

import numpy as np
import pytest

from core.common.errors import InputError
from core.digitize.evidence.scan import colour_evidence, mask_evidence
from core.io.calibration import Calibration, CurveSpec


def _calib(classes=(1, 2)) -> Calibration:
    curves = [CurveSpec(f"C{k}", "", "", k, (10.0, 50.0), (0.0, 100.0)) for k in classes]
    return Calibration(depth_axis="x", depth_unit="FT", depth_picks=[(0.0, 0.0), (199.0, 199.0)], step=1.0,
                       curves=curves)


def test_a_class_mask_gives_each_class_its_own_map_softened_about_its_strokes():
    mask = np.zeros((64, 200), np.uint8)
    mask[20, :] = 1
    mask[40, ::4] = 2
    warnings: list[str] = []
    evidence, canon = mask_evidence(mask, mask.shape, _calib(), warnings, "m.png")
    assert set(evidence) == {1, 2, 3} and not warnings
    assert evidence[1][20].min() >= 0.99 and evidence[1][40].max() < 0.01  # each class its own strokes
    assert 0.0 < evidence[1][21].max() < 1.0  # softened beside the stroke: the centroid finds its middle
    assert canon.shape == mask.shape and set(np.unique(canon)) == {0, 1, 2}


def test_a_mask_missing_a_curves_class_is_warned_and_a_wrong_mask_refused_naming_it():
    mask = np.zeros((64, 200), np.uint8)
    mask[20, :] = 1
    warnings: list[str] = []
    mask_evidence(mask, mask.shape, _calib((1, 3)), warnings, "m.png")
    assert any("C3" in w and "class-3" in w for w in warnings)
    with pytest.raises(InputError, match="m.png.*but the scan is"):
        mask_evidence(mask, (64, 100), _calib(), [], "m.png")
    bad = mask.copy()
    bad[0, 0] = 7
    with pytest.raises(InputError, match="class 7"):
        mask_evidence(bad, bad.shape, _calib(), [], "m.png")


def test_no_colour_pixels_means_no_colour_evidence():
    assert colour_evidence(None, (64, 200), _calib(), {}, None, [], None) == {}
