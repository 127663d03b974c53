"""Invitations to a workspace by email (contract §19).

The token is 256 random bits, shown once (in the create's `url`) and stored only as its
SHA-256. An invitation is pending until it is accepted, revoked or expires; a token that is
none of these is refused with one answer, whichever it was. Accepting locks the invitation's
row first (PostgreSQL; SQLite's writer holds the database), so of two accepts at once the
second finds it used: it is good exactly once.
"""

import secrets
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, select
from sqlalchemy.orm import Session

from sprintboard import audit
from sprintboard.access import Caller, Role, WorkspaceAccess, for_change, lock_workspace
from sprintboard.credentials import hash_secret
from sprintboard.cursors import ListPage, Window
from sprintboard.errors import AppError, Conflict, InvalidRequest, NotFound, Unauthenticated
from sprintboard.identity import passwords, sessions
from sprintboard.identity import service as identity
from sprintboard.mail.outbox import Outbox
from sprintboard.models import Invitation, User, Workspace, WorkspaceMember, touched, utcnow
from sprintboard.workspaces import service as workspaces

LIFETIME = timedelta(days=7)
TOKEN_PREFIX = "sbi_"


class WrongUser(AppError):
    """Signed in, but not as the account the invitation is for."""

    status = 403
    code = "FORBIDDEN"

    def __init__(self) -> None:
        super().__init__(
            "This invitation is for another account; sign in as that one.",
            {"reason": "wrong_user"},
        )


def _invalid_token() -> InvalidRequest:
    return InvalidRequest(
        "token",
        "invalid_value",
        "token: not a pending invitation (unknown, used, revoked or expired).",
    )


def _pending(now: datetime) -> ColumnElement[bool]:
    return and_(
        Invitation.accepted_at.is_(None),
        Invitation.revoked_at.is_(None),
        Invitation.expires_at > now,
    )


def create_invitation(
    session: Session,
    *,
    access: WorkspaceAccess,
    email: str,
    role: Role,
    link_root: str,
    outbox: Outbox | None,
) -> tuple[Invitation, str]:
    """A new invitation and its link (`<link_root>/invite/<token>`, for the answer and the
    mail only). The workspace's row is locked first, so two invitations of one email at
    once are checked one after the other."""
    identity.check_email(email)
    normalized = email.lower()
    workspace_id = access.workspace_id
    lock_workspace(session, workspace_id)
    member = session.scalar(
        select(WorkspaceMember.id)
        .join(User, User.id == WorkspaceMember.user_id)
        .where(WorkspaceMember.workspace_id == workspace_id, User.email_normalized == normalized)
    )
    if member is not None:
        raise Conflict("duplicate_member", "A member of this workspace has this email.")
    now = utcnow()
    pending = session.scalar(
        select(Invitation.id).where(
            Invitation.workspace_id == workspace_id,
            Invitation.email_normalized == normalized,
            _pending(now),
        )
    )
    if pending is not None:
        raise Conflict("duplicate_invitation", "This email already has a pending invitation here.")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    invitation = Invitation(
        workspace_id=workspace_id,
        email=email,
        email_normalized=normalized,
        role=role,
        token_hash=hash_secret(token),
        invited_by=access.caller.user_id,
        expires_at=now + LIFETIME,
        created_at=now,
    )
    session.add(invitation)
    session.flush()
    url = f"{link_root}/invite/{token}"
    if outbox is not None:
        workspace = session.get(Workspace, workspace_id)
        place = workspace.name if workspace is not None else "a workspace"
        outbox.write(
            session,
            kind="invitation",
            to=email,
            subject=f"{access.caller.name} invited you to {place} on sprintboard"[:255],
            body=(
                f"{access.caller.name} ({access.caller.email}) invited you to join {place}"
                f" on sprintboard as {role}.\n\n"
                f"Accept the invitation here (the link works once, for 7 days):\n{url}\n\n"
                "If you did not expect it, ignore this mail.\n"
            ),
        )
    audit.record(
        session,
        "invitation.created",
        actor=access.caller,
        target=audit.Target("invitation", invitation.id),
        workspace_id=workspace_id,
        details={"email": email, "role": str(role)},
    )
    return invitation, url


