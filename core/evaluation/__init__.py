"""Evaluation harnesses: fresh synthetic families, folders of foreign cases and the crossing test set scored
against their truth, and the demo job. Above training (the demo prints a step's budget), below the command line."""
