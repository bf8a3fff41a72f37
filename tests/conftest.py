"""Shared fixtures. The test configuration sets QT_QPA_PLATFORM=offscreen."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("WELLTRACE_SETTINGS_ORG", "WellTraceTests")
# the app's settings (window layout) and user data (the demo project copy) go to a fresh folder per test run:
# tests never read the user's own files, nor leave a layout one test made for the next run to restore
_HOME = tempfile.mkdtemp(prefix="welltrace-tests-")
atexit.register(shutil.rmtree, _HOME, ignore_errors=True)
os.environ["XDG_CONFIG_HOME"] = os.path.join(_HOME, "config")
os.environ["XDG_DATA_HOME"] = os.path.join(_HOME, "data")
os.environ["XDG_CACHE_HOME"] = os.path.join(_HOME, "cache")  # compiled kernels, exported graphs: not the user's

import pytest  # noqa: E402

# Hypothesis: every property test draws the same examples on every run (derandomised: the examples follow from the
# test's own source, no example database carried between runs), so the suite never fails by chance, in CI or on a
# fresh clone; a failure found once is pinned with @example in its test. WELLTRACE_HYPOTHESIS_PROFILE=explore
# draws fresh random examples (and keeps the failures it finds in .hypothesis/) to look for new ones.
try:
    from hypothesis import HealthCheck
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # the property tests skip themselves without it
    pass
else:
    _hypothesis_settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True,
                                          suppress_health_check=[HealthCheck.too_slow])
    _hypothesis_settings.register_profile("explore", deadline=None, print_blob=True,
                                          suppress_health_check=[HealthCheck.too_slow])
    _hypothesis_settings.load_profile(os.environ.get("WELLTRACE_HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parents[1]
# the real scans and foreign prints beside the checkout; elsewhere (a GPU machine that gets the checkout alone:
# tools/gpu_stage.sh) where WELLTRACE_SHARED_DATA says
SHARED = Path(os.environ.get("WELLTRACE_SHARED_DATA", ROOT.parent / "shared" / "data"))


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` need a CUDA device: skipped, not failed, where PyTorch sees none."""
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (PyTorch sees none)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"real data not present at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def kgs_scan(shared_data) -> Path:
    return shared_data / "scans" / "kgs_273101_bhc_sonic.tif"


@pytest.fixture(params=["cpu", "cuda"])
def rules(request):
    """The test runs twice: under the CPU's autocast rules and under CUDA's, emulated on the CPU
    (``core/model/autocast_rules.py``): what a GPU run saves is checked without a GPU."""
    from core.model.autocast_rules import autocast_rules

    with autocast_rules(request.param):
        yield request.param


@pytest.fixture
def shots_dir() -> Path | None:
    """Folder for screenshots of key states when WELLTRACE_SHOTS is set."""
    d = os.environ.get("WELLTRACE_SHOTS")
    if not d:
        return None
    p = Path(d)
    p.mkdir(parents=True, exist_ok=True)
    return p
