"""`Authentication`: how the HTTP layer learns who sent a request. The identity domain answers
that; the composition root (`app.create_app`) hands its functions in, so that this package
imports no domain and the domains import nothing of HTTP."""

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session
from starlette.requests import Request

from sprintboard.access import Caller


@dataclass(frozen=True)
class Authentication:
    cookie: str
    """The browser session's cookie."""
    by_key: Callable[[Session, str], Caller]
    """The caller of an API key's secret (401 `Unauthenticated` if it is not good)."""
    by_session: Callable[[Session, str], Caller]
    """The caller of a browser session's token (401 if it is not good)."""
    check_origin: Callable[[Request], None]
    """403 `csrf` for a change made with the cookie from an origin that may not."""
    key_owner: Callable[[Session, str], tuple[str, str] | None]
    """The id and user of the usable key with this secret hash: what middleware needs before
    the route authenticates (the rate budget, the idempotency record)."""
    session_owner: Callable[[Session, str], str | None]
    """The user of the browser session with this token hash, if it is good."""
    well_formed_session: Callable[[str], bool]
    """Whether a cookie's value could be a session's token (else no lookup)."""


def authentication_of(request: Request) -> Authentication:
    authentication: Authentication = request.app.state.authentication
    return authentication
