"""API key secrets: how a request carries one and how one is stored, in one place for the
route (`deps.caller_of`), the rate limiter and the idempotency layer, so that all three read
the same key from the same header.

A secret travels as `Authorization: Bearer sb_...` and is stored only as its SHA-256: the
secrets carry 256 random bits, so there is nothing to brute-force, and a digest needs no salt
to be looked up by.
"""

import hashlib
import re
import secrets
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

SECRET_PREFIX = "sb_"
_SECRET = re.compile(r"^sb_[A-Za-z0-9_-]{43}$")


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    """How a secret is stored and looked up: an API key's, and a browser session's token
    (`identity.sessions`), which carries 256 random bits too."""
    return hashlib.sha256(secret.encode()).hexdigest()


def well_formed(secret: str) -> bool:
    """Whether `secret` could be one this service issued (anything else is refused unread)."""
    return _SECRET.match(secret) is not None


def bearer_secret(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The secret of the first `Authorization` header (raw ASGI headers), if it is a bearer
    credential; None for no header, another scheme, or an empty secret."""
    for name, value in headers:
        if name == b"authorization":
            return bearer_of(value.decode("latin-1"))
    return None


def bearer_of(authorization: str) -> str | None:
    """The secret of an `Authorization` header's value, if it is a bearer credential (the
    scheme in any case); None for another scheme or an empty secret."""
    scheme, _, secret = authorization.strip().partition(" ")
    secret = secret.strip()
    return secret if scheme.lower() == "bearer" and secret else None


_FAILED = "sprintboard.failed_sign_in"


def count_failure(scope: MutableMapping[str, Any]) -> None:
    """Have the rate limiter count this request against the client address's budget of
    failed authentications, whatever its status (the sign-in form's failure is a 303)."""
    scope.setdefault("state", {})[_FAILED] = True


def counts_as_failure(scope: Mapping[str, Any]) -> bool:
    return bool(scope.get("state", {}).get(_FAILED))
