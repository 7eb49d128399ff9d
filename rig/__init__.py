"""bootrig: measure where the time goes between power-on and a usable UI."""

__version__ = "0.2.0"
