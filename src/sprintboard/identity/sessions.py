"""Browser sessions (contract §13): an API key exchanged for the `sb_session` cookie.

The cookie holds a random token; the database holds only its SHA-256, the key it was opened
with and when it was last used, so every instance knows every session. A session acts as its
key (permissions, workspace restriction) and ends with it: when the key is revoked or
expires, after `IDLE_TIMEOUT` without use, or when signed out.
"""

import hmac
import re
import secrets
from datetime import timedelta
from urllib.parse import urlsplit

from sqlalchemy import delete, select
from sqlalchemy.orm import Session
from starlette.requests import Request

from sprintboard.access import Caller
from sprintboard.credentials import hash_secret
from sprintboard.errors import CrossSiteRefused, NotFound, Unauthenticated
from sprintboard.identity.service import LAST_USED_RESOLUTION, authenticate, key_caller
from sprintboard.models import ApiKey, BrowserSession, User, utcnow
from sprintboard.sql import Columns, Getter, raw

COOKIE = "sb_session"
IDLE_TIMEOUT = timedelta(hours=12)
TOKEN_PREFIX = "sbs_"
_TOKEN = re.compile(r"^sbs_[A-Za-z0-9_-]{43}$")


def open_session(session: Session, *, secret: str) -> tuple[BrowserSession, str, Caller]:
    """A new session for the key `secret` (401 if it does not authenticate), its token (for
    the cookie only) and the caller it acts as. Sessions idle for too long are purged here."""
    caller = authenticate(session, secret)
    now = utcnow()
    session.execute(delete(BrowserSession).where(BrowserSession.last_used_at < now - IDLE_TIMEOUT))
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    browser_session = BrowserSession(
        token_hash=hash_secret(token),
        api_key_id=caller.key_id,
        user_id=caller.user_id,
        created_at=now,
        last_used_at=now,
    )
    session.add(browser_session)
    session.flush()
    return browser_session, token, _as_session(caller, browser_session.id)


def _as_session(caller: Caller, session_id: str) -> Caller:
    return Caller(
        user_id=caller.user_id,
        name=caller.name,
        email=caller.email,
        is_org_admin=caller.is_org_admin,
        key_id=caller.key_id,
        key_permissions=caller.key_permissions,
        key_workspace_id=caller.key_workspace_id,
        session_id=session_id,
    )


_AUTHENTICATE = """
SELECT s.id AS session_id, s.token_hash, s.last_used_at AS session_used, k.id AS key_id,
       k.permissions, k.workspace_id, k.expires_at, k.last_used_at AS key_used, k.revoked_at,
       u.id AS user_id, u.name, u.email, u.is_org_admin
FROM browser_sessions s
JOIN api_keys k ON k.id = s.api_key_id
JOIN users u ON u.id = k.user_id
WHERE s.token_hash = :token_hash AND u.active
"""


def well_formed(token: str) -> bool:
    return _TOKEN.match(token) is not None


def session_owner(session: Session, token_hash: str) -> str | None:
    """The user a session acts for, if it may still act (the rate budget it draws on); the
    route checks the rest (idle time, the key's expiry). Through the ORM, as
    `service.usable_key` is, for the same reason: middleware runs it in any worker thread."""
    owner: str | None = session.scalar(
        select(ApiKey.user_id)
        .join(BrowserSession, BrowserSession.api_key_id == ApiKey.id)
        .join(User, User.id == ApiKey.user_id)
        .where(BrowserSession.token_hash == token_hash, ApiKey.revoked_at.is_(None), User.active)
    )
    return owner


def authenticate_session(session: Session, token: str) -> Caller:
    """The caller behind a session cookie (401 for an unknown, idle or ended session, or one
    whose key was revoked or has expired). Runs on every browser request, hence plain SQL."""
    if not well_formed(token):
        raise Unauthenticated("The browser session is not valid; sign in again.")
    token_hash = hash_secret(token)
    db = raw(session)
    row, columns = db.fetch_one(_AUTHENTICATE, {"token_hash": token_hash})
    invalid = "The browser session is not valid; sign in again."
    if row is None:
        raise Unauthenticated(invalid)
    check, key, user = columns.made(_authenticated)
    session_id, stored_hash, session_used, expires_at, revoked_at = check(row)
    if not hmac.compare_digest(stored_hash, token_hash):
        raise Unauthenticated(invalid)
    codec = db.codec
    now = utcnow()
    if revoked_at is not None:
        raise Unauthenticated("The API key of this browser session has been revoked.")
    expires = codec.moment(expires_at)
    if expires is not None and expires <= now:
        raise Unauthenticated("The API key of this browser session has expired.")
    session_last_used = codec.moment(session_used)
    assert session_last_used is not None
    if now - session_last_used >= IDLE_TIMEOUT:
        raise Unauthenticated("The browser session has ended after 12 hours without use.")
    if now - session_last_used >= LAST_USED_RESOLUTION:
        db.execute(
            "UPDATE browser_sessions SET last_used_at = :now WHERE id = :id",
            {"now": codec.param(now), "id": session_id},
        )
    return key_caller(db, now=now, key=key(row), user=user(row), session_id=session_id)


def _authenticated(columns: Columns) -> tuple[Getter, Getter, Getter]:
    """What `authenticate_session` reads of its row: the session and what it checks, the
    key (as `key_caller` takes it) and its user."""
    return (
        columns.getter("session_id", "token_hash", "session_used", "expires_at", "revoked_at"),
        columns.getter("key_id", "permissions", "workspace_id", "key_used"),
        columns.getter("user_id", "name", "email", "is_org_admin"),
    )


def end_session(session: Session, *, caller: Caller) -> str:
    """Sign the caller's browser session out; its `$id`. A call made with a key has no
    session to end (404)."""
    if caller.session_id is None:
        raise NotFound("Browser session")
    session.execute(delete(BrowserSession).where(BrowserSession.id == caller.session_id))
    return caller.session_id


def check_origin(request: Request, *, required: bool) -> None:
    """403 `csrf` unless the request's `Origin` is the service's own (the scheme, host and
    port it was addressed by) or one of `SPRINTBOARD_CORS_ORIGINS`. Browsers send `Origin`
    with every POST, PATCH and DELETE, so a change made with the cookie must carry one
    (`required`); signing in checks it only when sent (scripts send none), which stops
    another site from signing a browser in to an account of its choosing."""
    origin = request.headers.get("origin")
    if origin is None:
        if required:
            raise CrossSiteRefused(None)
        return
    seen = _normalized(origin)
    if seen is not None:
        own = _normalized(f"{request.url.scheme}://{request.headers.get('host', '')}")
        if seen == own:
            return
        settings = request.app.state.settings
        if seen in {_normalized(allowed) for allowed in settings.cors_origins}:
            return
    raise CrossSiteRefused(origin)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _normalized(origin: str) -> tuple[str, str, int] | None:
    """`(scheme, host, port)` of an origin, or None for one that names no site (`null`)."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme]
