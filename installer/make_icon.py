"""Draw the WellTrace icon: a strip of log paper with a grid, one wiggling curve traced in blue over a black ink line.

Run once to regenerate ``resources/icons/welltrace.png`` (committed); the
build script derives the Windows ``.ico`` and macOS ``.icns`` from it.
"""

import math
import sys
from pathlib import Path

from PIL import Image, ImageDraw

S = 256


def draw() -> Image.Image:
    img = Image.new("RGBA", (S, S), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle((16, 8, S - 16, S - 8), radius=28, fill=(246, 241, 226, 255), outline=(60, 60, 60, 255),
                        width=6)
    for x in range(48, S - 24, 32):  # the track's vertical grid
        d.line((x, 20, x, S - 20), fill=(190, 182, 160, 255), width=2)
    for y in range(36, S - 12, 28):  # depth lines
        d.line((24, y, S - 24, y), fill=(210, 202, 182, 255), width=1)
    ink = [(S / 2 + 62 * math.sin(t / 18) * math.cos(t / 41), 24 + t) for t in range(0, S - 47)]
    d.line(ink, fill=(20, 20, 20, 255), width=9, joint="curve")
    d.line(ink, fill=(30, 120, 230, 255), width=4, joint="curve")
    return img


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "resources/icons/welltrace.png"
    draw().save(out, optimize=True)
    print(f"wrote {out}")
