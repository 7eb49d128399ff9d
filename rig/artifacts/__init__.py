"""Artifacts: the run folder (`results/<run-id>/`) and the files in it, read and written."""
