import json
import os
from pathlib import Path

import lasio
import numpy as np
import pytest
from PIL import Image

from core.cli.main import main
from core.common.errors import CalibrationError, InputError
from core.digitize.evidence.network import strips
from core.digitize.job.pipeline import digitize
from core.digitize.output.metrics import compare_curve
from core.digitize.output.values import trace_to_values
from core.digitize.page.frame import to_canonical
from core.digitize.rules.all_curves import trace_all
from core.io.calibration import Calibration
from core.synth import generate_log
from core.synth.shapes import default_library


def _oracle_values(log):
    """Trace the truth mask itself: tests tracing + calibration → values, free of any model."""
    canon = to_canonical(log.mask, log.calibration.depth_axis)
    ev = {k: (canon == k).astype(np.float32) for k in (1, 2, 3)}
    traces = trace_all(ev, log.calibration)
    return {spec.mnemonic: trace_to_values(tr, spec, log.calibration, log.depth)
            for tr, spec in zip(traces, log.calibration.curves)}


def _oracle_metrics(log):
    specs = {s.mnemonic: s for s in log.calibration.curves}
    return {name: compare_curve(name, log.depth, vals, log.truth[name], specs[name].value_range)
            for name, vals in _oracle_values(log).items()}


def test_tracing_the_true_mask_recovers_the_curves():
    """Tracing + calibration → values, from the true masks of 16 classic logs (seeds 0–15, both axes).
    Nearly every curve within r > 0.98 and 2.5 % RMSE; the few that are not are fast excursions of a
    dashed or dotted pen whose dash gaps fall on the swing (measured: 9 of 114 over seeds 0–39)."""
    ok, rs = [], []
    for seed in range(16):
        log = generate_log(seed, 1600, 384, "y" if seed % 2 else "x", style="clean")
        wrapped = {s.mnemonic for s in log.calibration.curves if s.wrap}  # their own test below
        for name, m in _oracle_metrics(log).items():
            if name not in wrapped:
                rs.append(m.r)
                ok.append(m.r > 0.98 and m.rmse_pct < 2.5)
                assert m.r > 0.85 and m.null_fraction < 0.05, (seed, name, m)  # never a curve lost
    assert len(rs) > 30 and np.median(rs) > 0.99 and np.mean(ok) > 0.85, (np.median(rs), np.mean(ok))


def test_wrapped_curves_are_unwrapped_from_the_true_mask():
    """Backup-scale curves, both sides, including fast excursions and dashed pens: every wrapped curve
    of 60 classic logs (seeds 0–59, 36 curves drawn from the bundled real shapes), with no stretch on the wrong
    scale: 29 of 36 with the trust rules (31 before them, at 59024be; see the assertion). Seeds 37 (RHOB) and 49
    (NPHI) were read on the right shape one whole scale off (r 0.98): the curve is on its backup scale at the top
    of the log and for most of it, and no print says which scale is the main one then; seeds 16 (GR), 29 (RHOB)
    and 13 (PEF) left for the backup scale where the print draws no crossing of the edge (see Known
    limitations)."""
    unwrapped, good = [], []
    for seed in range(60):
        log = generate_log(seed, 1600, 384, "y" if seed % 2 else "x", style="clean")
        wrapped = {s.mnemonic: s for s in log.calibration.curves if s.wrap}
        if not wrapped:
            continue
        values = _oracle_values(log)
        metrics = _oracle_metrics(log)
        for name, spec in wrapped.items():
            # the unwrapping itself: no stretch read on the wrong scale (off by about one whole scale range)
            off = np.abs(values[name] - log.truth[name]) > 0.5 * spec.value_range
            unwrapped.append(np.nanmean(off) < 0.01)
            good.append(metrics[name].r > 0.95)
    assert len(unwrapped) == 36
    # the bar issue 43's trust rules lowered: 31 of 36 at 59024be; 19 with the rules (2026-11-25), 25 once a return
    # to the main scale was also seen where its strokes run on to the edges, 29 once a crossing was seen where the
    # strokes either side run to the edges and one hidden under a depth line was judged by the ink beside the line
    # (2026-11-26). Widening the edge zone by a steep curve's own motion gave 23 but left the North Dakota GR on its
    # backup scale after its one excursion (341 API where the print reads 41): trust first. Held at what is
    # measured now (seed 24's DT stops 21 px short of the edge, seed 49's dotted SP misses two of 24 crossings),
    # so a change that loses one more fails here; the goal stays 31 (0.85)
    assert sum(unwrapped) >= 29, sum(unwrapped)
    assert default_library()  # real curve shapes ship with the project (resources/shapes) ...
    # ... so the accuracy holds too (the generator's random shapes alone swing faster than any log tool draws,
    # and a dotted pen over them traced at r ≈ 0.94 however it was unwrapped)
    assert np.mean(good) >= 0.85, np.mean(good)


