"""The engine never imports Qt or the GUI (the import-linter contract in pyproject.toml)."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("PySide6", "pyqtgraph", "shiboken6", "app", "PyQt5", "PyQt6")


def test_core_imports_no_qt_statically():
    offenders = []
    for py in (ROOT / "core").rglob("*.py"):
        tree = ast.parse(py.read_text(), str(py))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [f"{py.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert not offenders, offenders


def test_import_linter_contract_holds():
    exe = shutil.which("lint-imports")
    if exe is None:
        import pytest

        pytest.skip("import-linter not installed")
    res = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_importing_the_engine_loads_no_qt():
    code = (
        "import sys, core.cli.main, core.io.scan, core.io.calibration, core.io.las_io, core.synth; "
        "bad=[m for m in sys.modules if m.split('.')[0] in ('PySide6','pyqtgraph','shiboken6')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
