#!/usr/bin/env bash
# Build the one-folder WellTrace bundle with PyInstaller, report its size and largest parts, then smoke-test it.
#   installer/build.sh            # from the repository root, after `pip install torch==2.13.0 && pip install -e .`
# Output: build/installer/dist/welltrace/welltrace (plus its folder); nothing is written outside build/.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q "pyinstaller>=6.10,<7" "pyinstaller-hooks-contrib>=2024.8"
mkdir -p build/installer
python3 - <<'PY'
from PIL import Image
img = Image.open("resources/icons/welltrace.png")
img.save("build/installer/welltrace.ico", sizes=[(16, 16), (32, 32), (48, 48), (64, 64), (128, 128), (256, 256)])
img.save("build/installer/welltrace.icns")
PY
start=$(date +%s)
python3 -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath build/installer/dist --workpath build/installer/work installer/welltrace.spec
echo "build time: $(( $(date +%s) - start )) s"
bundle=build/installer/dist/welltrace
echo "bundle size: $(du -sh "$bundle" | cut -f1)"
echo "largest parts:"
du -sm "$bundle/_internal"/* | sort -rn | sed -n 1,10p | sed "s#$bundle/_internal/##; s#^\([0-9]*\)#\1 MiB#"  # sed, not head: pipefail
installer/smoke_test.sh "$bundle/welltrace"
