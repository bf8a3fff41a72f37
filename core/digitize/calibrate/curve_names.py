"""The words a scale box prints for a curve, as a LAS file names it: ``Gamma Ray`` → ``GR``, ``usec/ft`` →
``US/F``. The vocabulary of ``core/digitize/calibrate/scale_box.py``, which reads the box's image; here only the words."""

from __future__ import annotations

import re

# names printed in scale boxes → mnemonics (lower case, spaces and punctuation squeezed; "sonic" alone is no
# name: a sonic's integrated time and its porosity start with it); the first word of
# a name in capitals is taken as printed (``LTEN``, ``dCAL``) when no name here matches
NAMES = {
    "gammaray": "GR", "gamma": "GR", "gr": "GR", "spectralgammaray": "SGR",
    "deltatime": "DT", "deltat": "DT", "intervaltransittime": "DT", "compressionalslowness": "DTC",
    "sonicporosity": "SPHI", "neutronporosity": "NPHI", "densityporosity": "DPHI", "bulkdensity": "RHOB",
    "density": "RHOB", "densitycorrection": "DRHO", "photoelectricfactor": "PEF", "pe": "PEF",
    "caliper": "CALI", "cal": "CALI", "dcal": "CALI", "differentialcaliper": "CALI",
    "spontaneouspotential": "SP", "sp": "SP", "linetension": "LTEN", "tension": "LTEN", "lten": "LTEN",
    "deepinduction": "ILD", "mediuminduction": "ILM", "deepresistivity": "RDEP", "mediumresistivity": "RMED",
    "shallowresistivity": "RSHAL", "sphericallyfocused": "SFLU", "microsphericallyfocused": "MSFL",
    "linespeed": "LSPD", "lspd": "LSPD", "rop": "ROP", "rateofpenetration": "ROP",
}
UNITS = {"gapi": "GAPI", "gap": "GAPI", "api": "GAPI", "usec/ft": "US/F", "us/ft": "US/F", "µs/ft": "US/F",
         "pu": "PU", "in": "IN", "lb": "LB", "ib": "LB", "lbs": "LB", "ohmm": "OHMM", "ohm-m": "OHMM",
         "g/cc": "G/C3", "g/cm3": "G/C3", "mv": "MV", "v/v": "V/V", "b/e": "B/E", "msec": "MS", "ft/min": "F/MIN",
         "m3/m3": "M3/M3", "%": "%"}


def mnemonic_for(name: str) -> str | None:
    """``Gamma Ray`` → ``GR``; ``dCAL`` → ``CALI``; None for a name that says nothing (``Sonic Int``)."""
    key = re.sub(r"[^a-z]", "", name.lower())
    if key in NAMES:
        return NAMES[key]
    # a longer name that starts with a known one ("Gamma API" → Gamma); short keys (SP, PE) only whole
    known = sorted((k for k in NAMES if len(k) >= 4 and key.startswith(k)), key=len, reverse=True)
    if known:
        return NAMES[known[0]]
    first = name.split()[0] if name.split() else ""
    if 2 <= len(first) <= 8 and re.fullmatch(r"[A-Za-z]*[A-Z][A-Za-z0-9]*", first) and sum(c.isupper() for c in first) >= 2:
        return first.upper()
    return None


def unit_for(text: str) -> str:
    """A printed unit as LAS writes it (``usec/ft`` → ``US/F``); "" for words in brackets that are no unit
    (``(TVD)``: capitals without a slash are a remark, not a unit)."""
    t = text.strip().strip("()").strip()
    if t.lower() in UNITS:
        return UNITS[t.lower()]
    return t.upper() if t and (any(c.islower() for c in t) or "/" in t or "%" in t) else ""


def unit_in_name(name: str) -> str:
    """A unit the curve's name itself prints (``Gamma API`` → ``GAPI``), for a row that prints none apart: only a
    word that is a known unit counts, never any capitalised word."""
    return next((UNITS[w.lower()] for w in re.findall(r"[A-Za-z/%]+", name) if w.lower() in UNITS), "")


def names_a_curve(name: str, unit: str) -> bool:
    """A row names a curve when its name is one scale boxes print (``NAMES``) or a mnemonic in capitals with
    its unit given: the words of a comment box (``… 32 JTS of 36# …``) are neither."""
    key = re.sub(r"[^a-z]", "", name.lower())
    return key in NAMES or any(len(k) >= 4 and key.startswith(k) for k in NAMES) or (
        bool(unit) and mnemonic_for(name) is not None)