def test_gaps_are_null_not_invented():
    log = generate_log(5, 1600, 384, "x", style="clean", curves=(1, 1))
    canon = to_canonical(log.mask, "x")
    ev = (canon > 0).astype(np.float32)
    ev[:, 600:900] = 0.0  # 300 px with no evidence
    spec = log.calibration.curves[0]
    tr = trace_all({0: ev}, log.calibration)[0]
    vals = trace_to_values(tr, spec, log.calibration, log.depth)
    px = log.calibration.pixel_at(log.depth)
    inside_gap = (px > 630) & (px < 870)
    assert np.all(np.isnan(vals[inside_gap]))
    assert np.isfinite(vals[(px < 500) & (px > 50)]).mean() > 0.9


def test_digitize_cli_writes_readable_las(tmp_path, capsys):
    main(["synth", str(tmp_path), "--count", "1", "--seed", "2", "--width", "1200", "--height", "256"])
    scan, calib = tmp_path / "synth_000.png", tmp_path / "synth_000.calib.json"
    out = tmp_path / "out.las"
    assert main(["digitize", str(scan), "--calib", str(calib), "--out", str(out), "--classical",
                 "--mask-out", str(tmp_path / "m.png")]) == 0
    cal = Calibration.load(calib)
    las = lasio.read(str(out))
    grid = cal.depth_grid(1200)
    assert las.well["STRT"].value == pytest.approx(grid[0]) and las.well["STOP"].value == pytest.approx(grid[-1])
    assert las.well["STEP"].value == cal.step and las.well["NULL"].value == -999.25
    assert las.curves[0].unit == cal.depth_unit
    n = len(cal.curves)  # each curve, then each curve's confidence beside it
    assert [c.mnemonic for c in las.curves[1:]] == [c.mnemonic for c in cal.curves] + \
        [f"{c.mnemonic}_CONF" for c in cal.curves]
    assert [c.unit for c in las.curves[1 : n + 1]] == [c.unit for c in cal.curves]
    assert "source scan: synth_000.png" in las.other and "classical" in las.other
    assert (tmp_path / "m.png").exists()
    capsys.readouterr()
    assert main(["eval", str(out), str(tmp_path / "synth_000.truth.las"), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["summary"]["curves"] == len(cal.curves)


def test_eval_of_two_digitised_logs_scores_the_curves_not_their_confidences(tmp_path, capsys):
    """`eval` of one digitised LAS against another (a repeat pass against the main, one model against another: on
    33-025-01231-0014) scored each curve's `_CONF` as a curve of the log, counted it in the median r and RMSE, and
    its long name and wide figures ran the columns together (`MINID_CONF    534 -0.0122-153.928`)."""
    main(["synth", str(tmp_path), "--count", "1", "--seed", "2", "--width", "1200", "--height", "256"])
    scan, calib = tmp_path / "synth_000.png", tmp_path / "synth_000.calib.json"
    a, b = tmp_path / "a.las", tmp_path / "b.las"
    assert main(["digitize", str(scan), "--calib", str(calib), "--out", str(a), "--classical"]) == 0
    assert main(["digitize", str(scan), "--calib", str(calib), "--out", str(b)]) == 0
    names = [c.mnemonic for c in Calibration.load(calib).curves]
    capsys.readouterr()
    assert main(["eval", str(a), str(b), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [c["mnemonic"] for c in res["curves"]] == names and res["summary"]["curves"] == len(names)
    assert main(["eval", str(a), str(b)]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in out[1 : 1 + len(names)]]
    assert [r[0] for r in rows] == names and all(len(r) == len(out[0].split()) for r in rows), out
    assert "_CONF" in out[-1] and "not scored" in out[-1]  # said, not dropped in silence


def test_one_scan_digitised_into_a_folder_takes_its_own_name_there(tmp_path, capsys):
    """`digitize SCAN --out results/` (a folder, as a folder run takes it) wrote a file named `results`, no .las,
    where the folder was meant; into an existing folder it was refused ("is a folder"). A folder given as --out
    for one scan takes NAME.digitized.las, as a folder run writes it."""
    main(["synth", str(tmp_path), "--count", "1", "--seed", "2", "--width", "900", "--height", "256"])
    scan = tmp_path / "synth_000.png"
    assert main(["digitize", str(scan), "--classical", "--out", str(tmp_path / "new") + "/"]) == 0
    assert (tmp_path / "new" / "synth_000.digitized.las").is_file()
    (tmp_path / "there").mkdir()
    assert main(["digitize", str(scan), "--classical", "--out", str(tmp_path / "there")]) == 0
    assert (tmp_path / "there" / "synth_000.digitized.las").is_file()
    assert "there/synth_000.digitized.las" in capsys.readouterr().out


def test_a_refused_run_leaves_no_output_folder(tmp_path, capsys):
    """`digitize SCAN --out DIR/` made DIR before the scan and its calibration were checked: a refused run (a
    calibration refused, a scan that cannot be read) left an empty folder behind. Nothing is created before the
    checks pass, for one scan or several (a folder run's --out)."""
    main(["synth", str(tmp_path), "--count", "1", "--seed", "2", "--width", "900", "--height", "256"])
    scan = tmp_path / "synth_000.png"
    calib = json.loads((tmp_path / "synth_000.calib.json").read_text())
    calib["curves"][0]["scale"] = [0, 1e308]
    bad_calib = tmp_path / "bad.calib.json"
    bad_calib.write_text(json.dumps(calib))
    broken = tmp_path / "broken.png"
    broken.write_bytes(scan.read_bytes()[:400])
    (tmp_path / "broken.calib.json").write_text((tmp_path / "synth_000.calib.json").read_text())
    for argv in (["digitize", str(scan), "--calib", str(bad_calib), "--out", str(tmp_path / "a" / "b") + "/"],
                 ["digitize", str(broken), "--out", str(tmp_path / "c") + "/"],
                 ["digitize", str(broken), "--qc", str(tmp_path / "d" / "qc.png"),
                  "--out", str(tmp_path / "e" / "x.las")],
                 ["digitize", str(scan), str(broken), "--classical", "--summary", str(scan),
                  "--out", str(tmp_path / "f")]):
        assert main(argv + ["--classical"] * ("--classical" not in argv)) == 2, argv
        capsys.readouterr()
    assert not [p.name for p in tmp_path.iterdir() if p.is_dir()]


def test_digitize_bad_inputs(tmp_path):
    log = generate_log(1, 800, 256, "x")
    with pytest.raises(InputError, match="blank"):
        digitize(np.full_like(log.image, 255), log.calibration)
    noisy = np.clip(np.random.default_rng(0).normal(235, 4, log.image.shape), 0, 255).astype(np.uint8)
    with pytest.raises(InputError, match="blank"):  # paper grain is no ink
        digitize(noisy, log.calibration)
    bad = Calibration.from_dict({**log.calibration.as_dict(),
                                 "curves": [{**log.calibration.curves[0].as_dict(), "track": [10, 900]}]})
    with pytest.raises(CalibrationError, match="outside"):
        digitize(log.image, bad)


def test_a_grid_darker_than_half_the_page_is_no_blank_scan():
    """A print whose dense dark grid covers most of the page (eval-styles' dark_grid_09) has ink darker than its
    paper even where the grid's grey is the median pixel: it is traced, not refused as blank."""
    log = generate_log(1, 800, 256, "x")
    img = np.maximum(log.image, 30)  # the pens' ink at 30, a grid of 60 over two thirds of the page
    grid = np.zeros(img.shape, bool)
    grid[:, ::3] = grid[::3, :] = True
    img[grid & (img > 60)] = 60
    assert np.median(img) == 60
    res = digitize(img, log.calibration)
    assert set(res.values) == {c.mnemonic for c in log.calibration.curves}


def test_strips_cover_the_log_with_overlap():
    parts = strips(1100, 384, 128)
    assert parts[0][0] == 0 and parts[-1][1] == 1100
    assert all(b - a == 384 for a, b in parts)
    assert all(parts[i][1] - parts[i + 1][0] >= 128 for i in range(len(parts) - 1))
    assert strips(300, 384, 128) == [(0, 300)]


def test_offset_is_reported_not_applied():
    depth = np.arange(500) * 0.5
    truth = np.sin(depth / 3.0) * 50 + 50
    pred = np.roll(truth, 2)
    m = compare_curve("GR", depth, pred, truth, 100.0)
    assert m.best_offset == 2 and m.best_offset_r > m.r


BUNDLED = __import__("pathlib").Path(__file__).resolve().parents[4] / "resources" / "models" / "demo.safetensors"


@pytest.mark.skipif(not BUNDLED.exists(), reason="no bundled demo model")
def test_tiled_inference_leaves_no_seam_with_the_trained_model():
    from core.digitize.evidence.network import predict_canonical
    from core.model.model_io import load_model
    from core.model.precision import resolve

    model, _ = load_model(BUNDLED)
    img = generate_log(77, 2400, 384, "x").image
    p = resolve("fp32", "cpu")
    full = predict_canonical(model, img, p)
    tiled = predict_canonical(model, img, p, tile=1024, overlap=256)
    m_full, m_tiled = full.argmax(0) > 0, tiled.argmax(0) > 0
    agree = 2 * (m_full & m_tiled).sum() / max(1, m_full.sum() + m_tiled.sum())
    # the curve masks agree (Dice): GroupNorm's statistics are a tile's own, so where a tile holds little ink
    # its normalisation differs from the whole log's; measured 0.953–0.999 over seeds 77–82 (bundled shapes)
    assert agree > 0.94, agree
    # and no seam: disagreement is not concentrated at the strip boundaries
    seams = [a for a, _ in strips(2400, 1024, 256)[1:]]
    near = np.zeros(2400, bool)
    for s in seams:
        near[max(0, s - 8): s + 8] = True
    diff = (m_full != m_tiled).mean(0)
    assert diff[near].mean() < 5 * max(diff[~near].mean(), 1e-4)


def test_viterbi_distance_transform_is_the_exact_l1_minimum():
    """The Viterbi inner step against brute force: min_j cost[j] + λ|i − j| and an argmin attaining it."""
    from core.digitize.trace.path_search import _dt_l1

    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 64, 301):
        for cost in (rng.random(n) * 5, np.round(rng.random(n), 1), np.zeros(n)):
            val, arg = _dt_l1(cost, 0.04)
            i = np.arange(n)
            brute = cost[None, :] + 0.04 * np.abs(i[:, None] - i[None, :])
            np.testing.assert_allclose(val, brute.min(1), atol=1e-12)
            np.testing.assert_allclose(cost[arg] + 0.04 * np.abs(arg - i), val, atol=1e-12)
    flat = np.zeros(5)
    assert list(_dt_l1(flat, 0.04)[1]) == [0, 1, 2, 3, 4]  # on a tie a row stays where it is


def _two_line_calibration():
    curve = {"unit": "API", "description": "", "class": 1, "track": [0.0, 99.0], "scale": [0.0, 100.0],
             "log": False, "wrap": False}
    return Calibration.from_dict({"version": 1, "depth_axis": "x", "depth_unit": "FT",
                                  "depth_picks": [[0.0, 1000.0], [199.0, 1099.5]], "step": 0.5,
                                  "curves": [dict(curve, mnemonic="A"), dict(curve, mnemonic="B")]})


def test_two_curves_of_one_style_in_one_track_follow_lines_of_their_own():
    """A multiclass model gives two solid curves of one track one map: the second is traced with the
    first one's stroke explained away, so it follows the other line instead of duplicating the first."""
    ev = np.zeros((100, 200), np.float32)
    cols = np.arange(200)
    strong = (30 + 5 * np.sin(cols / 15)).round().astype(int)
    weak = (70 + 5 * np.cos(cols / 20)).round().astype(int)
    for rows, p in ((strong, 0.95), (weak, 0.7)):
        for d in (-1, 0, 1):  # a three-pixel stroke
            ev[rows + d, cols] = p
    a, b = trace_all({1: ev, 2: np.zeros_like(ev), 3: np.zeros_like(ev)}, _two_line_calibration())
    assert np.nanmax(np.abs(a.position - strong)) < 1.0
    assert np.nanmax(np.abs(b.position - weak)) < 1.0 and np.isfinite(b.position).all()
    # class-blind evidence (classical ink, a binary model) cannot say which line is which: both take the strongest
    a0, b0 = trace_all({0: ev}, _two_line_calibration())
    np.testing.assert_allclose(a0.position, b0.position)


def _kgs_window(kgs_scan, top: int, bottom: int):
    """Rows top..bottom of the real KGS sonic scan with the hand-made calibration moved along."""
    from core.io.scan import load_scan

    data = json.loads((Path(__file__).resolve().parents[3] / "data" / "kgs_273101_bhc_sonic.calib.json").read_text())
    data["depth_picks"] = [[px - top, d] for px, d in data["depth_picks"]]
    return load_scan(kgs_scan).image[top:bottom], Calibration.from_dict(data)


def _on_ink_share(image, calib, result, mnemonic, reach=3):
    """Share of a curve's depth samples whose traced position lies on dark ink in the scan."""
    spec = next(s for s in calib.curves if s.mnemonic == mnemonic)
    pos, _ = spec.position_of(result.values[mnemonic])
    rows = calib.pixel_at(result.depth)
    ok = np.isfinite(pos) & (rows >= 0) & (rows < image.shape[0])
    r, x = np.rint(rows[ok]).astype(int), np.rint(pos[ok]).astype(int)
    near = np.stack([image[r, np.clip(x + d, 0, image.shape[1] - 1)] for d in range(-reach, reach + 1)])
    return float((near.min(0) < 128).mean())


def _draw_traces(image, calib, result, path):
    """The traced curves in their calibration colours over the scan (BGR PNG)."""
    import cv2

    out = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    rows = calib.pixel_at(result.depth)
    for spec in calib.curves:
        pos, _ = spec.position_of(result.values[spec.mnemonic])
        rgb = tuple(int(spec.plot_colour[i:i + 2], 16) for i in (1, 3, 5))
        pts = np.stack([pos, rows], 1)
        ok = np.isfinite(pts).all(1)
        for run in np.split(np.arange(len(pts)), np.flatnonzero(np.diff(ok.astype(int))) + 1):
            if ok[run[0]] and run.size > 1:
                cv2.polylines(out, [np.int32(pts[run])], False, rgb[::-1], 3)
    cv2.imwrite(str(path), out)


@pytest.mark.skipif(not BUNDLED.exists(), reason="no bundled demo model")
def test_bundled_model_traces_gamma_ray_and_delta_t_on_the_real_kgs_scan(kgs_scan, shots_dir):
    """795–955 ft of the real 1-bit KGS sonic log, digitised with the bundled model (trained only on
    synthetic logs): GR and DT are followed along their own lines, GR on its main scale, and DT is not
    captured by the near-straight line-tension curve at the right edge of its track (what the classical
    tracer does). With WELLTRACE_SHOTS set, the traced curves over the scan go to kgs_model_traced.png."""
    from core.model.model_io import load_model

    image, calib = _kgs_window(kgs_scan, 8100, 9720)
    model, _ = load_model(BUNDLED)
    result = digitize(image, calib, model=model)
    if shots_dir:
        _draw_traces(image, calib, result, shots_dir / "kgs_model_traced.png")
    inside = (result.depth > 800) & (result.depth < 955)
    for name in ("GR", "DT"):
        assert np.isfinite(result.values[name][inside]).mean() > 0.9, name
        assert _on_ink_share(image, calib, result, name) > 0.85, name
    # one backup scale means two levels: GR stays on its main 0-150 scale but for short excursions
    assert 40 < np.nanmedian(result.values["GR"][inside]) < 150
    dt = result.values["DT"][inside]
    assert 60 < np.nanmedian(dt) < 120  # a sonic log's delta-t, not the 46 us/ft the tension line reads as
    assert np.nanmax(dt) <= 140 and np.nanmin(dt) >= 40


def test_a_curve_with_one_backup_scale_lives_on_two_levels():
    """A misread crossing (a second wrap upwards while already on the backup) is dropped, not added up:
    otherwise it would shift the rest of the log by one whole scale."""
    from core.digitize.trace.wraps import two_level_wraps

    steps = np.zeros(100, np.int64)
    steps[[10, 20, 30, 40, 50]] = [1, -1, 1, 1, -1]  # the up at 40 is a misread
    wraps, unsure = two_level_wraps(steps, "high")
    assert unsure[30:40].all() and not unsure[:30].any()  # between the last crossing kept and the misread
    assert set(np.unique(wraps)) == {0, 1}
    assert list(wraps[[5, 15, 25, 35, 45, 55]]) == [0, 1, 0, 1, 1, 0]
    # a log that starts on the backup scale: its first crossing is downwards
    steps = np.zeros(60, np.int64)
    steps[[10, 30, 40]] = [-1, 1, -1]
    assert list(two_level_wraps(steps, "high")[0][[5, 20, 35, 50]]) == [1, 0, 1, 0]
    assert list(two_level_wraps(-steps, "low")[0][[5, 20, 35, 50]]) == [-1, 0, -1, 0]
    assert not two_level_wraps(steps, "high")[1].any()  # a third of the log on the backup: excursions
    # read on the backup scale over most of the log, one short visit to the main scale: a crossing was likely
    # missed, and the backup stretches no crossing pins (open at the log's start or end) are uncertain
    steps = np.zeros(100, np.int64)
    steps[[20, 26]] = [1, -1]
    wraps, unsure = two_level_wraps(steps, "low")
    assert list(wraps[[10, 22, 50]]) == [-1, 0, -1]
    assert unsure[:20].all() and unsure[26:].all() and not unsure[20:26].any()


def test_a_track_narrower_than_40_px_is_refused_by_name(tmp_path, capsys):
    log = generate_log(3, 800, 256, "x", style="clean")
    calib = Calibration.from_dict({**log.calibration.as_dict(),
                                   "curves": [{**log.calibration.curves[0].as_dict(), "track": [100, 130]}]})
    with pytest.raises(InputError, match=r"curves\[0\].*30 px wide.*at least 40"):
        digitize(log.image, calib)
    from core.io.scan import save_gray_png

    save_gray_png(tmp_path / "s.png", log.image)
    calib.save(tmp_path / "s.calib.json")
    out = tmp_path / "s.las"
    assert main(["digitize", str(tmp_path / "s.png"), "--calib", str(tmp_path / "s.calib.json"),
                 "--out", str(out), "--classical"]) == 2
    assert "at least 40 px" in capsys.readouterr().err and not out.exists()


def test_one_scan_takes_its_calibration_beside_it_and_the_bundled_model(tmp_path, capsys):
    """After `calibrate --propose` has written NAME.calib.json beside the scan, `digitize SCAN` reads it with the
    bundled model (the app's reader) into NAME.digitized.las, as a folder run names them; without a calibration
    beside the scan it says how to make one and writes nothing."""
    from core.io.scan import save_gray_png

    log = generate_log(5, 800, 256, "y", style="clean")
    save_gray_png(tmp_path / "s.png", log.image)
    assert main(["digitize", str(tmp_path / "s.png")]) == 2
    assert "no calibration beside the scan" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [tmp_path / "s.png"]
    log.calibration.save(tmp_path / "s.calib.json")
    assert main(["digitize", str(tmp_path / "s.png")]) == 0
    las = lasio.read(str(tmp_path / "s.digitized.las"))
    assert "model: demo.safetensors" in str(las.other), las.other
    assert [c.mnemonic for c in las.curves][1:1 + len(log.calibration.curves)] == [
        c.mnemonic for c in log.calibration.curves]


def test_from_mask_follows_the_painted_mask(tmp_path, capsys):
    from core.io.scan import save_gray_png

    log = generate_log(21, 1600, 384, "y", style="clean")
    save_gray_png(tmp_path / "s.png", log.image)
    save_gray_png(tmp_path / "s.mask.png", log.mask)
    log.calibration.save(tmp_path / "s.calib.json")
    out = tmp_path / "s.las"
    assert main(["digitize", str(tmp_path / "s.png"), "--calib", str(tmp_path / "s.calib.json"),
                 "--from-mask", str(tmp_path / "s.mask.png"), "--out", str(out)]) == 0
    las = lasio.read(str(out))
    assert "mask s.mask.png" in str(las.other)
    rs = []
    for spec in log.calibration.curves:
        m = compare_curve(spec.mnemonic, log.depth, las[spec.mnemonic], log.truth[spec.mnemonic], spec.value_range)
        rs.append(m.r)
    assert np.median(rs) > 0.97, rs
    # bad masks: another size, a class outside 0..3 -> exit 2, the LAS untouched; an empty mask -> NULLs
    before = out.read_bytes()
    save_gray_png(tmp_path / "small.mask.png", log.mask[:100])
    bad = log.mask.copy()
    bad[5, 5] = 7
    save_gray_png(tmp_path / "bad.mask.png", bad)
    for m, why in (("small.mask.png", "but its scan is"), ("bad.mask.png", "classes run 0..3")):
        assert main(["digitize", str(tmp_path / "s.png"), "--calib", str(tmp_path / "s.calib.json"),
                     "--from-mask", str(tmp_path / m), "--out", str(out)]) == 2
        assert why in capsys.readouterr().err and out.read_bytes() == before
    save_gray_png(tmp_path / "empty.mask.png", np.zeros_like(log.mask))
    empty = tmp_path / "empty.las"
    assert main(["digitize", str(tmp_path / "s.png"), "--calib", str(tmp_path / "s.calib.json"),
                 "--from-mask", str(tmp_path / "empty.mask.png"), "--out", str(empty)]) == 0
    assert "the mask is empty" in capsys.readouterr().err
    las = lasio.read(str(empty))
    assert all(np.isnan(las[s.mnemonic]).all() for s in log.calibration.curves)


def test_every_subcommand_prints_its_help(capsys):
    """``--help`` of each subcommand prints and exits 0 (an unescaped % in a help text made one crash)."""
    import argparse

    from core.cli.main import build_parser

    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert len(subs.choices) >= 10
    for name in subs.choices:
        with pytest.raises(SystemExit) as done:
            main([name, "--help"])
        assert done.value.code == 0, name
        assert "usage:" in capsys.readouterr().out
    # and every option of digitize says what it is for
    undocumented = [a.dest for a in subs.choices["digitize"]._actions if not a.help]
    assert undocumented == [], undocumented


def test_digitize_refuses_a_calibration_without_curves_and_an_unwritable_output_up_front(tmp_path, capsys):
    log = generate_log(3, 600, 256, "x")
    Image.fromarray(log.image).save(tmp_path / "s.png")
    empty = {**log.calibration.as_dict(), "curves": []}
    (tmp_path / "empty.calib.json").write_text(json.dumps(empty))
    assert main(["digitize", str(tmp_path / "s.png"), "--calib", str(tmp_path / "empty.calib.json"),
                 "--out", str(tmp_path / "o.las"), "--classical"]) == 2
    assert "add at least one curve" in capsys.readouterr().err and not (tmp_path / "o.las").exists()
    log.calibration.save(tmp_path / "s.calib.json")
    args = ["digitize", str(tmp_path / "s.png"), "--calib", str(tmp_path / "s.calib.json"), "--classical"]
    assert main(args + ["--out", str(tmp_path / "o.las"), "--mask-out", str(tmp_path)]) == 2  # a folder
    assert "cannot be written" in capsys.readouterr().err and not (tmp_path / "o.las").exists()
    if Path("/proc").is_dir():  # no one, root included, creates files there
        assert main(args + ["--out", str(tmp_path / "o.las"), "--mask-out", "/proc/m.png"]) == 2
        err = capsys.readouterr().err
        assert "/proc/m.png: cannot be written" in err and "Traceback" not in err
        assert not (tmp_path / "o.las").exists()  # refused before any work, nothing half done
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o500)
    try:
        if not os.access(tmp_path / "ro", os.W_OK):  # root may write anywhere: then this part says nothing
            assert main(args + ["--out", str(tmp_path / "ro" / "o.las")]) == 2
            assert "ro/o.las: cannot be written" in capsys.readouterr().err
    finally:
        (tmp_path / "ro").chmod(0o700)


def test_a_read_by_a_network_the_calibrator_was_not_fitted_on_says_so(tmp_path):
    """A model trained or adapted here is not the network the shipped calibrator was fitted on: its read warns and
    its LAS header names the confidence as the fit applied to another network, where the bundled model's names
    a calibrated probability."""
    from core.model.model_io import load_model
    from tests.model_copies import nudged_bundled_model

    bundled, _ = load_model(BUNDLED)
    other, _ = load_model(nudged_bundled_model(tmp_path / "adapted.safetensors"))
    log = generate_log(77, 1200, 384, "x")
    mine = digitize(log.image, log.calibration, model=bundled)
    theirs = digitize(log.image, log.calibration, model=other)
    assert mine.confidence_basis.startswith("probability within 5 % of the scale")
    assert not any(w.startswith("confidence:") for w in mine.warnings)
    assert "applied to another network" in theirs.confidence_basis and other.file_digest in theirs.confidence_basis
    assert any(w.startswith("confidence:") and other.file_digest in w for w in theirs.warnings)
