"""The ``welltrace`` subcommands, one module each: ``NAME``, ``register(subparsers)`` (its arguments, with
``set_defaults(func=run)``) and ``run(args) -> exit status``. A module imports its engine lazily, inside ``run``,
so that ``welltrace --help`` starts fast. To add a command: a module here and its name in :data:`COMMANDS`."""

from __future__ import annotations

from . import (
               adapt,
               bench,
               bench_digitize,
               budget,
               calibrate,
               demo,
               digitize,
               eval_calibration,
               eval_crossings,
               eval_las,
               eval_styles,
               fit_confidence,
               gui,
               info,
               parity,
               synth,
               train,
)

# in the order ``welltrace --help`` lists them
COMMANDS = (gui, info, synth, demo, train, digitize, budget, bench, parity, eval_las, eval_styles, eval_crossings,
            calibrate, eval_calibration, bench_digitize, adapt, fit_confidence)
