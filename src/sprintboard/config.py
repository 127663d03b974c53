"""Settings, read from SPRINTBOARD_* environment variables (and an optional .env file)."""

import json
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator
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
    trusted_proxies: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Peers (addresses or networks, comma-separated) whose `Forwarded` / `X-Forwarded-For`
    headers name the client; from anyone else those headers are ignored. Empty by default."""
    max_requests_in_progress: int = Field(256, ge=1)
    """Requests one process holds at once; past it, 503 UNAVAILABLE with `Retry-After` at once."""
    header_timeout: float = Field(10.0, gt=0)
    """Seconds a client has to send a request's headers (else 408 and the connection closes)."""
    body_timeout: float = Field(30.0, gt=0)
    """Seconds a client has to send a request's body once its headers are in (else 408)."""
    log_level: str = "INFO"
    log_format: Literal["text", "json"] | None = None
    """`text` (one readable line per record) or `json` (one object per line); unset: text
    when standard error is a terminal, JSON otherwise (a log collector)."""
    public_url: str | None = None
    """The service's root as people reach it (`https://tracker.example.com`): invitation and
    password reset links point there, and it is the service's own origin for the check of
    cookie requests. Unset, links are made from the address a request was sent to."""
    smtp_url: SecretStr | None = None
    """Where mail goes: `smtp://[user:password@]host:port` (STARTTLS when the server offers
    it) or `smtps://` (TLS from the start). Unset, nothing is mailed. A secret: never logged."""
    mail_from: str | None = None
    """The `From` of every mail (`Sprintboard <board@example.com>`); needed with `smtp_url`."""
    oidc_issuer: str | None = None
    """An OpenID Connect issuer (`https://id.example.com/realms/acme`); with the client id
    and secret set, the sign-in page offers "Sign in with SSO". `https://` unless on a
    loopback host (development and tests)."""
    oidc_client_id: str | None = None
    oidc_client_secret: SecretStr | None = None
    oidc_allowed_domains: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Email domains (comma-separated) whose people may sign in by SSO without an invitation:
    their account is created at their first sign-in, with no workspace."""
    cors_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Origins allowed by CORS, comma-separated or a JSON list; empty (default) means CORS off."""
    stream_keepalive: float = Field(10.0, gt=0, le=15)
    """Seconds of silence after which an event stream sends a keep-alive comment."""
    deliver_events: bool = True
    """Whether `serve` delivers events in-process; scale-out runs `sprintboard worker` instead."""
    opentelemetry: bool = False
    """Whether FastAPI's native OpenTelemetry traces, metrics and logs go to the globally
    configured providers; off by default, as asking whether they are configured costs
    every request several microseconds."""
    secret_key: SecretStr | None = None
    """The server key webhook secrets are encrypted with (at least 32 characters; every
    instance of a deployment sets the same). Unset on SQLite: generated into a file beside
    the database (`serverkey.server_key`); unset on PostgreSQL: commands refuse to start."""
    webhook_allow_private: bool = False
    """Whether webhooks may target loopback, private, link-local and other non-public
    addresses (development and tests); off, such a URL is refused and never connected to."""
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

    @field_validator("secret_key", mode="before")
    @classmethod
    def _a_secret_key(cls, value: Any) -> Any:
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if text == "" or text is None:
            return None
        if isinstance(text, str) and len(text) < 32:
            raise ValueError("expected at least 32 characters")
        return value

    @property
    def uses_postgresql(self) -> bool:
        from sqlalchemy.engine import make_url

        return make_url(self.database_url).get_backend_name() != "sqlite"

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

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _split_proxies(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [entry.strip() for entry in value.split(",") if entry.strip()]
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        from sprintboard.addresses import parse_networks

        try:
            parse_networks(value)
        except ValueError as error:
            raise ValueError(
                f"expected addresses or networks such as 10.0.0.0/8: {error}"
            ) from None
        return value

    @field_validator("smtp_url", mode="before")
    @classmethod
    def _an_smtp_url(cls, value: Any) -> Any:
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if text == "" or text is None:
            return None
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(str(text))
            parts.port  # noqa: B018 (raises on a port that is not a number)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError("expected smtp://[user:password@]host:port or smtps://...")
        return value

    @field_validator("oidc_issuer")
    @classmethod
    def _an_issuer(cls, value: str | None) -> str | None:
        if not value:
            return None
        from sprintboard.addresses import is_loopback_url

        if not (value.startswith("https://") or is_loopback_url(value)):
            raise ValueError("expected an https:// issuer (http:// only on a loopback host)")
        return value.rstrip("/")

    @field_validator("oidc_allowed_domains", mode="before")
    @classmethod
    def _split_domains(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [entry.strip().lower() for entry in value.split(",") if entry.strip()]
        return value

    @property
    def mail_configured(self) -> bool:
        return self.smtp_url is not None and bool(self.mail_from)

    @property
    def oidc_configured(self) -> bool:
        return bool(self.oidc_issuer and self.oidc_client_id and self.oidc_client_secret)

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return [origin.strip() for origin in text.split(",") if origin.strip()]
        return value
