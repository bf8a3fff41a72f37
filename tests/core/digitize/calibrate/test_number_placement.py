"""Depth numbers onto the depth lines they label (``number_placement.snap_to_depth_lines``): how a page prints
its labels (on their lines, centred, hanging) said by the numbers of a section, or of the page where a section has
too few, and the lines of the track beside each number rather than every track's pooled."""

import numpy as np

from core.digitize.calibrate.number_placement import snap_to_depth_lines
from core.digitize.calibrate.proposal_records import DepthNumber


def test_a_short_pass_with_two_labels_places_them_as_the_pages_other_sections_do():
    """A repeat pass prints two depths: too few to say how its labels stand on their lines. Its 10600 lay 5 px
    above a finer line and half a pixel below its own, which was not found: on its own it went onto the finer line
    (1 ft off at 5 px per ft); as the page's main pass moved its labels (half a pixel up) it stays on its own."""
    lines = np.array([30218.0, 30723.5])
    repeat = [DepthNumber(30218.5, 10500.0, "10500"), DepthNumber(30718.5, 10600.0, "10600")]
    assert snap_to_depth_lines(repeat, lines, page_usual=-0.5) is None  # its own usual: too few to say
    assert [n.pixel for n in repeat] == [30218.0, 30718.0]
    alone = [DepthNumber(30218.5, 10500.0, "10500"), DepthNumber(30718.5, 10600.0, "10600")]
    snap_to_depth_lines(alone, lines)  # no page to go by: each onto its nearest line, as before
    assert [n.pixel for n in alone] == [30218.0, 30723.5]
    # no line near any of its numbers: no line of its own to go by, each stays where it was read
    far = [DepthNumber(1000.0, 2000.0, "2000"), DepthNumber(1070.0, 3000.0, "3000")]
    snap_to_depth_lines(far, np.array([1300.0]), page_usual=2.5)
    assert [n.pixel for n in far] == [1000.0, 1070.0]


def test_each_number_goes_onto_the_lines_of_the_track_beside_it():
    """Labels printed just above their lines (3 px from the digits' centre) beside a ruled track, and an image
    track whose rows were taken for lines: pooled, the image's rows lie nearer than the ruling's and each label goes
    1.5 px short of its line (33-025-02311-0001's main log: 2 px, 1.4 ft); on the ruled track's own lines each
    moves its 3 px."""
    ruled = 1000.0 + 70.0 * np.arange(8)
    noise = ruled - 1.5  # the image track's rows, run into the ruling's lines where the tracks are pooled
    pooled = np.sort(np.concatenate([ruled, noise]))

    def labels() -> list[DepthNumber]:
        return [DepthNumber(p - 3.0, 1000.0 + 50 * k, str(1000 + 50 * k)) for k, p in enumerate(ruled)]

    mixed = labels()
    assert snap_to_depth_lines(mixed, pooled) == 1.5
    beside = labels()
    assert snap_to_depth_lines(beside, pooled, beside=[ruled] * len(beside)) == 3.0
    assert [n.pixel for n in beside] == list(ruled)
    # a track with no lines of its own: the pooled lines
    empty = labels()
    snap_to_depth_lines(empty, pooled, beside=[np.zeros(0)] * len(empty))
    assert [n.pixel for n in empty] == list(noise)


def test_a_tracks_own_lines_are_found_apart_from_an_image_tracks_rows():
    """Pooled over the tracks, an image track's dark rows run into the ruled track's lines and shift their centres;
    each track's own lines keep the ruling's, and the track nearest a number gives its lines. An image track's rows
    taken for lines, unevenly spaced, are no track's lines (its numbers go by the pooled lines)."""
    from core.digitize.calibrate.depth_lines import depth_lines, lines_beside

    rng = np.random.default_rng(3)
    dark = np.zeros((120, 1400), np.float32)  # canonical: rows across, columns along depth
    ruling = np.arange(35, 1400, 70)
    dark[0, :] = dark[59, :] = dark[60, :] = dark[119, :] = 1.0  # the tracks' borders
    for c in ruling:
        dark[1:59, c : c + 2] = 1.0  # 2-px depth lines across the ruled track
    image = rng.random((58, 1400)) < 0.35
    image[:, ruling[::2] + 2] = True  # rows of the image next to some of the ruling's lines, others anywhere
    image[:, rng.choice(1400, 12, replace=False)] = True
    dark[61:119] = np.maximum(dark[61:119], image)
    tracks = [(0.0, 60.0), (60.0, 120.0)]
    pooled, per_track = depth_lines(np.zeros_like(dark, np.uint8), tracks, dark)
    assert np.allclose(per_track[0], ruling + 0.5)
    assert per_track[1].size == 0  # the image's rows stand at any spacing: no ruling of the body
    assert lines_beside(30.0, tracks, per_track, pooled) is per_track[0]
    assert lines_beside(None, tracks, per_track, pooled) is pooled
