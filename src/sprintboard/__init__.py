"""sprintboard: a JSON REST API for agile tracking."""

from importlib.metadata import version

__version__ = version("sprintboard")
"""The one version (pyproject.toml's, as installed): `--version`, OpenAPI, MCP, User-Agent."""
