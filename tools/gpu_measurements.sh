#!/bin/bash
# GPU measurements of issue #33's closing note; every result goes to $OUT as it is made.
# usage: tools/gpu_measurements.sh [WIDTH HEIGHT STEPS]  (defaults 12800 640 50; DEV=cpu OUT=dir for a dry run at small sizes)
# needs lasio and platformdirs importable (on the device tool: carried as wheels, PYTHONPATH set)
W=${1:-12800}; H=${2:-640}; STEPS=${3:-50}; DEV=${DEV:-cuda}
export PYTHONUNBUFFERED=1
WT="python3 -m app.launch"
OUT=${OUT:-/tmp/gpuout}; mkdir -p $OUT
log() { echo "=== $(date +%T) $*" | tee -a $OUT/log.txt; }
run() { log "$*"; timeout ${T:-120} "$@" 2>&1 | tee -a $OUT/log.txt; }
log "machine"; (nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; python3 -c "import torch;print(torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"; nproc) 2>&1 | tee -a $OUT/log.txt
T=150 run $WT bench --device $DEV --width $W --height $H --precisions fp32,bf16 --json
T=150 run $WT bench --device $DEV --preset full --width $W --height $H --precisions fp32,bf16 --json
T=90 run $WT budget --device $DEV --width $W --height $H --measure --precision bf16 --json
T=150 run python3 tools/compiled_gradients.py $DEV tiny
T=60 run $WT synth $OUT/../folder --count 8 --width 3200 --height 480 --seed 3
for P in bf16 fp32; do  # whole 12,800 x 640 logs, as the H100 row of 5251d18
  T=150 run $WT train synthetic --device $DEV --preset demo --precision $P --steps 20 --compile --effective-batch 1 --stream-size ${W}x${H} --crop-along 0 --workers 8 --events $OUT/compiled_$P.jsonl --out /tmp/c_$P.safetensors
done
T=100 run $WT train synthetic --device $DEV --preset demo --precision bf16 --steps $STEPS --effective-batch 1 --stream-size 3200x480 --events $OUT/stream.jsonl --out /tmp/s.safetensors
T=100 run $WT train $OUT/../folder --device $DEV --preset demo --precision bf16 --steps $STEPS --effective-batch 1 --events $OUT/folder.jsonl --out /tmp/f.safetensors
log "pytest"
timeout ${PYT:-300} python3 -m pytest -q -p no:cacheprovider tests/core -n 12 2>&1 | tail -40 | tee -a $OUT/log.txt
log "pytest: the gpu-marked tests alone"
timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/core 2>&1 | tail -15 | tee -a $OUT/log.txt
log done
