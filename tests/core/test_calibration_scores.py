"""The archive labels and the proposal's scores against them (``core/evaluation/archive_labels.py``,
``core/evaluation/calibration_scores.py``): every label file checked, and a proposal scored as a user judges it."""

import json
from pathlib import Path

import pytest

from core.common.errors import InputError
from core.evaluation.archive_labels import load_folder, load_labels, load_split
from core.evaluation.calibration_scores import family_of, score_scan, summarise

LABELS = Path(__file__).resolve().parents[1] / "data" / "archive_labels"


def test_every_archive_label_file_is_valid_and_the_split_holds_every_well_once():
    labels = load_folder(LABELS)
    assert len(labels) >= 30
    split = load_split(LABELS)
    assert not set(split["develop"]) & set(split["held_out"])
    assert {lab.well for lab in labels} <= set(split["develop"]) | set(split["held_out"])
    for lab in labels:
        assert lab.sections, lab.scan
        for s in lab.sections:
            if s.depths:  # the two printed depths agree with the print's scale
                (r0, d0), (r1, d1) = s.depths
                assert s.px_per_unit is None or abs((r1 - r0) / (d1 - d0) - s.px_per_unit) < 0.02 * s.px_per_unit


def _labels(tmp_path, **section) -> object:
    data = {"version": 1, "scan": "x.tif", "well": "w", "size": [800, 10000], "kind": "open-hole",
            "depth_unit": "FT",
            "sections": [{"kind": "main", "rows": [1000, 9000], "depths": [[1100, 1000.0], [8100, 1700.0]],
                          "px_per_unit": 10.0, "tracks": [[20, 300], [400, 700]], **section}],
            "scale_boxes": [{"rows": [500, 990], "section": 0, "curves": [
                {"mnemonic": "GR", "printed": "Gamma Ray", "unit": "GAPI", "left": 0, "right": 150, "track": 0},
                {"mnemonic": "DT", "printed": "Delta T", "unit": "US/F", "left": 140, "right": 40, "track": 1}]}]}
    path = tmp_path / "x.labels.json"
    path.write_text(json.dumps(data))
    return load_labels(path)


def _proposal(tracks, picks, curves=()):
    return {"tracks": tracks, "sections": [{"kind": "main", "span": [990, 9010], "picks": picks}],
            "curves": list(curves)}


def test_a_proposal_is_right_where_a_user_would_call_it_right(tmp_path):
    lab = _labels(tmp_path)
    good = _proposal([[22, 298], [403, 701]], [[1100, 1000.0], [2100, 1100.0]],
                     [{"mnemonic": "SGR", "track": [22, 298], "scale": [0, 150]},
                      {"mnemonic": "DTCO", "track": [701, 403], "scale": [40, 140]}])  # reversed as printed
    sc = score_scan(lab, good, 3.0)
    assert sc.tracks_right and sc.sections[0].depths_right and (sc.curves_right, sc.curves_labelled) == (2, 2)
    # a border 6 px off, a depth 3 ft off at the bottom, a curve's ends swapped: each wrong on its own
    bad = _proposal([[22, 298], [406, 701]], [[1100, 1000.0], [8100, 1703.0]],
                    [{"mnemonic": "GR", "track": [22, 298], "scale": [150, 0]}])
    sc = score_scan(lab, bad, 40.0)
    assert not sc.tracks_right and sc.sections[0].depths_right is False and sc.curves_right == 0
    assert "off by +3.0" in sc.sections[0].depth_detail and sc.curve_misses == ["GR 0–150", "DT 140–40"]
    # a proposal cut at its time limit scores nothing and says why
    cut = score_scan(lab, None, 150.0, "cut at 150 s")
    assert not cut.tracks_right and cut.sections[0].depths_right is False and cut.error
    s = summarise([score_scan(lab, good, 3.0), sc, cut])
    assert (s.tracks_right, s.depths_right, s.sections_scored, s.curves_right, s.failed) == (1, 1, 3, 2, 1)


