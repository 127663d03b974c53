"""Passwords (contract §19): Argon2id hashes, the rules a new password follows, and the
check of a sign-in by email, with its lock-out per email.

A sign-in that fails costs what one that succeeds does: an unknown email, a deactivated user
and a user without a password are checked against a dummy hash, so the time of the answer
says nothing about which it was. Its failure is counted against the email in the database
(`SignInFailure`), which every instance reads: past `FAILURE_LIMIT` failures within
`FAILURE_WINDOW` the email is refused (429) whatever the address and the password, until the
oldest of those failures leaves the window.
"""

import functools
import math
import secrets
from datetime import timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from sprintboard import audit
from sprintboard.access import Caller, for_change
from sprintboard.errors import AppError, InvalidRequest, RateLimited
from sprintboard.models import BrowserSession, SignInFailure, User, touched, utcnow

MIN_LENGTH = 10
MAX_LENGTH = 256
FAILURE_LIMIT = 10
FAILURE_WINDOW = timedelta(minutes=15)

_HASHER = PasswordHasher()
"""argon2-cffi's defaults: Argon2id with RFC 9106's low-memory parameters (64 MiB, t=3)."""


class RestrictedKey(AppError):
    """A key narrowed to some permissions or one workspace may not set a first password:
    signing in with it would give all the user's roles allow."""

    status = 403
    code = "FORBIDDEN"

    def __init__(self) -> None:
        super().__init__(
            "A key restricted to some permissions or a workspace cannot set a first password.",
            {"reason": "restricted_key"},
        )


class WrongPassword(AppError):
    status = 403
    code = "FORBIDDEN"

    def __init__(self) -> None:
        super().__init__(
            "currentPassword: missing or wrong; it is needed to change a password.",
            {"reason": "wrong_password"},
        )


def hash_password(password: str) -> str:
    return _HASHER.hash(password)


@functools.cache
def _dummy_hash() -> str:
    """A hash of nothing anyone knows, verified when there is no real one to verify."""
    return _HASHER.hash(secrets.token_urlsafe(32))


def matches(stored: str | None, password: str) -> bool:
    """Whether `password` is the one hashed in `stored`; with no hash, as slow a no."""
    try:
        return _HASHER.verify(stored or _dummy_hash(), password) and stored is not None
    except (VerificationError, InvalidHashError):
        return False


def check_new_password(password: str, *, email: str, field: str = "password") -> None:
    """The rule the schema cannot state: a password is not the account's email."""
    if password.casefold() == email.casefold():
        raise InvalidRequest(field, "invalid_value", f"{field}: must not be your email.")


def change_password(
    session: Session, *, caller: Caller, password: str, current_password: str | None
) -> None:
    """`PUT /me/password`: set the caller's password (the current one is needed once there
    is one) and end their other browser sessions."""
    user = session.scalars(
        for_change(session, select(User).where(User.id == caller.user_id), User)
    ).one()
    restricted = caller.key_permissions is not None or caller.key_workspace_id is not None
    if user.password_hash is None and restricted:
        raise RestrictedKey()
    if user.password_hash is not None and (
        current_password is None or not matches(user.password_hash, current_password)
    ):
        raise WrongPassword()
    check_new_password(password, email=user.email)
    set_password(session, user=user, password=password, keep_session=caller.session_id)
    audit.record(session, "password.changed", actor=caller, target=audit.Target("user", user.id))


def set_password(session: Session, *, user: User, password: str, keep_session: str | None) -> None:
    """Store a new password and end every browser session of the user but `keep_session`:
    whoever knew the old one is signed out."""
    user.password_hash = hash_password(password)
    user.updated_at = touched(user.updated_at)
    ended = delete(BrowserSession).where(BrowserSession.user_id == user.id)
    if keep_session is not None:
        ended = ended.where(BrowserSession.id != keep_session)
    session.execute(ended)


def locked_out(session: Session, email_normalized: str) -> RateLimited | None:
    """The 429 for an email that has failed `FAILURE_LIMIT` times within the window."""
    now = utcnow()
    oldest = session.scalar(
        select(SignInFailure.at)
        .where(
            SignInFailure.email_normalized == email_normalized,
            SignInFailure.at > now - FAILURE_WINDOW,
        )
        .order_by(SignInFailure.at.desc())
        .offset(FAILURE_LIMIT - 1)
        .limit(1)
    )
    if oldest is None:
        return None
    wait = (oldest + FAILURE_WINDOW - now).total_seconds()
    return RateLimited(retry_after=max(1, math.ceil(wait)))


def verified_user(session: Session, *, email: str, password: str) -> User | None:
    """The active user with this email and password, or None, at the same cost either way."""
    user = session.scalar(select(User).where(User.email_normalized == email.lower()))
    stored = user.password_hash if user is not None and user.active else None
    return user if matches(stored, password) else None


def record_failure(session: Session, *, email: str) -> None:
    """Count a failed sign-in against `email` and write it to the audit log (never the
    password). Failures that have left the window are dropped here."""
    now = utcnow()
    session.execute(delete(SignInFailure).where(SignInFailure.at <= now - FAILURE_WINDOW))
    session.add(SignInFailure(email_normalized=email.lower(), at=now))
    audit.record(
        session,
        "session.failed",
        actor=None,
        target=audit.Target("session", None),
        details={"email": email},
    )
