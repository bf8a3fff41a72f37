"""``welltrace eval-styles``: per-family figures, held-out marks from the model's metadata, and the
leave-one-family-out loop (a tiny recipe: it checks the protocol, not the accuracy)."""

import json

from core.cli.main import main
from core.model.model_io import read_model_metadata


def test_classical_scores_every_family_asked(capsys):
    assert main(["eval-styles", "--classical", "--families", "uniform,fax,log_decades", "--count", "1",
                 "--width", "400", "--height", "240", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["family"] for r in out["families"]] == ["uniform", "fax", "log_decades"]
    assert all(r["curves"] >= 1 and -1 <= r["median_r"] <= 1 for r in out["families"])
    assert all(r["excursions_per_1000"] >= 0 and 0 <= r["mean_null_pct"] <= 100 for r in out["families"])
    assert out["worst_family_median_r"] == min(r["median_r"] for r in out["families"])
    # resistivity curves on log decades are listed on their own, scored in decades
    logs = out["log_scale_curves"]
    assert "log_decades" in [r["family"] for r in logs] and all(r["curves"] >= 1 for r in logs)
    assert all(c["log_scale"] for r in logs for c in r["worst"])


def test_the_table_prints_null_and_excursions_beside_r(capsys):
    assert main(["eval-styles", "--classical", "--families", "log_decades", "--count", "1",
                 "--width", "400", "--height", "240"]) == 0
    out = capsys.readouterr().out
    assert "NULL" in out and "excursions" in out and "log-scale curves alone" in out


def test_overlays_draw_the_logs_of_each_family_s_worst_curves(tmp_path, capsys):
    import cv2

    assert main(["eval-styles", "--classical", "--families", "log_decades,dotted_fax", "--count", "2",
                 "--width", "400", "--height", "240", "--overlays", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    files = sorted(p.name for p in tmp_path.iterdir())
    # every family has its worst curve's log drawn; the worst log-scale and dotted ones where another log holds them
    for fam in ("log_decades", "dotted_fax"):
        assert f"{fam}_worst_curve.png" in files
    assert all(f.split("_worst_")[1] in ("curve.png", "log_scale.png", "dotted.png") for f in files)
    worst = next(r for r in out["families"] if r["family"] == "log_decades")["worst"][0]
    img = cv2.imread(str(tmp_path / "log_decades_worst_curve.png"))
    assert img is not None and img.shape[0] >= 240 and img.shape[1] >= 240
    # the trace and truth are drawn: coloured pixels over the grey print, and the header names the log's curves
    assert (img.max(2).astype(int) - img.min(2).astype(int) > 60).sum() > 100
    assert worst["log"].startswith("log_decades_")


def test_leave_one_out_trains_without_each_family_and_marks_what_it_saw(tmp_path, capsys):
    assert main(["eval-styles", "--leave-one-out", "--families", "uniform,fax", "--count", "1",
                 "--width", "400", "--height", "160", "--steps", "2", "--preset", "tiny", "--batch", "1",
                 "--crop", "256", "--stream-size", "400x160", "--out", str(tmp_path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["leave_one_out"]
    assert [r["left_out"] for r in rows] == ["uniform", "fax"]
    for r in rows:
        summary = json.loads(read_model_metadata(r["model"])["summary"])
        assert summary["styles"] == [f for f in ("uniform", "fax") if f != r["left_out"]]
        assert r["held_out"]["curves"] >= 1 and r["in_distribution"]["curves"] >= 1
    # the per-model view reads the same metadata: the family left out is marked held out
    assert main(["eval-styles", "--model", rows[0]["model"], "--families", "uniform,fax", "--count", "1",
                 "--width", "400", "--height", "160", "--json"]) == 0
    marks = {r["family"]: r["held_out"] for r in json.loads(capsys.readouterr().out)["families"]}
    assert marks == {"uniform": True, "fax": False}


def test_bad_usage_exits_2(capsys):
    assert main(["eval-styles", "--families", "nope"]) == 2
    assert main(["eval-styles", "--leave-one-out", "--families", "fax"]) == 2
    assert main(["eval-styles", "--leave-one-out", "--classical"]) == 2
    assert main(["eval-styles", "--count", "0"]) == 2
    assert main(["eval-styles", "--leave-one-out", "--families", "fax,uniform", "--overlays", "x"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 5 and "--overlays" in err[4]
    assert "unknown style family nope" in err[0] and "at least two families" in err[1]
    assert "--init" in err[2] and "--count" in err[3]
