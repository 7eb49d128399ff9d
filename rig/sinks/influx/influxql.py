"""InfluxQL literals: the one quoting of strings and identifiers for every query the rig
writes (dashboards, CREATE DATABASE, CREATE USER)."""

from __future__ import annotations


def string(text: str) -> str:
    """A single-quoted string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def ident(text: str) -> str:
    """A double-quoted identifier (database, measurement, user)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
