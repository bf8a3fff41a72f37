"""The curves a synthetic log may carry: mnemonics, units, scales, as printed on real logs."""

from __future__ import annotations

# mnemonic, unit, description, scale ends (value at track left, value at track right)
LINEAR_CURVES = [
    ("GR", "GAPI", "Gamma ray", (0.0, 150.0)),
    ("SP", "MV", "Spontaneous potential", (-80.0, 20.0)),
    ("CALI", "IN", "Caliper", (6.0, 16.0)),
    ("DT", "US/F", "Sonic delta-t", (140.0, 40.0)),
    ("NPHI", "V/V", "Neutron porosity", (0.45, -0.15)),
    ("RHOB", "G/C3", "Bulk density", (1.95, 2.95)),
    ("PEF", "B/E", "Photoelectric factor", (0.0, 10.0)),
    ("SPHI", "PU", "Sonic porosity", (30.0, -10.0)),
]
# The side a backup scale takes where the values are physical: GR past 150 API (shales),
# DT past 140 us/ft, NPHI past 0.45 and RHOB below 1.95 g/cc (coals, washouts), CALI past 16 in.
BACKUP_SIDE = {"GR": "high", "SP": "high", "CALI": "high", "DT": "low", "NPHI": "low", "RHOB": "low",
               "PEF": "high", "SPHI": "low"}
LOG_CURVES = [
    ("ILD", "OHMM", "Deep induction resistivity"),
    ("ILM", "OHMM", "Medium induction resistivity"),
    ("SFLU", "OHMM", "Spherically focused resistivity"),
    ("MSFL", "OHMM", "Micro-spherically focused resistivity"),
]
CURVE_COLORS = {1: "#d62728", 2: "#1f77b4", 3: "#2ca02c"}
