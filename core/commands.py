"""Subcommands of the engine (train, budget, bench, digitize, eval, parity).

Kept apart from ``cli.py`` so the parser module stays small; each handler
imports its engine module lazily so ``welltrace --help`` starts fast.
"""

from __future__ import annotations


def add_engine_commands(sub) -> None:
    """Register the engine's subcommands on the ``welltrace`` parser."""
