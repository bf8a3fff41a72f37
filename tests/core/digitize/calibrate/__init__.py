"""Tests of core/digitize/calibrate."""
