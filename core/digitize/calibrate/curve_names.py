"""The words a scale box prints for a curve, as a LAS file names it: ``Gamma Ray`` → ``GR``, ``usec/ft`` →
``US/F``, ``Gamma Ray (GR_EDTC)`` → ``GR_EDTC``. The vocabulary of ``core/digitize/calibrate/scale_box.py``, which
reads the box's image; here only the words."""

from __future__ import annotations

import difflib
import re

# names printed in scale boxes → mnemonics (lower case, spaces, digits and punctuation squeezed; "sonic" alone is
# no name: a sonic's integrated time and its porosity start with it); the first word of a name in capitals is
# taken as printed (``LTEN``, ``dCAL``) when no name here matches. Open-hole, mud-log (gas, drilling), cement-bond
# and casing-inspection names, as the archive's boxes print them
NAMES = {
    "gammaray": "GR", "gamma": "GR", "gr": "GR", "spectralgammaray": "SGR",
    "deltatime": "DT", "deltat": "DT", "intervaltransittime": "DT", "compressionalslowness": "DTC",
    "sonicporosity": "SPHI", "neutronporosity": "NPHI", "densityporosity": "DPHI", "bulkdensity": "RHOB",
    "density": "RHOB", "densitycorrection": "DRHO", "photoelectricfactor": "PEF", "pe": "PEF",
    "caliper": "CALI", "cal": "CALI", "dcal": "CALI", "differentialcaliper": "CALI", "densitycaliper": "CALI",
    "spontaneouspotential": "SP", "sp": "SP", "linetension": "LTEN", "tension": "LTEN", "lten": "LTEN",
    "cabletension": "TENS",
    "deepinduction": "ILD", "mediuminduction": "ILM", "deepresistivity": "RDEP", "mediumresistivity": "RMED",
    "shallowresistivity": "RSHAL", "sphericallyfocused": "SFLU", "microsphericallyfocused": "MSFL",
    "linespeed": "LSPD", "lspd": "LSPD", "bitsize": "BS",
    # drilling and gas (mud logs)
    "rop": "ROP", "rateofpenetration": "ROP", "wob": "WOB", "weightonbit": "WOB",
    "tg": "TG", "gas": "TG", "totalgas": "TG", "heavygas": "HVY",
    # cement bond and casing inspection
    "ccl": "CCL", "collarlocator": "CCL", "casingcollarlocator": "CCL",
    "temperature": "TEMP", "welltemperature": "TEMP", "boreholetemperature": "TEMP",
    "amplitude": "AMP", "amplifiedamplitude": "AMP", "traveltime": "TT", "variabledensity": "VDL",
    "averageamplitude": "AVGAMP", "minimumamplitude": "MINAMP", "maximumamplitude": "MAXAMP",
    "minimumthickness": "TMIN", "maximumthickness": "TMAX", "averagethickness": "TAVG",
    "minid": "MINID", "maxid": "MAXID", "apinomid": "NOMID", "nomid": "NOMID", "nominalid": "NOMID",
    "bonded": "BOND",
    "externalradiusaverage": "ERAV", "internalradiusaverage": "IRAV",
    # ultrasonic cement evaluation: each sector's impedance, its number printed after the name (#1 … #9)
    "minimumacousticimpedance": "MIN_AI", "maximumacousticimpedance": "MAX_AI", "averageacousticimpedance": "AV_AI",
    "minimumofai": "AIMN", "maximumofai": "AIMX", "averageofai": "AIAV",
}
UNITS = {"gapi": "GAPI", "gap": "GAPI", "api": "GAPI", "usec/ft": "US/F", "us/ft": "US/F", "µs/ft": "US/F",
         "pu": "PU", "in": "IN", "inches": "IN", "lb": "LB", "ib": "LB", "lbs": "LB", "pounds": "LB", "lbf": "LBF",
         "ohmm": "OHMM", "ohm-m": "OHMM", "g/cc": "G/C3", "g/cm3": "G/C3", "mv": "MV", "v/v": "V/V", "b/e": "B/E",
         "msec": "MS", "usec": "US", "ft/min": "F/MIN", "ft/hr": "F/HR", "min/ft": "MIN/F", "m3/m3": "M3/M3",
         "ft3/ft3": "V/V", "ft3": "FT3", "%": "%", "degf": "DEGF", "deg": "DEG", "ppm": "PPM", "units": "UNITS",
         "mray": "MRAY"}
# words printed in brackets after a name that are a remark on the scale, not the curve's mnemonic
REMARKS = {"TVD", "MD", "TVDSS", "SS", "MAIN", "REPEAT", "TRACK"}
_FUZZY_MIN = 8  # a name this long may be matched with a misprinted or misread letter (Mimimum Amplitude)
_FUZZY_RATIO = 0.85


def _key(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower())


