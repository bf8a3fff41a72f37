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


# -- the house: rooms, and every module reached by a test ---------------------------------------------------

# modules no test imports by name, each run by a test through the module named here (which imports it): the
# training loop's parts through ``core.engine.train`` (tests/core/test_train.py), and so on
THROUGH = {
    "core.cli.options": "core.cli.main",
    "core.cli.tables": "core.cli.commands.budget",
    "core.common.events": "core.digitize.job.scan_job",
    "core.common.progress": "core.cli.commands.digitize",
    "core.common.sysmem": "core.engine.memory",
    "core.digitize.calibrate.depth_reading": "core.digitize.calibrate.proposal",
    "core.digitize.calibrate.proposal_report": "core.digitize.calibrate.proposal",
    "core.digitize.calibrate.section_layout": "core.digitize.calibrate.proposal",
    "core.digitize.evidence.classical": "core.digitize.job.pipeline",
    "core.digitize.trace.group_kernels": "core.digitize.trace.group",
    "core.engine.adapt": "core.cli.commands.adapt",
    "core.engine.config": "core.engine.train",
    "core.engine.faults": "core.engine.train",
    "core.engine.health": "core.engine.train",
    "core.engine.losses": "core.engine.train",
    "core.engine.run_notes": "core.engine.train",
    "core.engine.run_state": "core.engine.train",
    "core.engine.transient": "core.engine.budget",
    "core.evaluation.calibration_eval": "core.cli.commands.eval_calibration",
    "core.evaluation.demo": "core.cli.commands.demo",
    "core.evaluation.overlay": "core.evaluation.styles",
    "core.io.calibration_file": "core.io.calibration",
    "core.labelling.prefill": "app.window.labelling",
    "core.synth.artefacts": "core.synth.log",
    "core.synth.catalogue": "core.synth.log",
    "core.synth.colour_page": "core.synth.log",
    "core.synth.dataset": "core.synth",
    "core.synth.grey_families": "core.synth.styles",
    "core.synth.randomised": "core.synth.styles",
}
# CLI commands no test calls through ``main([NAME, ...])``, and the entry point that runs them
COMMANDS_THROUGH = {"gui": "app.launch (tests/app/test_first_hour.py: --screenshot)"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module a file imports, by name (``from a.b import c`` counts ``a.b`` and ``a.b.c``)."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return out


def test_the_digitise_room_has_no_module_at_its_top():
    top = sorted(p.name for p in (ROOT / "core" / "digitize").glob("*.py"))
    assert top == ["__init__.py"], top


def test_every_engine_module_is_reached_by_a_test_of_its_own_or_a_named_entry_point():
    import re

    tested: set[str] = set()
    texts = []
    for py in (ROOT / "tests").rglob("*.py"):
        tested |= _imports(py)
        texts.append(py.read_text())
    called = set(re.findall(r"main\(\[\s*\"([a-z-]+)\"", "\n".join(texts)))
    missing, stale = [], []
    for py in sorted((ROOT / "core").rglob("*.py")):
        if py.name == "__init__.py":
            continue
        name = _module_name(py)
        if name in tested:
            continue
        if name.startswith("core.cli.commands."):
            command = re.search(r'^NAME = "([a-z-]+)"', py.read_text(), re.M).group(1)
            if command in called or command in COMMANDS_THROUGH:
                continue
        entry = THROUGH.get(name)
        if entry is None:
            missing.append(name)
            continue
        entry_file = ROOT / Path(*entry.split("."))
        entry_file = entry_file / "__init__.py" if entry_file.is_dir() else entry_file.with_suffix(".py")
        if name not in _imports(entry_file) or (entry not in tested and not entry.startswith("core.cli.commands.")):
            stale.append(f"{name} through {entry}")
    assert not missing, f"no test imports these, nor names an entry point that runs them: {missing}"
    assert not stale, f"entry points that no longer import the module or that no test runs: {stale}"
