"""``welltrace digitize``: one scan into its LAS files (and QC picture), or a folder of scans in worker
processes or on a Dask cluster, each beside its calibration."""

from __future__ import annotations

import os
import sys
from contextlib import closing
from pathlib import Path

from core.common.errors import InputError
from core.model.precision_modes import MODES

from ..options import (
    MIN_TILE_PX,
    add_device,
    header_text,
    positive_number,
    scheduler_address,
    tile_px,
    whole_number,
)

NAME = "digitize"


def register(sub) -> None:
    d = sub.add_parser(NAME, help="trace a scan's curves and write them as LAS (or a folder of scans)")
    d.add_argument("scan", nargs="+", help="the scanned log (PNG, JPEG, BMP or TIFF); several scans or a folder "
                   "digitise each with its NAME.calib.json into NAME.digitized.las and its QC picture")
    d.add_argument("--calib", help="its calibration (depth picks, curves, sections; default: NAME.calib.json beside "
                   "the scan); one scan only")
    d.add_argument("--out", help="the LAS file to write (default: NAME.digitized.las beside the scan; a folder, "
                   "existing or written with a final /, takes NAME.digitized.las; a repeat pass "
                   "goes beside it as OUT.repeat.las); with several scans, a folder for their LAS files (default: "
                   "beside each scan)")
    d.add_argument("--model", help="a trained model (.safetensors; default: the bundled one, "
                   "resources/models/demo.safetensors, unless --classical or --from-mask)")
    d.add_argument("--classical", action="store_true", help="the classical tracer (no model)")
    d.add_argument("--from-mask", metavar="MASK", help="trace this class mask (e.g. a hand-corrected label)")
    d.add_argument("--mask-out", metavar="PNG", help="also write the class mask the curves were traced from (the "
                   "scan's size; 0 background, 1 solid, 2 dashed, 3 dotted)")
    d.add_argument("--precision", default="model", choices=("model", *MODES),
                   help="inference precision (default: the one the model was trained in; fp32 for an fp16 model "
                   "on a CPU)")
    add_device(d)
    d.add_argument("--tile", metavar="PX", type=tile_px, help="window length along depth for the network (default "
                   f"1024, the training crop; shortened where --max-memory requires; at least {MIN_TILE_PX})")
    d.add_argument("--max-memory", type=positive_number, metavar="GIB",
                   help="memory ceiling for reading the scan (default: 90%% of the memory available now)")
    d.add_argument("--whole-picture", action="store_true",
                   help="read the whole scan in one forward (memory grows with its area: ~0.6 GiB a megapixel); "
                   "to compare against the windowed maps")
    d.add_argument("--reference", action="store_true",
                   help="read the scan as releases before 0.2 did (every row, PyTorch's default layout): slower, to "
                   "compare the fast path's LAS against")
    d.add_argument("--qc", metavar="PNG", help="also draw the LAS values back over the scan, page by page "
                   "(NAME-p01.png… when the log is longer than a page): the picture to check the LAS by")
    d.add_argument("--accept-proposed", action="store_true", help="digitise the curves `calibrate --propose` read "
                   "from the scale box as they were read (refused until confirmed otherwise: a misread scale is a "
                   "whole curve wrong)")
    d.add_argument("--well", type=header_text, help="well name for the LAS header")
    d.add_argument("--section", type=whole_number(1), metavar="N",
                   help="trace only the calibration's section N (1-based) and "
                   "write it to --out (default: every section: the main pass to OUT.las, a repeat pass to "
                   "OUT.repeat.las, any other to OUT.sectionN.las)")
    many = d.add_argument_group("several scans or a folder")
    many.add_argument("--jobs", type=whole_number(1), metavar="N",
                      help="worker processes (default 1); the threads are shared "
                      "among them")
    many.add_argument("--threads", type=whole_number(1), metavar="N", help="threads in all (default: every core); with "
                      "--scheduler, threads per task (default: the threads its Dask worker was started with, --nthreads)")
    many.add_argument("--force", action="store_true", help="digitise again scans whose LAS is newer than the scan, "
                      "its calibration and the model (skipped otherwise)")
    many.add_argument("--no-qc", action="store_true", help="write no QC pictures")
    many.add_argument("--summary", metavar="CSV", help="the summary table (default: digitize-summary.csv in --out "
                      "or beside the first scan)")
    many.add_argument("--scheduler", metavar="ADDRESS", type=scheduler_address, help="a Dask distributed scheduler (tcp://HOST:8786) whose "
                      "workers digitise one scan a task; they must see the scans' paths (pip install "
                      "'welltrace[cluster]')")
    d.set_defaults(func=run)