def mnemonic_for(name: str) -> str | None:
    """``Gamma Ray`` → ``GR``; ``dCAL`` → ``CALI``; ``C3 (ppm)`` → ``C3``; None for a name that says nothing
    (``Sonic Int``)."""
    gas = re.match(r"^\s*(i|iso|n|normal)?\s*-?\s*c\s*([1-5])\b", name, re.IGNORECASE)
    if gas:  # a gas component: its carbon number is the name (C1 … C5, iC4, nC4)
        prefix = {"i": "I", "iso": "I", "n": "N", "normal": "N"}.get((gas.group(1) or "").lower(), "")
        return f"{prefix}C{gas.group(2)}"
    numbered = re.search(r"#\s*([0-9])\b", name)  # a sector's number (Acoustic Impedance #4): the mnemonic's suffix
    if numbered:
        base = mnemonic_for(name[: numbered.start()])
        return f"{base}{numbered.group(1)}" if base and base.endswith("_AI") else base
    key = _key(name)
    if key in NAMES:
        return NAMES[key]
    # a longer name that starts with a known one ("Gamma API" → Gamma); short keys (SP, PE) only whole
    known = sorted((k for k in NAMES if len(k) >= 4 and key.startswith(k)), key=len, reverse=True)
    if known:
        return NAMES[known[0]]
    if len(key) >= _FUZZY_MIN:
        close = difflib.get_close_matches(key, [k for k in NAMES if len(k) >= _FUZZY_MIN], n=1, cutoff=_FUZZY_RATIO)
        if close:
            return NAMES[close[0]]
    first = name.split()[0] if name.split() else ""
    if _key(first) in NAMES and first.isupper():  # a known mnemonic as the name's first word: "ROP (TVD) Track: 1"
        return NAMES[_key(first)]
    if 2 <= len(first) <= 8 and re.fullmatch(r"[A-Za-z]*[A-Z][A-Za-z0-9]*", first) and sum(c.isupper() for c in first) >= 2:
        return first.upper()
    return None


def known_name(name: str) -> bool:
    """Whether a name is one the vocabulary knows whole (``Maximum of AI``): its mnemonic is then surer than what a
    small print's brackets were read as (``(AIMX)`` read ``(AINIX)``)."""
    key = _key(name)
    return key in NAMES or (len(key) >= _FUZZY_MIN and bool(difflib.get_close_matches(
        key, [k for k in NAMES if len(k) >= _FUZZY_MIN], n=1, cutoff=_FUZZY_RATIO)))


def unit_for(text: str) -> str:
    """A printed unit as LAS writes it (``usec/ft`` → ``US/F``); "" for words in brackets that are no unit
    (``(TVD)``: capitals without a slash are a remark, not a unit)."""
    t = text.strip().strip("()").strip()
    if t.lower() in UNITS:
        return UNITS[t.lower()]
    return t.upper() if t and " " not in t and (any(c.islower() for c in t) or "/" in t or "%" in t) and len(t) <= 8 else ""


def unit_in_name(name: str) -> str:
    """A unit the curve's name itself prints (``Gamma API`` → ``GAPI``), for a row that prints none apart: only a
    word that is a known unit counts, never any capitalised word."""
    return next((UNITS[w.lower()] for w in re.findall(r"[A-Za-z/%]+", name) if w.lower() in UNITS), "")


def split_name(text: str) -> tuple[str, str, str | None]:
    """A printed name as (name, unit, mnemonic): what it says in brackets taken out, a known unit as its unit
    (``(GAPI)``, ``(in)``) and a word in capitals as its mnemonic (``(GR_EDTC)``, ``(MIN_ AI2)`` broken over two
    lines); ``(TVD)`` and other remarks are neither. ``Gamma Ray (GAPI)`` → ("Gamma Ray", "GAPI", None)."""
    unit, mnem = "", None
    for inner in re.findall(r"\(([^()]*)(?:\)|$)", text):
        word = re.sub(r"\s*_\s*", "_", inner.strip()).strip(" .,:;")
        if not word:
            continue
        if word.lower() in UNITS:
            unit = unit or UNITS[word.lower()]
        elif (mnem is None and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{1,11}", word) and word.upper() not in REMARKS
              and sum(c.isupper() for c in word) >= 2 and not word.endswith("_")):
            mnem = word.upper()
        elif not unit and unit_for(word):
            unit = unit_for(word)
    name = re.sub(r"\([^()]*(?:\)|$)", " ", text)
    name = " ".join(name.split()).strip(" -:")
    return name, unit, mnem


def names_a_curve(name: str, unit: str) -> bool:
    """A row names a curve when its name is one scale boxes print (``NAMES``) or a mnemonic in capitals with
    its unit given: the words of a comment box (``… 32 JTS of 36# …``) are neither."""
    key = _key(name)
    if re.match(r"^\s*(i|iso|n|normal)?\s*-?\s*c\s*[1-5]\b", name, re.IGNORECASE):
        return True
    first = name.split()[0] if name.split() else ""
    if _key(first) in NAMES and first.isupper():
        return True
    return key in NAMES or any(len(k) >= 4 and key.startswith(k) for k in NAMES) or (
        len(key) >= _FUZZY_MIN and bool(difflib.get_close_matches(
            key, [k for k in NAMES if len(k) >= _FUZZY_MIN], n=1, cutoff=_FUZZY_RATIO))) or (
        bool(unit) and mnemonic_for(name) is not None)
