"""Browser sessions (contract §13, §19): an API key, or an email and password, exchanged
for the `sb_session` cookie.

The cookie holds a random token; the database holds only its SHA-256, the key it was opened
with (if any) and when it was last used, so every instance knows every session. A session
opened with a key acts as that key (permissions, workspace restriction) and ends with it:
when the key is revoked or expires. One opened with a password acts with all the user's
roles allow, and ends when the password changes. Either ends after `IDLE_TIMEOUT` without
use, when signed out, or when the user is deactivated.
"""

import hmac
import re
import secrets
from datetime import timedelta
from urllib.parse import urlsplit

from sqlalchemy import delete, select
from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import Response

from sprintboard import audit
from sprintboard.access import Caller
from sprintboard.credentials import hash_secret
from sprintboard.errors import CrossSiteRefused, InvalidRequest, NotFound, Unauthenticated
from sprintboard.identity import passwords
from sprintboard.identity.service import LAST_USED_RESOLUTION, authenticate, key_caller
from sprintboard.models import ApiKey, BrowserSession, User, utcnow
from sprintboard.sql import Columns, Getter, raw

COOKIE = "sb_session"
IDLE_TIMEOUT = timedelta(hours=12)
TOKEN_PREFIX = "sbs_"
_TOKEN = re.compile(r"^sbs_[A-Za-z0-9_-]{43}$")


class SignInFailed(Exception):
    """A password sign-in that failed: the same answer whatever the cause. Its record (the
    count against the email, the audit entry) is the request's only change, committed with
    the answer rather than rolled back as an error's would be."""

    error = Unauthenticated("The email or password is not right.")


def open_session(session: Session, *, secret: str) -> tuple[BrowserSession, str, Caller]:
    """A new session for the key `secret` (401 if it does not authenticate), its token (for
    the cookie only) and the caller it acts as."""
    return open_for(session, authenticate(session, secret))


def open_password_session(
    session: Session, *, email: str, password: str
) -> tuple[BrowserSession, str, Caller]:
    """A new session for the user with this email and password; `SignInFailed` for a wrong
    email or password, a deactivated user or one without a password, alike; 429 for an email
    locked out by its failures (checked first: its password is not even tried)."""
    refused = passwords.locked_out(session, email.lower())
    if refused is not None:
        raise refused
    user = passwords.verified_user(session, email=email, password=password)
    if user is None:
        passwords.record_failure(session, email=email)
        raise SignInFailed()
    return open_for(session, person(user.id, user.name, user.email, user.is_org_admin))


def person(
    user_id: str, name: str, email: str, is_org_admin: bool, session_id: str | None = None
) -> Caller:
    """A user acting as themself, with no key: all their roles allow (a password's session)."""
    return Caller(
        user_id=user_id,
        name=name,
        email=email,
        is_org_admin=is_org_admin,
        key_id=None,
        key_permissions=None,
        key_workspace_id=None,
        session_id=session_id,
    )


def sign_in(
    session: Session, *, key: str | None, email: str | None, password: str | None
) -> tuple[BrowserSession, str, Caller]:
    """`POST /sessions`: with a key, or with an email and password (not both)."""
    if key is not None:
        if email is not None or password is not None:
            raise InvalidRequest(
                "key", "invalid_value", "key: give a key, or an email and a password, not both."
            )
        return open_session(session, secret=key)
    if email is None and password is None:
        raise InvalidRequest("key", "required", "key: required (or an email and a password).")
    if email is None:
        raise InvalidRequest("email", "required", "email: required with a password.")
    if password is None:
        raise InvalidRequest("password", "required", "password: required with an email.")
    return open_password_session(session, email=email, password=password)


def open_for(
    session: Session, caller: Caller, *, method: str | None = None
) -> tuple[BrowserSession, str, Caller]:
    """A new session acting as `caller` (a key's, or a user's without one), its token and
    the caller it makes; sessions idle for too long are purged here."""
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
    audit.record(
        session,
        "session.created",
        actor=caller,
        target=audit.Target("session", browser_session.id),
        details={"method": method or ("password" if caller.key_id is None else "key")},
    )
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
JOIN users u ON u.id = s.user_id
LEFT JOIN api_keys k ON k.id = s.api_key_id
WHERE s.token_hash = :token_hash AND u.active
"""


def well_formed(token: str) -> bool:
    return _TOKEN.match(token) is not None


def session_owner(session: Session, token_hash: str) -> str | None:
    """The user a session acts for, if it may still act (the rate budget it draws on); the
    route checks the rest (idle time, the key's expiry). Through the ORM, as
    `service.usable_key` is, for the same reason: middleware runs it in any worker thread."""
    owner: str | None = session.scalar(
        select(BrowserSession.user_id)
        .join(User, User.id == BrowserSession.user_id)
        .outerjoin(ApiKey, ApiKey.id == BrowserSession.api_key_id)
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
    key_used = key(row)
    if key_used[0] is None:  # (opened with a password)
        user_id, name, email, is_org_admin = user(row)
        return person(user_id, name, email, codec.bool(is_org_admin), session_id)
    return key_caller(db, now=now, key=key_used, user=user(row), session_id=session_id)


def _authenticated(columns: Columns) -> tuple[Getter, Getter, Getter]:
    """What `authenticate_session` reads of its row: the session and what it checks, the
    key (as `key_caller` takes it) and its user."""
    return (
        columns.getter("session_id", "token_hash", "session_used", "expires_at", "revoked_at"),
        columns.getter("key_id", "permissions", "workspace_id", "key_used"),
        columns.getter("user_id", "name", "email", "is_org_admin"),
    )


def set_cookie(response: Response, request: Request, token: str) -> None:
    """The `sb_session` cookie: `HttpOnly`, `SameSite=Strict`, `Path=/`, `Secure` over HTTPS."""
    response.set_cookie(
        COOKIE,
        token,
        path="/",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )


def end_session(session: Session, *, caller: Caller) -> str:
    """Sign the caller's browser session out; its `$id`. A call made with a key has no
    session to end (404)."""
    if caller.session_id is None:
        raise NotFound("Browser session")
    session.execute(delete(BrowserSession).where(BrowserSession.id == caller.session_id))
    audit.record(
        session,
        "session.closed",
        actor=caller,
        target=audit.Target("session", caller.session_id),
    )
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
        allowed = [*settings.cors_origins, *([settings.public_url] if settings.public_url else [])]
        if seen in {_normalized(origin) for origin in allowed}:
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
