"""Building the command line imports no command's engine: ``digitize`` starts without the synthetic generator or
the crossing test set (``core/cli/options.py``: ``choices_later``, ``describe_lazily``), and its ``--help`` without
PyTorch (``core/model/precision_modes.py``)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli.main import build_parser
from core.common.errors import UsageError
from core.model import precision
from core.model.precision_modes import MODES

ROOT = Path(__file__).resolve().parents[3]


def test_building_the_parser_imports_no_engine():
    code = (
        "import json, sys; sys.path.insert(0, %r)\n"
        "from core.cli.main import build_parser\n"
        "p = build_parser()\n"
        "built = sorted(m for m in ('torch', 'core.synth', 'core.evaluation') if m in sys.modules)\n"
        "print(json.dumps(built))\n"
    ) % str(ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == []


def test_lazy_choices_and_descriptions_say_what_they_said():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices
    assert precision.MODES is MODES  # the one list, read without PyTorch
    assert "{model,%s}" % ",".join(MODES) in sub["digitize"].format_help()
    assert "Pairings: 1+2, 1+3" in sub["eval-crossings"].format_help()
    assert "Families: classic, uniform" in sub["eval-styles"].format_help()
    with pytest.raises(UsageError, match=r"synth: argument --style: invalid choice: 'nope' \(choose from 'mixed'"):
        parser.parse_args(["synth", "out", "--style", "nope"])
    assert parser.parse_args(["synth", "out", "--style", "fax"]).style == "fax"
    assert parser.parse_args(["digitize", "x.tif", "--calib", "x.json", "--precision", "bf16"]).precision == "bf16"
