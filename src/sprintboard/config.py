"""Settings, read from SPRINTBOARD_* environment variables (and an optional .env file)."""

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="SPRINTBOARD_", env_file=".env", extra="ignore", frozen=True
    )

    database_url: str = "sqlite:///./sprintboard.db"
    redis_url: str | None = None
    rate_limit: str = "600/minute"
    log_level: str = "INFO"
    cors_origins: list[str] = Field(default_factory=list)
    deliver_events: bool = True
    """Whether `serve` delivers events in-process; scale-out runs `sprintboard worker` instead."""
