"""Tests of core/digitize/output."""
