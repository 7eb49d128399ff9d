"""Analysis: pure functions from artifacts (already read) to a BootReport. No I/O here."""
