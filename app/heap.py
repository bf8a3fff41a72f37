"""Keep Python's full garbage collections off the event loop's back.

A full (generation 2) collection walks every tracked object in the process;
with PySide6, pyqtgraph and PyTorch loaded that is millions of objects and
costs 200–450 ms on a slow CPU. It runs in whichever thread happens to
allocate at the time, holding the GIL, so the UI thread sleeps through it:
the event-loop stalls measured while a training run starts were exactly
these collections (seen with ``gc.callbacks``). Objects that exist once the
app has loaded its libraries live as long as the app, so they are moved to
the collector's permanent generation (``gc.freeze``): later collections walk
only what was made since, and still reclaim it.
"""

from __future__ import annotations

import gc


def freeze_long_lived() -> None:
    """Exempt every object alive now from future collections (O(1); nothing is collected here)."""
    gc.freeze()
