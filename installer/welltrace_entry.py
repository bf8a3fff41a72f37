"""Entry point of the frozen app (PyInstaller runs this file as ``__main__``).

``freeze_support`` must run first: the training dock trains in a spawned
child process, and in a frozen app that child is this same executable started
with multiprocessing's own arguments, which ``freeze_support`` intercepts.
``console`` is the same entry as ``python -m app.launch`` and the ``welltrace`` script: ``digitize`` and
``bench-digitize`` end their process once done, without the interpreter's teardown (``core/common/fast_exit.py``).
"""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from app.launch import console

    sys.exit(console())