def test_families_join_the_names_printers_use_and_keep_gas_components_apart():
    assert family_of("GRGC") == family_of("SGR") == family_of("Gamma") == "gamma ray"
    assert family_of("ILD") == family_of("RES90") == "resistivity"
    assert family_of("C1") == "C1" and family_of("C2") == "C2"  # methane is not ethane, nor a caliper


def test_a_mistyped_label_is_refused_naming_the_field(tmp_path):
    with pytest.raises(InputError, match=r"sections\[0\]: the two depths must increase"):
        _labels(tmp_path, depths=[[8100, 1700.0], [1100, 1000.0]])
    with pytest.raises(InputError, match=r"the check depth 1350 at row 4100 is 1300.0 on the line"):
        _labels(tmp_path, check=[4100, 1350.0])


def test_eval_calibration_scores_a_real_scan_and_cuts_a_proposal_at_its_limit(shared_data, tmp_path, capsys):
    """The command as a benchmark runs it, on one archive scan whose tracks the proposal reads right today."""
    from core.cli.main import main

    archive = shared_data / "archive"
    name = "33-025-02079-0003"
    assert main(["eval-calibration", str(LABELS), str(archive), "--only", name, "--json", str(tmp_path / "s.json"),
                 "--overlay", str(tmp_path / "ov")]) == 0
    out = capsys.readouterr().out
    assert f"{name}" in out and "tracks right" in out and "held_out: 1 scans" in out
    [score] = json.loads((tmp_path / "s.json").read_text())
    assert score["scan"] == name and score["tracks_right"] and not score["error"] and score["seconds"] > 0
    assert (tmp_path / "ov" / f"{name}.png").stat().st_size > 10_000
    assert main(["eval-calibration", str(LABELS), str(archive), "--only", name, "--timeout", "0.5"]) == 0
    assert "cut at 0.5 s" in capsys.readouterr().out


def test_a_box_partway_down_is_answered_by_the_curve_s_scale_change(tmp_path):
    """A mud log's TG 0–100 from the top, a box at rows 5000–5060 printing 0–300 from there on: the proposal's TG
    with a scale change printed at row 5000 answers both boxes; without the change it answers the first only, and a
    change proposed after the box's rows answers neither of them right there."""
    lab = _labels(tmp_path)
    data = json.loads(lab.path.read_text())
    data["scale_boxes"].append({"rows": [5000, 5060], "section": 0, "applies_from_row": 5000, "curves": [
        {"mnemonic": "TG", "printed": "TG (units)", "unit": "units", "left": 0, "right": 300, "track": 0}]})
    data["scale_boxes"][0]["curves"].append(
        {"mnemonic": "TG", "printed": "TG (units)", "unit": "units", "left": 0, "right": 100, "track": 0})
    lab.path.write_text(json.dumps(data))
    lab = load_labels(lab.path)

    def tg(changes):
        return {"mnemonic": "TG", "track": [22, 298], "scale": [0, 100], "scale_changes": changes}

    other = [{"mnemonic": "GR", "track": [22, 298], "scale": [0, 150]},
             {"mnemonic": "DT", "track": [403, 701], "scale": [140, 40]}]
    right = score_scan(lab, _proposal([], [], [*other, tg([{"from_pixel": 5002.0, "scale": [0, 300]}])]), 1.0)
    assert (right.curves_right, right.curves_labelled) == (4, 4)
    unchanged = score_scan(lab, _proposal([], [], [*other, tg([])]), 1.0)
    assert unchanged.curves_right == 3 and unchanged.curve_misses == ["TG 0–300 (box at row 5000)"]
    late = score_scan(lab, _proposal([], [], [*other, tg([{"from_pixel": 5500.0, "scale": [0, 300]}])]), 1.0)
    assert late.curves_right == 3
