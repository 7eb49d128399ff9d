"""Soak: many measured power cycles, each journaled, classified and summarised
(docs/soak.md)."""
