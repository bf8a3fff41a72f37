"""Loading scanned logs (and masks) as grayscale uint8 arrays with their facts (and colour, when they have it).

A colour scan keeps its RGB pixels beside the grey ones: the network and the
grid reading work on grey (luma, as Pillow converts), while a curve's ink
colour is evidence of which curve a line is (``core/io/colour.py``). A scan that
is grey, or grey stored as RGB, carries no RGB copy and costs nothing more.

Every path in is a user's file, so every failure becomes a :class:`ScanError`
naming the file and the reason. Decompression bombs are refused by our own
pixel bound, checked from the header before any pixel is decoded; Pillow's own
guard is raised to that bound, never switched off.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from core.common.atomic import atomic_path
from core.common.errors import ScanError, require_file

from .file_names import OUTPUT_MARK

#: Default bound on pixels per image (300 MP: a 12,800 × 23,000 scan passes).
DEFAULT_MAX_PIXELS = 300_000_000
MAX_PIXELS_ENV = "WELLTRACE_MAX_PIXELS"

# the resolutions a scanner gives: a file's figure outside them is no resolution (33-025-02299-0001.tif says
# 1 dpi) and is not used; the calibration proposal takes a resolution within these bounds
# (core/digitize/calibrate/proposal.py: MIN_DPI, MAX_DPI), else judges sizes from the page's width
PLAUSIBLE_DPI = (50.0, 2400.0)

SCAN_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")


def max_pixels() -> int:
    """The pixel bound in force: ``WELLTRACE_MAX_PIXELS`` or the default."""
    raw = os.environ.get(MAX_PIXELS_ENV)
    if raw:
        try:
            value = int(float(raw))
        except ValueError:
            raise ScanError(None, f"{MAX_PIXELS_ENV}={raw!r} is not a number") from None
        if value > 0:
            return value
    return DEFAULT_MAX_PIXELS


@dataclass
class ScanInfo:
    path: str
    width: int
    height: int
    mode: str  # Pillow mode of the file as stored ("1", "L", "I;16", "P", "RGBA", "CMYK" …)
    format: str | None
    dpi: tuple[float, float] | None
    pages: int
    depth_axis: str  # guessed: the long axis ("y" for tall scans)
    notes: list[str] = field(default_factory=list)

    @property
    def dpi_plausible(self) -> bool:
        """Whether the file names a resolution a scanner gives (:data:`PLAUSIBLE_DPI`), both ways."""
        lo, hi = PLAUSIBLE_DPI
        return self.dpi is not None and all(lo <= d <= hi for d in self.dpi)

    def as_dict(self) -> dict:
        return {
            "path": self.path,
            "width": self.width,
            "height": self.height,
            "mode": self.mode,
            "format": self.format,
            "dpi": list(self.dpi) if self.dpi else None,
            "pages": self.pages,
            "depth_axis_guess": self.depth_axis,
            "notes": list(self.notes),
        }


@dataclass
class Scan:
    image: np.ndarray  # (height, width) uint8, 0 = ink, 255 = paper
    info: ScanInfo
    rgb: np.ndarray | None = None  # (height, width, 3) uint8 when the scan holds colour, else None

    @property
    def display(self) -> np.ndarray:
        """What a viewer shows: the colour pixels when there are any, else the grey ones."""
        return self.rgb if self.rgb is not None else self.image


def _check_path(path: Path) -> None:
    require_file(path, ScanError, "an image file")


def _open(path: Path, bound: int) -> Image.Image:
    # Pillow warns above MAX_IMAGE_PIXELS and raises above twice that; we check
    # the header ourselves first, so align Pillow's guard with our bound.
    Image.MAX_IMAGE_PIXELS = bound
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(path)
    except UnidentifiedImageError:
        raise ScanError(path, "not an image file Pillow can identify (PNG, JPEG, BMP or TIFF expected)") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ScanError(
            path, f"image is above the {bound / 1e6:.0f} MP bound (set {MAX_PIXELS_ENV} to raise it): {exc}"
        ) from None
    except OSError as exc:
        raise ScanError(path, f"cannot read image header: {exc}") from None
    w, h = img.size
    if w <= 0 or h <= 0:
        raise ScanError(path, f"image has no pixels ({w} × {h})")
    if w * h > bound:
        img.close()
        raise ScanError(
            path,
            f"image is {w} × {h} = {w * h / 1e6:.0f} MP, above the {bound / 1e6:.0f} MP bound "
            f"(set {MAX_PIXELS_ENV} to raise it)",
        )
    return img


_STDERR_LOCK = threading.Lock()


@contextlib.contextmanager
def _library_messages(capture: bool = True):
    """Yield a list that holds, once the block ends, what C libraries wrote on stderr during it: libtiff prints
    its reason for a damaged TIFF ("TIFFFillStrip: Read error on strip 0; got 997682 bytes, expected 2073326.")
    straight on file descriptor 2, a line before WellTrace's own, while Pillow's exception says only "decoder error
    -2". Captured, it becomes the one line's reason; the caller writes it back when the decode went well. One
    capture at a time (two threads swapping descriptor 2 would leave it on a closed file); nothing captured where
    descriptor 2 cannot be swapped (no console)."""
    messages: list[str] = []
    if not capture:
        yield messages
        return
    with _STDERR_LOCK:
        try:
            sys.stderr.flush()
            saved = os.dup(2)
        except (OSError, ValueError, AttributeError):
            yield messages
            return
        with tempfile.TemporaryFile() as box:
            os.dup2(box.fileno(), 2)
            try:
                yield messages
            finally:
                os.dup2(saved, 2)
                os.close(saved)
                box.seek(0)
                messages += [line.strip() for line in box.read().decode("utf-8", "replace").splitlines()
                             if line.strip()]


def _scale_to_uint8(arr: np.ndarray) -> np.ndarray:
    """Map an integer or float array onto 0–255 by its real range (not by clipping)."""
    arr = arr.astype(np.float64, copy=False)
    finite = np.isfinite(arr)
    if not finite.any():
        return np.full(arr.shape, 255, np.uint8)
    lo, hi = float(arr[finite].min()), float(arr[finite].max())
    if hi <= lo:
        return np.full(arr.shape, 255 if lo > 0 else 0, np.uint8)
    out = (np.where(finite, arr, hi) - lo) * (255.0 / (hi - lo))
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


COLOUR_MODES = ("RGB", "RGBA", "RGBX", "P", "PA", "CMYK", "YCbCr", "LAB", "HSV")


def _pixels(img: Image.Image) -> tuple[np.ndarray, np.ndarray | None]:
    """The scan's grey pixels, and its colour pixels when it holds colour. A colour mode is composited on
    white (transparency) and converted once; its grey is the luma of those pixels, as Pillow gives it."""
    from core.io.colour import has_colour, luma

    mode = img.mode
    if mode in COLOUR_MODES:
        if mode in ("RGBA", "PA") or (mode == "P" and "transparency" in img.info):
            rgb = np.asarray(_on_white(img).convert("RGB"), dtype=np.uint8).copy()
        else:
            rgb = np.asarray(img.convert("RGB"), dtype=np.uint8).copy()
        return luma(rgb), (rgb if has_colour(rgb) else None)
    if mode == "L":
        return np.asarray(img, dtype=np.uint8).copy(), None
    if mode == "LA":
        return np.asarray(_on_white(img).convert("L"), dtype=np.uint8).copy(), None
    if mode.startswith("I") or mode == "F":  # 16- and 32-bit grey: scaled by the real range
        return _scale_to_uint8(np.asarray(img)), None
    return np.asarray(img.convert("L"), dtype=np.uint8).copy(), None  # "1" and anything else Pillow reads


def _on_white(img: Image.Image) -> Image.Image:
    rgba = img.convert("RGBA")
    return Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba)


def _read_with_tifffile(path: Path) -> tuple[np.ndarray, np.ndarray | None]:
    """What Pillow cannot decode (16-bit RGB, unusual sample layouts): grey, and colour when present.
    High bit depths are scaled to 8 bits by their real range (all channels together, so hues hold)."""
    import tifffile

    from core.io.colour import has_colour, luma

    arr = tifffile.imread(path, key=0)
    if arr.dtype == np.bool_:
        arr = np.where(arr, 255, 0).astype(np.uint8)
    if arr.ndim == 3 and arr.shape[-1] in (3, 4):  # samples last
        rgb = arr[..., :3]
        rgb = rgb.copy() if rgb.dtype == np.uint8 else _scale_to_uint8(rgb)
        if arr.shape[-1] == 4:  # straight alpha over white
            a = arr[..., 3].astype(np.float32) / float(np.iinfo(arr.dtype).max if arr.dtype.kind in "ui" else 1.0)
            rgb = np.clip(rgb * a[..., None] + 255.0 * (1 - a[..., None]), 0, 255).round().astype(np.uint8)
        return luma(rgb), (rgb if has_colour(rgb) else None)
    if arr.ndim == 3:
        arr = arr[..., 0]
    return (arr.copy() if arr.dtype == np.uint8 else _scale_to_uint8(arr)), None


def read_info(path: str | os.PathLike, bound: int | None = None) -> ScanInfo:
    """Facts about a scan from its header, decoding no pixels."""
    p = Path(path)
    _check_path(p)
    img = _open(p, bound or max_pixels())
    with img:
        try:
            return _info_from(p, img)
        except (OSError, ValueError, SyntaxError) as exc:
            raise ScanError(p, f"image data is damaged or truncated: {exc}") from None


def _orientation(img: Image.Image, decoded: bool) -> int:
    """The EXIF orientation tag. A PNG may store its EXIF after the pixels, and Pillow's ``getexif`` then
    decodes the whole image to find it (100+ ms for 8 megapixels): before decoding, a PNG's EXIF is read
    only when it came in the header."""
    if not hasattr(img, "getexif"):
        return 1
    if img.format == "PNG" and not decoded and "exif" not in img.info:
        return 1
    return img.getexif().get(0x0112, 1)


def _info_from(p: Path, img: Image.Image, decoded: bool = False) -> ScanInfo:
    w, h = img.size
    pages = int(getattr(img, "n_frames", 1) or 1)
    orientation = _orientation(img, decoded)
    if orientation in (5, 6, 7, 8):  # EXIF says the image is stored rotated by 90°
        w, h = h, w
    dpi = img.info.get("dpi")
    notes = []
    if pages > 1:
        notes.append(f"{pages} pages in the file; using the first")
    if orientation not in (1, None):
        notes.append(f"EXIF orientation {orientation} applied")
    if img.mode == "1":
        notes.append("1-bit (bilevel) scan")
    elif img.mode.startswith("I;16") or img.mode in ("I", "F"):
        notes.append("high bit depth: scaled to 8 bits by its real range")
    elif img.mode in ("RGBA", "LA", "PA"):
        notes.append("transparency composited onto white")
    compression = img.info.get("compression")
    if compression:
        notes.append(f"compression {compression}")
    info = ScanInfo(
        path=str(p),
        width=w,
        height=h,
        mode=img.mode,
        format=img.format,
        dpi=(float(dpi[0]), float(dpi[1])) if dpi else None,
        pages=pages,
        depth_axis="y" if h >= w else "x",
        notes=notes,
    )
    if info.dpi is not None and not info.dpi_plausible:
        notes.append(f"the file says {info.dpi[0]:g} × {info.dpi[1]:g} dpi, implausible for a scan (a scanner gives "
                     f"{PLAUSIBLE_DPI[0]:g}-{PLAUSIBLE_DPI[1]:g}): not used")
    return info


def load_scan(path: str | os.PathLike, bound: int | None = None) -> Scan:
    """Load any PNG/JPEG/BMP/TIFF as grayscale uint8 (0 ink … 255 paper), with its RGB pixels when it is
    in colour (palette, CMYK and transparency converted; alpha composited on white)."""
    p = Path(path)
    _check_path(p)
    img = _open(p, bound or max_pixels())
    said: list[str] = []
    with img:
        try:
            with _library_messages(img.format == "TIFF") as said:  # libtiff decodes it and speaks on stderr
                img.seek(0)
                img.load()
            if said:  # a decode that went well: what libtiff said (a warning) is the user's to read, as before
                print("\n".join(said), file=sys.stderr)
                said = []
            info = _info_from(p, img, decoded=True)
            oriented = ImageOps.exif_transpose(img) or img
            gray, rgb = _pixels(oriented)
        except (OSError, ValueError, SyntaxError) as exc:
            # libtiff's own words when it gave them ("Read error on strip 0; got …"), else Pillow's
            reason = f"image data is damaged or truncated: {'; '.join(said) or exc}"
            if p.suffix.lower() in (".tif", ".tiff"):
                try:
                    gray, rgb = _read_with_tifffile(p)
                except Exception:  # noqa: BLE001 - report Pillow's reason, the clearer one
                    raise ScanError(p, reason) from None
            else:
                raise ScanError(p, reason) from None
    if gray.shape != (info.height, info.width):
        info.height, info.width = gray.shape
    if rgb is not None:
        info.notes.append("colour: kept for ink colours; the network reads its grey")
    return Scan(gray, info, rgb)


def display_pyramid(image: np.ndarray, smallest: int = 1024) -> list[np.ndarray]:
    """The scan, then area-averaged halvings of it until its long side is at most ``smallest``.

    A viewer showing a scan smaller than its pixels samples one pixel in several: a 1-px curve on a
    17,864-row log fitted to a window becomes scattered dots. Averaging keeps it a (lighter) line, and
    picking the level nearest the screen's scale keeps every zoom cheap to draw."""
    import cv2

    levels = [image]
    while max(levels[-1].shape[:2]) > smallest and min(levels[-1].shape[:2]) >= 4:
        h, w = levels[-1].shape[:2]
        levels.append(cv2.resize(levels[-1], ((w + 1) // 2, (h + 1) // 2), interpolation=cv2.INTER_AREA))
    return levels


def load_mask(path: str | os.PathLike, expected_shape: tuple[int, int] | None = None, classes: int = 4) -> np.ndarray:
    """Load a class-index mask (8-bit, one class per pixel) and check it against its scan."""
    p = Path(path)
    _check_path(p)
    img = _open(p, max_pixels())
    with img:
        if img.mode not in ("L", "P", "1"):
            raise ScanError(p, f"mask must be an 8-bit single-channel image, not mode {img.mode}")
        try:
            arr = np.asarray(img if img.mode != "1" else img.convert("L"), dtype=np.uint8).copy()
        except OSError as exc:
            raise ScanError(p, f"mask data is damaged or truncated: {exc}") from None
    if img.mode == "1":
        arr = (arr > 0).astype(np.uint8)
    if expected_shape is not None and arr.shape != tuple(expected_shape):
        raise ScanError(
            p,
            f"mask is {arr.shape[1]} × {arr.shape[0]} but its scan is {expected_shape[1]} × {expected_shape[0]}",
        )
    top = int(arr.max(initial=0))
    if top >= classes:
        raise ScanError(p, f"mask holds class {top}; classes run 0..{classes - 1}")
    return arr


def save_gray_png(path: str | os.PathLike, image: np.ndarray) -> None:
    """Write an 8-bit single-channel PNG atomically (scans, masks)."""
    if image.dtype != np.uint8 or image.ndim != 2:
        raise ValueError("expected a 2-D uint8 array")
    target = Path(path)
    with atomic_path(target) as tmp:
        Image.fromarray(image).save(tmp, format="PNG", optimize=False, compress_level=6)


def is_scan_file(path: Path) -> bool:
    """A scan is an image that is neither a mask nor a picture WellTrace wrote (a QC picture
    ``NAME.digitized.qc.png`` or its pages): a folder run, a project and training never take one for a scan."""
    return (path.suffix.lower() in SCAN_SUFFIXES and not path.name.endswith(".mask.png")
            and OUTPUT_MARK not in path.name)
