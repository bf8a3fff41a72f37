"""``core/common/runs.py``: the runs of True in a flag array and the distance to the nearest one."""

import numpy as np

from core.common.runs import distance_to_true, true_runs


def test_true_runs_finds_every_maximal_run_with_exclusive_stops():
    flags = np.array([1, 1, 0, 0, 1, 0, 1, 1, 1], bool)
    starts, stops = true_runs(flags)
    assert starts.tolist() == [0, 4, 6] and stops.tolist() == [2, 5, 9]
    assert [a.size for a in true_runs(np.zeros(5, bool))] == [0, 0]
    assert [x.tolist() for x in true_runs(np.ones(3, bool))] == [[0], [3]]


def test_distance_to_true_counts_columns_to_the_nearest_flag_either_side():
    flags = np.array([0, 0, 1, 0, 0, 0, 1, 0], bool)
    assert distance_to_true(flags).tolist() == [2, 1, 0, 1, 2, 1, 0, 1]
    none = distance_to_true(np.zeros(4, bool))
    assert (none > 4).all()  # beyond the array's length where nothing is flagged
