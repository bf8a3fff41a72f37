"""Tests of core/digitize/job."""
