"""Analysis: pure functions from artifacts (already read) to a `Report`. No I/O here."""
