"""Tests of core/digitize, room by room (the rooms of docs/development.md)."""
