"""Calibration proposed from the scan: track bounds from its grid, depth picks from its printed depths."""

import json

import cv2
import numpy as np
import pytest

from core.cli.main import main
from core.digitize.calibration_proposal import (
    DepthNumber,
    _monotonic,
    fit_numbers,
    ocr_available,
    propose,
    propose_tracks,
)
from core.io.calibration import Calibration

needs_ocr = pytest.mark.skipif(ocr_available() is not None, reason="Tesseract is not installed")

LENGTH = 3000  # along depth
PX_PER_FT = 10.0
TOP = 1000.0


def _page(numbers: bool = True, abut: bool = False) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """A tall paper log: a track of 10 divisions, a depth column with a depth printed every 50 ft on its heavy
    line, and a second track (or, with ``abut``, two tracks of different pitch sharing a border)."""
    h, w = LENGTH, 700
    img = np.full((h, w), 245, np.uint8)
    tracks = [(20.0, 270.0), (400.0, 680.0)] if not abut else [(20.0, 270.0), (400.0, 520.0), (520.0, 680.0)]
    for lo, hi in tracks:
        n = 10 if hi - lo > 200 else (4 if lo == 400 else 8)
        for k in range(1, n):
            x = int(round(lo + k * (hi - lo) / n))
            cv2.line(img, (x, 0), (x, h - 1), 150, 1)
        for x in (lo, hi):
            cv2.line(img, (int(x), 0), (int(x), h - 1), 20, 3)
    for d in np.arange(TOP, TOP + LENGTH / PX_PER_FT, 10.0):
        y = int(round((d - TOP) * PX_PER_FT))
        for lo, hi in tracks:
            cv2.line(img, (int(lo), y), (int(hi), y), 20 if d % 50 == 0 else 150, 1)
        if numbers and d % 50 == 0 and 30 < y < h - 30:
            text = f"{d:.0f}"
            (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.9, 2)
            cv2.putText(img, text, (335 - tw // 2, y + th // 2), cv2.FONT_HERSHEY_SIMPLEX, 0.9, 20, 2, cv2.LINE_AA)
    # a curve in each track, so the tracks carry ink and the depth column only its numbers
    rows = np.arange(h)
    for lo, hi in tracks:
        x = lo + (hi - lo) * (0.5 + 0.3 * np.sin(rows / (80 + lo / 10)))
        pts = np.stack([x, rows], 1).round().astype(np.int32)
        cv2.polylines(img, [pts], False, 10, 2)
    return img, tracks


def test_tracks_are_the_runs_of_lines_between_depth_column_and_margins():
    img, truth = _page()
    tracks, separators = propose_tracks(img.T)
    assert len(tracks) == 2
    for (a, b), (x, y) in zip(truth, tracks):
        assert abs(a - x) <= 2 and abs(b - y) <= 2
    assert any(abs(a - 270) <= 2 and abs(b - 400) <= 2 for a, b in separators)  # the depth column


def test_two_tracks_sharing_a_border_are_split_where_their_grid_pitch_changes():
    img, truth = _page(abut=True)
    tracks, _ = propose_tracks(img.T)
    assert len(tracks) == 3
    for (a, b), (x, y) in zip(truth, tracks):
        assert abs(a - x) <= 2 and abs(b - y) <= 2


def test_numbers_that_contradict_the_others_are_rejected():
    numbers = [DepthNumber(100 + 500 * k, 250.0 + 50 * k, "") for k in range(6)]
    numbers += [DepthNumber(1700, 4100.0, "4100"), DepthNumber(2900, 300.0, "300"), DepthNumber(60, 409.0, "409")]
    rms = fit_numbers(numbers)
    assert rms is not None and rms < 0.5
    assert [n.kept for n in numbers] == [True] * 6 + [False] * 3
    assert _monotonic([(10, 5.0), (20, 6.0), (30, 5.5), (40, 7.0)]) == [(10, 5.0), (20, 6.0), (40, 7.0)]


@needs_ocr
def test_printed_depths_become_depth_picks():
    img, _ = _page()
    prop = propose(img)
    assert len(prop.picks) >= 4, prop.messages
    for px, depth in prop.picks:
        assert abs((TOP + px / PX_PER_FT) - depth) < 0.3  # each number placed on its depth line
    cal = Calibration.from_dict(prop.calibration_dict())
    rows = np.arange(LENGTH, dtype=float)
    assert np.sqrt(np.mean((cal.depth_at(rows) - (TOP + rows / PX_PER_FT)) ** 2)) < 0.3


@needs_ocr
def test_a_scan_without_printed_depths_says_so_and_proposes_no_picks(tmp_path):
    img, _ = _page(numbers=False)
    prop = propose(img)
    assert not prop.picks and prop.calibration_dict() is None
    assert any("by hand" in m for m in prop.messages)
    path = tmp_path / "blank.png"
    cv2.imwrite(str(path), img)
    assert main(["calibrate", str(path), "--propose"]) == 2
    assert not (tmp_path / "blank.calib.json").exists()


def test_without_tesseract_the_tracks_are_proposed_and_the_message_says_how_to_install(monkeypatch):
    import core.digitize.calibration_proposal as cp

    monkeypatch.setattr(cp, "ocr_available", lambda: "reading printed depths needs … apt install tesseract-ocr")
    img, _ = _page()
    prop = cp.propose(img)
    assert len(prop.tracks) == 2 and not prop.picks
    assert any("tesseract-ocr" in m for m in prop.messages)


@needs_ocr
def test_cli_writes_a_draft_and_never_overwrites_without_force(tmp_path, capsys):
    img, _ = _page()
    path = tmp_path / "well.png"
    cv2.imwrite(str(path), img)
    assert main(["calibrate", str(path), "--propose", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    draft = json.loads((tmp_path / "well.calib.json").read_text())
    assert draft["curves"] == [] and len(draft["proposed_tracks"]) == 2 and out["written"]
    Calibration.load(tmp_path / "well.calib.json")  # a valid calibration
    (tmp_path / "well.calib.json").write_text('{"mine": true}')
    assert main(["calibrate", str(path), "--propose"]) == 2
    assert json.loads((tmp_path / "well.calib.json").read_text()) == {"mine": True}
    assert "--force" in capsys.readouterr().err


@needs_ocr
def test_kgs_scan_proposal_matches_the_hand_calibration(kgs_scan):
    """The real 1-bit KGS log: depths within 1 ft RMS of the hand calibration over the whole log, tracks within 5 px."""
    from pathlib import Path

    from core.io.scan import load_scan

    img = load_scan(kgs_scan).image
    prop = propose(img)
    hand = Calibration.load(Path(__file__).resolve().parents[1] / "data" / "kgs_273101_bhc_sonic.calib.json")
    mine = Calibration.from_dict(prop.calibration_dict())
    rows = np.arange(img.shape[0], dtype=float)
    assert np.sqrt(np.mean((mine.depth_at(rows) - hand.depth_at(rows)) ** 2)) < 1.0
    hand_tracks = sorted({(min(c.track), max(c.track)) for c in hand.curves})
    for a, b in hand_tracks:
        assert any(abs(a - x) <= 5 and abs(b - y) <= 5 for x, y in prop.tracks), (hand_tracks, prop.tracks)
    # two sections of log body: the main pass and the repeat pass with its own printed depths; header and tail
    # (the first ~2,200 and the last ~2,100 rows) are in neither
    kinds = [(s.kind, s.start, s.stop) for s in prop.sections if s.picks]
    assert [k for k, _, _ in kinds] == ["main", "repeat"], kinds
    (_, a0, b0), (_, a1, b1) = kinds
    assert 2000 < a0 < 2575 and 10695 < b0 < 12250 and b0 < a1 < 12631 and 14661 < b1 < 15800
    main, repeat = prop.sections[0], prop.sections[1]
    assert [d for _, d in repeat.picks] == [850.0, 900.0, 950.0, 1050.0]  # printed again, read as its own
    for sec in (main, repeat):  # every pick on its depth line: 10.15 px per ft, the lines 50 ft apart
        px = np.array([p for p, _ in sec.picks])
        d = np.array([v for _, v in sec.picks])
        fit = np.polyfit(px, d, 1)
        assert np.abs(np.polyval(fit, px) - d).max() < 2.0
    draft = prop.calibration_dict()
    assert [s["kind"] for s in draft["sections"]] == ["main", "repeat"]
    assert min(p for p, _ in draft["depth_picks"]) >= 2575 - 1  # no pick extrapolated over the header


@needs_ocr
def test_colour_log_depths_are_read_and_placed(shared_data):
    """iqa_33-023-01146-0006.tif prints 8240, 8250, … in its depth column, every 10 ft at 200 dpi (100 px)."""
    from core.io.scan import load_scan

    prop = propose(load_scan(shared_data / "scans" / "iqa_33-023-01146-0006.tif").image)
    kept = {n.value: n.pixel for n in prop.numbers if n.kept}
    assert 8240.0 in kept and 8250.0 in kept
    assert abs((kept[8250.0] - kept[8240.0]) - 100.0) < 3.0
    assert len(prop.picks) >= 20
