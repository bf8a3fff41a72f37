"""The grid's band dampings the trace stage shares between its passes (``page/grid.py: Grid.band_damping``) are one
scan's: kept while its curves are traced, read by every pass of every curve of its track, let go of when its
tracing ends, and a second scan traced after it reads its own: the same traces as that scan traced alone."""

from __future__ import annotations

import numpy as np
import torch

from core.digitize.job.pipeline import digitize, read_page
from core.digitize.page.grid import Grid
from core.model.bundled import BUNDLED_MODEL
from core.model.model_io import load_model
from core.synth.log import generate_log


def _same(a, b) -> None:
    assert sorted(a.values) == sorted(b.values)
    for k in a.values:
        np.testing.assert_array_equal(a.values[k], b.values[k])
        np.testing.assert_array_equal(a.confidence[k], b.confidence[k])
    for x, y in zip(a.traces, b.traces):
        np.testing.assert_array_equal(x.flags, y.flags)
        for key in x.signals:
            np.testing.assert_array_equal(x.signals[key], y.signals[key])


def test_a_second_scans_tracing_reads_its_own_dampings(monkeypatch):
    model, _ = load_model(BUNDLED_MODEL)
    logs = [generate_log(seed, 1024, 480, "y", same_style=1.0) for seed in (10, 12)]
    with torch.no_grad():
        pages = [read_page(lg.image, lg.calibration, model=model) for lg in logs]
    second_alone = digitize(logs[1].image, logs[1].calibration, page=pages[1])
    assert not pages[1].grid._dampings  # let go of when its tracing ended

    asked: list[tuple[int, tuple]] = []
    made = Grid.band_damping

    def band_damping(grid, rows=None, floor=0.15):
        kept = made(grid, rows, floor)
        asked.append((id(grid), (kept.r0, kept.r1), id(kept)))
        return kept

    monkeypatch.setattr(Grid, "band_damping", band_damping)
    first = digitize(logs[0].image, logs[0].calibration, page=pages[0])
    assert first.values
    second = digitize(logs[1].image, logs[1].calibration, page=pages[1])
    _same(second, second_alone)
    assert all(not p.grid._dampings for p in pages)
    grids = {g for g, _, _ in asked}
    assert grids == {id(p.grid) for p in pages}  # each scan's passes asked their own grid
    for g in grids:  # ... and within a scan, every pass over a band read the one damping made for it
        made_for = {}
        for grid, band, kept in asked:
            if grid == g:
                made_for.setdefault(band, set()).add(kept)
        assert made_for and all(len(k) == 1 for k in made_for.values())
        assert sum(1 for grid, _, _ in asked if grid == g) > len(made_for)  # read more than once
