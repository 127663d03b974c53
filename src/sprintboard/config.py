"""Settings, read from SPRINTBOARD_* environment variables (and an optional .env file)."""

import json
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="SPRINTBOARD_", env_file=".env", extra="ignore", frozen=True
    )

    database_url: str = "sqlite:///./sprintboard.db"
    redis_url: str | None = None
    rate_limit: str = "600/minute"
    """Requests per API key, in the `limits` notation (`600/minute`, `10/second`)."""
    auth_failure_limit: str = "600/minute"
    """Failed authentications per client address; past it, whatever from that address fails
    to authenticate gets 429 instead of 401 (valid keys keep working)."""
    rate_limit_prefix: str = "sprintboard"
    """Namespace of the rate-limit counters in Redis: instances that share it share a budget."""
    log_level: str = "INFO"
    log_format: Literal["text", "json"] | None = None
    """`text` (one readable line per record) or `json` (one object per line); unset: text
    when standard error is a terminal, JSON otherwise (a log collector)."""
    cors_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Origins allowed by CORS, comma-separated or a JSON list; empty (default) means CORS off."""
    deliver_events: bool = True
    """Whether `serve` delivers events in-process; scale-out runs `sprintboard worker` instead."""
    opentelemetry: bool = False
    """Whether FastAPI's native OpenTelemetry traces, metrics and logs go to the globally
    configured providers; off by default, as asking whether they are configured costs
    every request several microseconds."""
    gc_freeze: bool = True
    """Whether start-up's objects are moved out of the garbage collector's reach once the app
    has started (`gc.freeze()`); tests that build many apps in one process turn it off."""

    @field_validator("rate_limit", "auth_failure_limit")
    @classmethod
    def _a_limit(cls, value: str) -> str:
        from limits import parse

        try:
            parse(value)
        except ValueError:
            raise ValueError(f"{value!r} is not a rate limit such as 600/minute") from None
        return value

    @field_validator("redis_url")
    @classmethod
    def _a_redis_url(cls, value: str | None) -> str | None:
        if value and not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("expected redis://host:port/db (or rediss://, unix://)")
        return value or None

    @field_validator("database_url")
    @classmethod
    def _a_database_url(cls, value: str) -> str:
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            backend = make_url(value).get_backend_name()
        except ArgumentError:
            backend = None
        if backend not in ("sqlite", "postgresql", "postgres"):
            raise ValueError("expected sqlite:///path or postgresql://user@host:port/database")
        return value

    @field_validator("log_level")
    @classmethod
    def _a_log_level(cls, value: str) -> str:
        level = value.strip().upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ValueError("expected DEBUG, INFO, WARNING, ERROR or CRITICAL")
        return level

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return [origin.strip() for origin in text.split(",") if origin.strip()]
        return value
