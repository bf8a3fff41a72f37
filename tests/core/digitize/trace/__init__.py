"""Tests of core/digitize/trace."""
