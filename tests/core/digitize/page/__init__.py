"""Tests of core/digitize/page."""
