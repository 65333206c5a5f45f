"""The package's version, on the ground floor so that any floor can print it."""

__version__ = "0.1.0"
