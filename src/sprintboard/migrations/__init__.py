"""Applying the Alembic history that lives beside this file."""

from pathlib import Path

from alembic import command
from alembic.config import Config

from sprintboard.db import normalize_url

HERE = Path(__file__).parent


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(HERE))
    url = normalize_url(database_url).render_as_string(hide_password=False)
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def migrate(database_url: str) -> None:
    """Apply every pending migration."""
    command.upgrade(alembic_config(database_url), "head")
