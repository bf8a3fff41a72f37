"""Digitising as a job: the pipeline over a picture and its sections, one scan's job from its files to its outputs, a folder's jobs and their workers."""
