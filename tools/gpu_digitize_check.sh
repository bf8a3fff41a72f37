#!/bin/bash
# Issues #64 and #60 on a CUDA machine, in one short run (a drawn task gets 15 minutes of device time, the start
# included). Every result goes to $OUT as it is made, the most wanted first:
#   #64: KGS whole must digitise in <= 5 s wall (d36c861 on an H200: 31.6 s, evidence 2.9 s, trace 21.5 s), and a
#        folder of the shared scans gives its scans an hour with one worker on the GPU;
#   #60: the GPU's bf16, fp32 and a pixel's shift against each other (tools/same_las_check.py --device cuda: each
#        curve >= 99 % of its confident samples within 1 % of the scale), and the GPU's LAS against the CPU's
#        (tools/compare_las.py over 700-1,129 ft, where d36c861 swapped the sonic and the tension on CUDA).
#
#   DATA=../shared/data OUT=/tmp/gpu64 tools/gpu_digitize_check.sh
#
# Run from the repository root; DATA holds scans/ (the shared scans) and the folder's calibrations are taken from
# FOLDER_CALIBS (default tools/bench_folder: the four North Dakota scans' proposed sections, curves added by hand).
# Measured 2026-11-28 on an H200 (docs/benchmarks.md, "On a GPU"): about 3 minutes without the tests.
# SKIP_CPU=1 leaves out the CPU's reading of KGS (the slowest step on a machine whose CPU has no native bf16),
# SKIP_PROFILE=1 the cProfile of the command; COPIES=N puts each shared scan N times in the folder, JOBS="1 4" reads
# it with 1 and then 4 worker processes.
set -u
DATA=${DATA:-../shared/data}
OUT=${OUT:-/tmp/gpu64}; mkdir -p "$OUT"
WT="python3 -m app.launch"
KGS=$DATA/scans/kgs_273101_bhc_sonic.tif
CAL=tests/data/kgs_273101_bhc_sonic.calib.json
WORK=${WORK:-/tmp/gpu64work}; mkdir -p "$WORK"  # what need not come back (the folder's LAS files)
export PYTHONUNBUFFERED=1
# The device image's Python packages come without their bytecode and its folder cannot be written, so every process
# there compiled ~1,000 of PyTorch's modules again (3.4 s of KGS's 15.5 s wall, cProfile, 2026-11-28): a user's
# install keeps its .pyc files, so the first run here writes them under a prefix and the later runs read them
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-/tmp/pyc}
log() { echo "=== $(date +%T) $*" | tee -a "$OUT/log.txt"; }
run() { log "$*"; timeout "${T:-180}" "$@" 2>&1 | tee -a "$OUT/log.txt"; }

log machine
(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nproc
 lscpu | grep -E "Model name"; grep -o -w -E "avx512_bf16|amx_bf16" /proc/cpuinfo | sort -u
 python3 -c "import torch, numba; print('torch', torch.__version__, torch.cuda.is_available(), 'numba', numba.__version__)"
) 2>&1 | tee -a "$OUT/log.txt"

# KGS twice: the first run pays numba's compile (the kernels' cache is not carried) and CUDA's start-up (context,
# cuDNN's choice of kernels); the second is the figure
for i in 1 2; do
  T=240 run $WT bench-digitize "$KGS" --calib "$CAL" --model resources/models/demo.safetensors --device cuda --json
done
T=120 run /usr/bin/time -f "wall %e s, user %U s, sys %S s, peak %M kB (with the QC picture)" $WT digitize "$KGS" \
    --calib "$CAL" --device cuda --out "$WORK/kgs_qc.las" --force
T=120 run /usr/bin/time -f "wall %e s, user %U s, sys %S s, peak %M kB (--no-qc)" $WT digitize "$KGS" \
    --calib "$CAL" --device cuda --no-qc --out "$OUT/kgs_cuda.las" --force
if [ -z "${SKIP_PROFILE:-}" ]; then
  log "where the wall goes: cProfile of the same command (kgs_cuda.prof)"
  T=120 python3 -m cProfile -o "$OUT/kgs_cuda.prof" -m app.launch digitize "$KGS" --calib "$CAL" --device cuda \
      --no-qc --out "$WORK/kgs_prof.las" --force 2>&1 | tail -3 | tee -a "$OUT/log.txt"
fi

T=240 run python3 tools/same_las_check.py --whole --device cuda --scan "$KGS"

# a folder: the shared scans with calibrations beside them (COPIES times each, under other names: enough scans for
# several workers), read by JOBS worker processes sharing the GPU, each tracing on the CPU while it reads the next
FOLDER=$WORK/folder; mkdir -p "$FOLDER"
FOLDER_CALIBS=${FOLDER_CALIBS:-tools/bench_folder}
for k in $(seq 1 "${COPIES:-1}"); do  # copies, not links: a folder run reads a file once, whatever its names
  cp "$KGS" "$FOLDER/kgs_$k.tif"; cp "$CAL" "$FOLDER/kgs_$k.calib.json"
  for c in "$FOLDER_CALIBS"/*.calib.json; do
    n=$(basename "$c" .calib.json)
    [ -f "$DATA/scans/$n.tif" ] && cp "$DATA/scans/$n.tif" "$FOLDER/${n}_$k.tif" && cp "$c" "$FOLDER/${n}_$k.calib.json"
  done
done
SCANS=$(ls "$FOLDER"/*.tif | wc -l)
for jobs in ${JOBS:-1}; do
  T=300 run /usr/bin/time -f "folder of $SCANS scans, $jobs worker(s): wall %e s, peak %M kB (largest process)" \
      $WT digitize "$FOLDER" --model resources/models/demo.safetensors --device cuda --jobs "$jobs" --no-qc --force \
      --out "$WORK/folder_out_$jobs"
done
log "scans an hour = 3600 x $SCANS scans / the folder's wall seconds"

if [ -z "${SKIP_CPU:-}" ]; then
  T=240 run /usr/bin/time -f "wall %e s, peak %M kB (CPU)" $WT digitize "$KGS" --calib "$CAL" --device cpu --no-qc \
      --out "$OUT/kgs_cpu.las" --force
  log "LAS, GPU against CPU (700-1,129 ft: the stretch d36c861 swapped on CUDA)"
  python3 tools/compare_las.py "$OUT/kgs_cpu.las" "$OUT/kgs_cuda.las" --calib "$CAL" --from 700 --to 1129 2>&1 \
      | tee -a "$OUT/log.txt"
fi
log "the tests that need a GPU, and the GPU's reading's own tests"
T=200 run python3 -m pytest -q -p no:cacheprovider $(python3 -c "import xdist" 2>/dev/null && printf -- '-n 8') tests/core/test_cuda_rules.py tests/core/test_cuda_start.py \
    tests/core/digitize/evidence/test_batched_inference.py
log done
