"""Files in and out: scans, calibrations, LAS, project folders, ink colours. Imports nothing above it."""
