"""Tests of core/digitize/evidence."""
