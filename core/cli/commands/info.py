"""``welltrace info``: the facts of a scan (size, mode, dpi, the depth axis guessed)."""

from __future__ import annotations

import json

NAME = "info"


def register(sub) -> None:
    i = sub.add_parser(NAME, help="print the facts of a scan (size, mode, dpi, guessed depth axis)")
    i.add_argument("scan")
    i.add_argument("--json", action="store_true")
    i.set_defaults(func=run)


def run(args) -> int:
    from core.io.scan import load_scan

    scan = load_scan(args.scan)
    info = scan.info.as_dict()
    img = scan.image
    info["ink_fraction"] = round(float((img < 128).mean()), 5)
    info["gray_range"] = [int(img.min()), int(img.max())]
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    dpi = f"{info['dpi'][0]:g} × {info['dpi'][1]:g}" if info["dpi"] else "unknown"
    if info["dpi"] and not scan.info.dpi_plausible:  # its note says why
        dpi += " (implausible: not used)"
    print(f"file        {info['path']}")
    print(f"size        {info['width']} × {info['height']} px")
    print(f"format      {info['format']}, mode {info['mode']}, {info['pages']} page(s)")
    print(f"dpi         {dpi}")
    print(f"depth axis  {info['depth_axis_guess']} (guessed: the long axis)")
    print(f"gray range  {info['gray_range'][0]}..{info['gray_range'][1]}, ink (<128) {info['ink_fraction']:.2%}")
    for note in info["notes"]:
        print(f"note        {note}")
    return 0