def run(args) -> int:
    if not (args.model or args.classical or args.from_mask):  # the reader the app uses too
        from core.model.bundled import BUNDLED_MODEL

        args.model = str(BUNDLED_MODEL)
    if len(args.scan) > 1 or Path(args.scan[0]).is_dir():
        return _digitize_many(args)
    if not Path(args.scan[0]).exists():
        raise InputError(args.scan[0], "no such scan or folder")
    # the names a folder run and the app use, beside the scan: `calibrate --propose` has just written NAME.calib.json
    from core.io.file_names import calib_path_for, digitized_las_for

    if not args.calib:
        args.calib = str(calib_path_for(args.scan[0]))
        if not Path(args.calib).exists():
            raise InputError(args.calib, "no calibration beside the scan: propose one (welltrace calibrate --propose "
                             "SCAN), make one in the app, or give --calib")
    if args.out and (Path(args.out).is_dir() or args.out.endswith(("/", os.sep))):
        # a folder, as a folder run takes --out: NAME.digitized.las there ("--out results/" wrote a file "results");
        # made by the LAS's write, once the scan, calibration and outputs are checked
        args.out = str(digitized_las_for(Path(args.scan[0]), Path(args.out)))
    args.out = args.out or str(digitized_las_for(Path(args.scan[0])))
    for flag, value in (("--jobs", args.jobs), ("--scheduler", args.scheduler)):
        if value:
            raise InputError(None, f"{flag} is for a folder or several scans")
    args.scan = args.scan[0]
    return _digitize_one(args)


