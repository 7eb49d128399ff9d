"""The golden outputs of tests/test_golden_outputs.py: how they are made (outputs.py) and
regenerated on purpose (regen.py)."""