def list_pending(session: Session, *, workspace_id: str, window: Window) -> ListPage:
    query = select(Invitation).where(Invitation.workspace_id == workspace_id, _pending(utcnow()))
    return window.page(session, query, Invitation.created_at, Invitation.id)


def revoke_invitation(session: Session, *, access: WorkspaceAccess, invitation: Invitation) -> None:
    """Revoke a pending invitation; one already used, revoked or expired is not found."""
    now = utcnow()
    if not (invitation.accepted_at is None and invitation.revoked_at is None):
        raise NotFound("Invitation")
    if invitation.expires_at <= now:
        raise NotFound("Invitation")
    invitation.revoked_at = now
    invitation.updated_at = touched(invitation.updated_at)
    audit.record(
        session,
        "invitation.revoked",
        actor=access.caller,
        target=audit.Target("invitation", invitation.id),
        workspace_id=invitation.workspace_id,
        details={"email": invitation.email},
    )


def accept_invitation(
    session: Session,
    *,
    token: str,
    name: str | None,
    password: str | None,
    caller: Caller | None,
) -> tuple[User, Invitation, Caller]:
    """Use an invitation up: the user (made now, for an email without one, from `name` and
    `password`; else the signed-in caller, who must be that user) becomes a member with its
    role. Answers the user, the invitation and whom the new browser session acts as."""
    if not token.startswith(TOKEN_PREFIX):
        raise _invalid_token()
    now = utcnow()
    invitation = session.scalars(
        for_change(
            session,
            select(Invitation).where(Invitation.token_hash == hash_secret(token)),
            Invitation,
        )
    ).first()
    if invitation is None or not (
        invitation.accepted_at is None
        and invitation.revoked_at is None
        and invitation.expires_at > now
    ):
        raise _invalid_token()
    user = session.scalar(select(User).where(User.email_normalized == invitation.email_normalized))
    if user is not None:
        if caller is None:
            raise Unauthenticated("Sign in as the invited account to accept this invitation.")
        if caller.user_id != user.id:
            raise WrongUser()
        acting = caller
    else:
        if name is None:
            raise InvalidRequest("name", "required", "name: required for a new account.")
        if password is None:
            raise InvalidRequest("password", "required", "password: required for a new account.")
        passwords.check_new_password(password, email=invitation.email)
        user = identity.create_user(session, name=name, email=invitation.email, actor=None)
        user.password_hash = passwords.hash_password(password)
        acting = sessions.person(user.id, user.name, user.email, user.is_org_admin)
    use_up(session, invitation=invitation, user=user, acting=acting)
    return user, invitation, acting


def use_up(session: Session, *, invitation: Invitation, user: User, acting: Caller) -> None:
    """`user` joins the invitation's workspace with its role; the invitation is used."""
    workspaces.add_member(
        session,
        workspace_id=invitation.workspace_id,
        user_id=user.id,
        role=Role(invitation.role),
        actor=acting,
    )
    invitation.accepted_at = utcnow()
    invitation.accepted_by = user.id
    invitation.updated_at = touched(invitation.updated_at)
    audit.record(
        session,
        "invitation.accepted",
        actor=acting,
        target=audit.Target("invitation", invitation.id),
        workspace_id=invitation.workspace_id,
        details={"email": invitation.email, "role": invitation.role},
    )


def pending_for(session: Session, *, email: str) -> list[Invitation]:
    """The pending invitations of an email, in every workspace, locked for use."""
    query = (
        select(Invitation)
        .where(Invitation.email_normalized == email.lower(), _pending(utcnow()))
        .order_by(Invitation.id)
    )
    return list(session.scalars(for_change(session, query, Invitation)))
