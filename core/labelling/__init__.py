"""Mask editing and labelling tools, and the pre-fill a user corrects."""
