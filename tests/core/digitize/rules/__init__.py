"""Tests of core/digitize/rules."""
