"""Password resets (contract §19): a link good once, for an hour, that sets a new password.

`POST /password-resets` answers the same whether or not the email has an account. For an
active account it stores a token's SHA-256 (never the token); the token itself leaves only
in the mail (written in this transaction to the outbox, sealed, sent by the delivery loop).
Without mail configured a reset is not even issued: nobody could use it.
"""

import secrets
from datetime import timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from sprintboard import audit
from sprintboard.access import for_change
from sprintboard.credentials import hash_secret
from sprintboard.errors import InvalidRequest
from sprintboard.identity import passwords
from sprintboard.mail.outbox import Outbox
from sprintboard.models import PasswordReset, User, utcnow

LIFETIME = timedelta(hours=1)
TOKEN_PREFIX = "sbr_"


def request_reset(session: Session, *, email: str, link_root: str, outbox: Outbox | None) -> None:
    """`POST /password-resets`: mail a reset link to the active user with this email, if
    any (and if mail is configured)."""
    if outbox is None:
        return
    user = session.scalar(select(User).where(User.email_normalized == email.lower(), User.active))
    if user is None:
        return
    token = issue_reset(session, user=user)
    outbox.write(
        session,
        kind="password_reset",
        to=user.email,
        subject="Reset your sprintboard password",
        body=(
            "Someone (we hope you) asked to reset the password of your sprintboard account.\n\n"
            f"Choose a new password here (the link works once, for 1 hour):\n"
            f"{link_root}/reset/{token}\n\n"
            "If you did not ask for it, ignore this mail: your password stays as it is.\n"
        ),
    )


def issue_reset(session: Session, *, user: User) -> str:
    """A new reset for `user`; its token, for the mail only."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    now = utcnow()
    session.add(
        PasswordReset(
            user_id=user.id,
            token_hash=hash_secret(token),
            created_at=now,
            expires_at=now + LIFETIME,
        )
    )
    return token


def confirm_reset(session: Session, *, token: str, password: str) -> None:
    """`POST /password-resets/confirm`: set the password and end every browser session of
    the user. The reset's row is locked first, so it works once even when sent twice at
    once; the user's other pending resets are used up with it."""
    invalid = InvalidRequest(
        "token", "invalid_value", "token: not a pending password reset (unknown, used or expired)."
    )
    if not token.startswith(TOKEN_PREFIX):
        raise invalid
    now = utcnow()
    reset = session.scalars(
        for_change(
            session,
            select(PasswordReset).where(PasswordReset.token_hash == hash_secret(token)),
            PasswordReset,
        )
    ).first()
    if reset is None or reset.used_at is not None or reset.expires_at <= now:
        raise invalid
    user = session.scalars(
        for_change(session, select(User).where(User.id == reset.user_id), User)
    ).one()
    passwords.check_new_password(password, email=user.email)
    passwords.set_password(session, user=user, password=password, keep_session=None)
    session.execute(
        update(PasswordReset)
        .where(PasswordReset.user_id == user.id, PasswordReset.used_at.is_(None))
        .values(used_at=now)
    )
    audit.record(session, "password.reset", actor=user, target=audit.Target("user", user.id))
