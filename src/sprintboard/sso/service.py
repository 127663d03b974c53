"""Who an OpenID Connect sign-in is (contract §19): the user with the verified email (any
case). An email without a user is refused unless a pending invitation names it (the user is
made and every pending invitation of the email accepted) or its domain is in
`SPRINTBOARD_OIDC_ALLOWED_DOMAINS` (the user is made, with no workspace)."""

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sprintboard import audit
from sprintboard.access import Caller, for_change
from sprintboard.errors import AppError
from sprintboard.identity import service as identity
from sprintboard.identity import sessions
from sprintboard.invitations import service as invitations
from sprintboard.models import User


class Refused(AppError):
    """A verified person this service does not let in (shown as a 403 page)."""

    status = 403
    code = "FORBIDDEN"

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message, {"reason": reason})


def sign_in(
    session: Session, *, claims: dict[str, Any], allowed_domains: list[str]
) -> tuple[str, Caller]:
    """Opens a browser session for the person `claims` name; its token and caller."""
    email = claims.get("email")
    if not isinstance(email, str) or "@" not in email:
        raise Refused("Your identity provider did not give an email address.", "no_email")
    if claims.get("email_verified") is not True:
        _failed(session, email, "email_not_verified")
        raise Refused(
            "Your identity provider has not verified your email address.", "email_not_verified"
        )
    user = session.scalars(
        for_change(session, select(User).where(User.email_normalized == email.lower()), User)
    ).first()
    if user is None:
        pending = invitations.pending_for(session, email=email)
        domain = email.rsplit("@", 1)[1].lower()
        if not pending and domain not in allowed_domains:
            _failed(session, email, "no_account")
            raise Refused("There is no account for this email address here.", "no_account")
        name = claims.get("name")
        user = identity.create_user(
            session,
            name=name if isinstance(name, str) and name.strip() else email.split("@", 1)[0],
            email=email,
            actor=None,
        )
        acting = sessions.person(user.id, user.name, user.email, user.is_org_admin)
        for invitation in pending:
            invitations.use_up(session, invitation=invitation, user=user, acting=acting)
    elif not user.active:
        _failed(session, email, "deactivated")
        raise Refused("There is no account for this email address here.", "no_account")
    caller = sessions.person(user.id, user.name, user.email, user.is_org_admin)
    _, token, signed_in = sessions.open_for(session, caller, method="oidc")
    return token, signed_in


def _failed(session: Session, email: str, reason: str) -> None:
    audit.record(
        session,
        "session.failed",
        actor=None,
        target=audit.Target("session", None),
        details={"email": email, "method": "oidc", "reason": reason},
    )
