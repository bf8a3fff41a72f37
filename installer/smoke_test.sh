#!/usr/bin/env bash
# Smoke-test a frozen WellTrace executable: --version, the GUI rendered offscreen, and a quick headless demo
# (PyTorch, the bundled model, OpenCV and lasio all load inside the bundle) and two training steps.
#   installer/smoke_test.sh build/installer/dist/welltrace/welltrace
set -euo pipefail
exe=${1:?usage: smoke_test.sh PATH/TO/welltrace}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export QT_QPA_PLATFORM=offscreen XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config"

version=$("$exe" --version)
[[ $version == welltrace\ * ]] || { echo "smoke: --version printed '$version'"; exit 1; }
echo "smoke: $version"

"$exe" gui --screenshot "$tmp/shot.png"
python3 - "$tmp/shot.png" <<'PY'
import sys
from PIL import Image
img = Image.open(sys.argv[1])
colours = len(img.convert("RGB").getcolors(1 << 20) or [])
assert img.width >= 800 and img.height >= 500, img.size
assert colours > 50, f"the screenshot is nearly blank ({colours} colours)"
print(f"smoke: gui --screenshot {img.width}x{img.height}, {colours} colours")
PY
[[ -d $tmp/data/welltrace/demo_project ]] || { echo "smoke: the demo project was not copied out"; exit 1; }

"$exe" demo "$tmp/demo" --quick > "$tmp/demo.txt"
grep -q "^model .*median r" "$tmp/demo.txt" || { cat "$tmp/demo.txt"; echo "smoke: demo printed no row for the bundled model"; exit 1; }
grep "median r" "$tmp/demo.txt" | sed "s/^/smoke: /"
ls "$tmp/demo"/*.las > /dev/null
echo "smoke: demo --quick wrote $(ls "$tmp/demo"/*.las | wc -l) LAS files"
"$exe" train synthetic --out "$tmp/t.safetensors" --preset tiny --steps 2 --crop 256 --stream-size 512x128 \
    --checkpointing on --precision fp32 --events "$tmp/t.jsonl" > "$tmp/train.txt"
grep -q '"status": "finished"' "$tmp/t.jsonl" || { cat "$tmp/train.txt"; echo "smoke: training did not finish"; exit 1; }
echo "smoke: train (2 steps, gradient checkpointing) wrote $(basename "$tmp/t.safetensors")"
echo "smoke: passed"