def _digitize_many(args) -> int:
    """Several scans or folders: each with its calibration beside it, in worker processes or on a Dask cluster;
    up-to-date LAS files skipped, a bad scan reported and the rest digitised, a summary table written."""
    import time

    from core.common.atomic import require_writable
    from core.common.output_paths import refuse_clobbering
    from core.common.progress import progress_bar
    from core.digitize.job.dask_cluster import run_cluster
    from core.digitize.job.folder import (
        SUMMARY_NAME,
        earlier_summary,
        jobs_for,
        pictures_skipped,
        scans_in,
        skipped_outcome,
        up_to_date,
        write_summary,
        written_since,
    )
    from core.digitize.job.local_workers import run_local
    from core.digitize.job.scan_job import ScanOutcome
    from core.digitize.job.worker import RunOptions, thread_split

    one_scan = [flag for flag, given in (("--calib", args.calib), ("--from-mask", args.from_mask),
                                         ("--mask-out", args.mask_out), ("--qc", args.qc),
                                         ("--section", args.section is not None), ("--well", args.well),
                                         ("--tile", args.tile), ("--whole-picture", args.whole_picture),
                                         ("--reference", args.reference)) if given]
    if one_scan:
        raise InputError(None, f"{', '.join(one_scan)}: for one scan; with a folder or several scans each scan "
                         "takes its own NAME.calib.json and writes NAME.digitized.las and its QC picture")
    if bool(args.model) == bool(args.classical):
        raise InputError(None, "give exactly one of --model MODEL or --classical")
    if args.model and not Path(args.model).is_file():
        raise InputError(args.model, "no such model file")
    out_dir = Path(args.out) if args.out else None
    if out_dir is not None:
        if out_dir.exists() and not out_dir.is_dir():
            raise InputError(args.out, "with several scans --out is a folder for their LAS files")
        # made by the first file written into it, once the run's outputs are checked, never by a refused run
    scans = [p.absolute() for p in scans_in(args.scan)]  # a cluster's workers resolve paths elsewhere
    model = Path(args.model).absolute() if args.model else None
    jobs = jobs_for(scans, out_dir.absolute() if out_dir else None, qc=not args.no_qc,
                    accept_proposed=args.accept_proposed, model=model)
    summary = Path(args.summary) if args.summary else (out_dir or scans[0].parent) / SUMMARY_NAME
    # the summary is no scan, calibration, model or LAS of the run (--summary S replaced a scan, exit 0)
    refuse_clobbering([("--summary", summary)], [("the model", model)] + [
        (f"{what} {j.scan.name}", path) for j in jobs
        for what, path in (("the scan", j.scan), ("the calibration of", j.calib), ("the LAS of", j.las))])
    require_writable([summary] + [j.las for j in jobs])
    todo = [j for j in jobs if args.force or not up_to_date(j, model)]
    earlier, earlier_time = earlier_summary(summary)
    outcomes = [skipped_outcome(j, earlier, earlier_time) for j in jobs if j not in todo]
    skipped = pictures_skipped(args.scan)
    if skipped:
        shown = ", ".join(p.name for p in skipped[:10])
        shown += f" and {len(skipped) - 10} more" if len(skipped) > 10 else ""
        print(f"skipped {len(skipped)} picture(s) with no NAME.calib.json beside them: {shown}", file=sys.stderr)
    workers, threads = thread_split(args.jobs or 1, args.threads)
    ceiling = None if args.max_memory is None else int(args.max_memory * 1024**3 / workers)
    # on a cluster each task takes the threads asked for, else the threads its Dask worker was started with
    options = RunOptions(args.model, args.precision, (args.threads or 0) if args.scheduler else threads, ceiling,
                         device=args.device if args.model else "cpu")
    where = f"the Dask cluster at {args.scheduler}" if args.scheduler else \
        f"{workers} worker process(es) × {threads} thread(s)"
    print(f"{len(jobs)} scan(s): {len(todo)} to digitise on {where}, {len(jobs) - len(todo)} up to date",
          file=sys.stderr)
    t0 = time.perf_counter()
    stopped: BaseException | None = None
    started = time.time()
    stream = run_cluster(todo, options, args.scheduler) if args.scheduler else run_local(todo, options, workers)
    # closed however the loop ends (a Ctrl-C between two outcomes included): its workers stopped, a Dask client and
    # its threads closed before the command returns, not at the interpreter's exit
    with progress_bar(len(todo), "digitize", unit="scan") as bar, closing(stream):
        try:
            for outcome in _refusing(stream, args.scheduler):
                outcomes.append(outcome)
                bar.update(1)
                if outcome.failed:
                    bar.write(f"{outcome.scan}: failed: {outcome.error}", file=sys.stderr)
        except (KeyboardInterrupt, InputError) as exc:  # interrupted, or the cluster lost: say what was done
            stopped = exc
    done_names = {o.scan for o in outcomes}
    why = "interrupted" if isinstance(stopped, KeyboardInterrupt) else "the cluster stopped"
    for j in todo:
        if j.scan.name in done_names:
            continue
        if written_since(j, started):  # its files landed, its result was lost with its worker
            outcomes.append(ScanOutcome(j.scan.name, "written", las=[str(j.las)],
                                        warnings=[f"{why} before its result came back; its files are complete"]))
        else:
            outcomes.append(ScanOutcome(j.scan.name, "not run", error=f"{why} before it"))
    order = {j.scan.name: i for i, j in enumerate(jobs)}
    outcomes.sort(key=lambda o: order.get(o.scan, len(order)))
    outcomes += [ScanOutcome(p.name, "skipped", error="no calibration NAME.calib.json beside it") for p in skipped]
    write_summary(summary, outcomes)
    if stopped is not None:
        written = [o.scan for o in outcomes if o.status == "written"]
        print(f"{len(written)} scan(s) written before it stopped" + (f": {', '.join(written)}" if written else "")
              + f"; {sum(o.status == 'not run' for o in outcomes)} not run; summary: {summary}", file=sys.stderr)
        if isinstance(stopped, InputError):
            raise InputError(stopped.path, f"{stopped.reason}; the scans written before it are listed in {summary}")
        raise stopped
    failed = [o.scan for o in outcomes if o.failed]
    done = sum(o.status == "written" for o in outcomes)
    print(f"digitised {done} scan(s) in {time.perf_counter() - t0:.1f} s, {len(jobs) - len(todo)} up to date, "
          f"{len(failed)} failed; summary: {summary}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 2
    return 0


def _refusing(stream, scheduler: str | None):
    """The outcomes, a cluster that cannot be reached (or Dask not installed) refused in one line."""
    try:
        yield from stream
    except (OSError, TimeoutError, RuntimeError) as exc:
        if not scheduler:
            raise
        raise InputError(scheduler, f"the Dask scheduler cannot be used: {exc}") from None


def _digitize_one(args) -> int:
    from core.model.cuda_start import start_in_background

    if args.model:
        start_in_background(args.device)  # overlaps the imports and the scan's checks below
    from core.common.fast_exit import keep_loaded
    from core.common.progress import progress_bar
    from core.digitize.job.scan_job import JobProgress, JobWarning, ReadOptions, ScanJob, digitize_scan
    from core.io.calibration import Calibration

    if sum(map(bool, (args.model, args.classical, args.from_mask))) != 1:
        raise InputError(None, "give exactly one of --model MODEL, --classical or --from-mask MASK.png")
    job = ScanJob(Path(args.scan), Path(args.calib), Path(args.out), qc=Path(args.qc) if args.qc else None,
                  mask_out=Path(args.mask_out) if args.mask_out else None,
                  from_mask=Path(args.from_mask) if args.from_mask else None,
                  section=None if args.section is None else args.section - 1, well=args.well,
                  accept_proposed=args.accept_proposed, model=Path(args.model) if args.model else None)

    def read() -> ReadOptions:  # the model is loaded once the scan, calibration and outputs are known good
        model, precision, device = _reader(args)
        # what is loaded by now (PyTorch, the project's modules, the model: ~215,000 objects) stays to the command's
        # end: the collector's full passes over them during KGS's reading and tracing took 0.59 s, 0.10 s kept out
        # (2-core EPYC, load 7-9; docs/benchmarks.md, issue #64, seventh round)
        keep_loaded()
        return ReadOptions(model=model, model_name=Path(args.model).name if args.model else None,
                           precision=precision, device=device, tile=args.tile, whole_picture=args.whole_picture,
                           reference=args.reference,
                           memory_ceiling=None if args.max_memory is None else int(args.max_memory * 1024**3))
    import torch

    with progress_bar(1, "digitize", unit="window") as bar, torch.no_grad():
        def show(event) -> None:
            if isinstance(event, JobProgress):
                bar.total = event.total
                bar.n = event.done
                bar.refresh()
            elif isinstance(event, JobWarning):
                bar.write(f"warning: {event.text}", file=sys.stderr)

        outcome = digitize_scan(job, read, show)
    calib = Calibration.load(args.calib)
    for out, (_, sec, res) in zip(outcome.las, outcome.parts):
        print(_wrote(out, sec, res, calib))
    pages = outcome.qc_pages
    if pages:
        print(f"wrote the QC picture: {pages[0]}" + (f" … {Path(pages[-1]).name} ({len(pages)} pages)"
                                                      if len(pages) > 1 else ""))
    _report_memory(outcome.parts)
    return 0


def _wrote(out, sec, res, calib) -> str:
    """The line that says what a LAS holds and what reading it took."""
    where = "" if sec is None else f" [{sec.kind} pass, {'rows' if calib.depth_axis == 'y' else 'columns'} " \
                                   f"{sec.start}–{sec.stop}]"
    return (f"wrote {out}{where}: {len(res.values)} curves × {res.depth.size} samples "
            f"({res.depth[0]:g}–{res.depth[-1]:g} {calib.depth_unit}); evidence "
            f"{res.timings['evidence_s']:.2f} s" + (f" ({res.memory['path']} path)" if res.memory else "")
            + f", grid {res.timings['grid_s']:.2f} s, trace {res.timings['trace_s']:.2f} s")


def _reader(args):
    """(model, precision, device) the scan is read with: the model named, on its device, in the precision that
    suits it there; (None, None, "cpu") for the classical tracer and a mask."""
    if not args.model:
        return None, None, "cpu"
    from core.engine.train import pick_device
    from core.model import precision as prec
    from core.model.model_io import load_model

    model, info = load_model(args.model)
    device = pick_device(args.device)
    model.to(device)
    return model, prec.for_inference(args.precision, info["precision"], device), device


def _report_memory(parts) -> None:
    """The network's windows and memory: predicted for reading the scan beside the peak resident measured."""
    plans = [res.memory for _, _, res in parts if res.memory]
    if not plans:
        return
    from core.common.sysmem import proc_status

    m = max(plans, key=lambda p: p["predicted_peak"])
    print(f"memory: {sum(p['windows'] for p in plans)} window(s) of {m['window_px']} px along depth; peak "
          f"resident {proc_status().get('VmHWM', 0) / 1024**3:.2f} GiB, predicted "
          f"{m['predicted_peak'] / 1024**3:.2f} GiB for reading the scan, ceiling {m['ceiling'] / 1024**3:.1f} GiB")
