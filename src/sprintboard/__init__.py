"""sprintboard: a JSON REST API for agile tracking."""

__version__ = "0.1.0"
