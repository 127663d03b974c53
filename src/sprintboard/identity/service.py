"""Users and API keys: creation, authentication, revocation."""

import hmac
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from sprintboard import audit
from sprintboard.access import Caller, Permission, for_change
from sprintboard.concurrency import check_if_match, stamp_version
from sprintboard.credentials import hash_secret, new_secret, well_formed
from sprintboard.cursors import ListPage, Window
from sprintboard.errors import Conflict, Forbidden, InvalidRequest, NotFound, Unauthenticated
from sprintboard.identity.schemas import EMAIL_PATTERN
from sprintboard.models import ApiKey, User, Workspace, WorkspaceMember, touched, utcnow
from sprintboard.sql import Columns, Getter, Raw, raw

MAX_KEYS_PER_USER = 25
"""Unrevoked keys one user may hold: each is a way in to revoke when a user leaves."""
LAST_USED_RESOLUTION = timedelta(minutes=1)
"""`lastUsedAt` is written at most this often per key, so reads do not write on every call."""

_EMAIL = re.compile(EMAIL_PATTERN)

_AUTHENTICATE = """
SELECT k.id AS key_id, k.secret_hash, k.permissions, k.workspace_id, k.expires_at,
       k.last_used_at, k.revoked_at, u.id AS user_id, u.name, u.email, u.is_org_admin, u.active
FROM api_keys k JOIN users u ON u.id = k.user_id
WHERE k.secret_hash = :secret_hash
"""


def authenticate(session: Session, secret: str) -> Caller:
    """The caller behind an API key secret. Runs on every request, hence plain SQL."""
    if not well_formed(secret):
        raise Unauthenticated()
    secret_hash = hash_secret(secret)
    db = raw(session)
    row, columns = db.fetch_one(_AUTHENTICATE, {"secret_hash": secret_hash})
    if row is None:
        raise Unauthenticated()
    check, key, user = columns.made(_authenticated)
    stored_hash, expires_at, revoked_at, active = check(row)
    if not hmac.compare_digest(stored_hash, secret_hash):
        raise Unauthenticated()
    now = utcnow()
    if revoked_at is not None:
        raise Unauthenticated("This API key has been revoked.")
    if not db.codec.bool(active):
        raise Unauthenticated("This API key's user has been deactivated.")
    expires = db.codec.moment(expires_at)
    if expires is not None and expires <= now:
        raise Unauthenticated("This API key has expired.")
    return key_caller(db, now=now, key=key(row), user=user(row))


def _authenticated(columns: Columns) -> tuple[Getter, Getter, Getter]:
    """What `authenticate` reads of its row: what it checks, the key (as `key_caller` takes
    it) and its user."""
    return (
        columns.getter("secret_hash", "expires_at", "revoked_at", "active"),
        columns.getter("key_id", "permissions", "workspace_id", "last_used_at"),
        columns.getter("user_id", "name", "email", "is_org_admin"),
    )


def key_caller(
    db: Raw,
    *,
    now: datetime,
    key: tuple[str, Any, str | None, Any],
    user: tuple[str, str, str, Any],
    session_id: str | None = None,
) -> Caller:
    """The caller a usable key (`id, permissions, workspace_id, last_used_at`) makes for its
    user (`id, name, email, is_org_admin`), directly or through a browser session; the key's
    `lastUsedAt` is written at most once per `LAST_USED_RESOLUTION`."""
    key_id, permissions, workspace_id, last_used_at = key
    codec = db.codec
    last_used = codec.moment(last_used_at)
    if last_used is None or now - last_used >= LAST_USED_RESOLUTION:
        db.execute(
            "UPDATE api_keys SET last_used_at = :now WHERE id = :id",
            {"now": codec.param(now), "id": key_id},
        )
    permissions = codec.json(permissions)
    return Caller(
        user_id=user[0],
        name=user[1],
        email=user[2],
        is_org_admin=codec.bool(user[3]),
        key_id=key_id,
        key_permissions=frozenset(permissions) if permissions is not None else None,
        key_workspace_id=workspace_id,
        session_id=session_id,
    )


def usable_key(session: Session, secret_hash: str) -> tuple[str, str] | None:
    """The id and owner of the key with this secret hash if it would authenticate (neither
    revoked nor expired, its user active): what the middleware needs before the route
    authenticates (the rate budget to draw on, the idempotency record to claim).

    Through the ORM, not `sql.raw`: middleware runs this in any worker thread, and a read
    session's plain SQL would keep a connection for each such thread; the ORM's goes back to
    the pool when the session closes.
    """
    row = session.execute(
        select(ApiKey.id, ApiKey.user_id, ApiKey.expires_at)
        .join(User, User.id == ApiKey.user_id)
        .where(ApiKey.secret_hash == secret_hash, ApiKey.revoked_at.is_(None), User.active)
    ).first()
    if row is None or (row.expires_at is not None and row.expires_at <= utcnow()):
        return None
    return row.id, row.user_id


def check_email(email: str) -> None:
    if not _EMAIL.match(email):
        raise InvalidRequest("email", "invalid_format", "email: not an email address.")


def create_user(
    session: Session,
    *,
    name: str,
    email: str,
    is_org_admin: bool = False,
    actor: Caller | None = None,
) -> User:
    """A new user; `actor` is the admin who made it (none for `create-admin` or an
    invitation's acceptance, where the user comes of itself)."""
    check_email(email)
    normalized = email.lower()
    if session.scalar(select(User.id).where(User.email_normalized == normalized)) is not None:
        raise Conflict("duplicate_email", "A user with this email already exists.")
    user = User(name=name, email=email, email_normalized=normalized, is_org_admin=is_org_admin)
    session.add(user)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        raise Conflict("duplicate_email", "A user with this email already exists.") from None
    audit.record(
        session,
        "user.created",
        actor=actor,
        target=audit.Target("user", user.id),
        details={"email": email, "isOrgAdmin": is_org_admin},
    )
    return user


def list_users(session: Session, *, window: Window) -> ListPage:
    return window.page(session, select(User), User.created_at, User.id)


def get_user(session: Session, user_id: str) -> User:
    user = session.get(User, user_id)
    if user is None:
        raise NotFound("User")
    return user


def key_of(session: Session, caller: Caller) -> ApiKey | None:
    """The key the caller signed in with (a browser session opened with one: its key), or
    None for a person signed in with a password."""
    if caller.key_id is None:
        return None
    key = session.get(ApiKey, caller.key_id)
    assert key is not None  # (authentication just read it)
    return key


def update_user(
    session: Session,
    *,
    caller: Caller,
    user_id: str,
    name: str | None,
    is_org_admin: bool | None,
    active: bool | None,
    fields: set[str],
    if_match: str | None,
) -> User:
    """An organization admin's change to a user: name, organization admin, active.

    Both rows are locked (in id order), and the caller's standing read again under the lock:
    two admins who demote each other at once take turns, and the second, no longer an admin,
    is refused. An admin may not deactivate themself (Jira's and Linear's rule: it would lock
    them out of the panel that undoes it), nor give up admin while no other active admin
    remains (409 `last_admin`).
    """
    rows: Sequence[User] = session.scalars(
        for_change(
            session,
            select(User).where(User.id.in_({user_id, caller.user_id})).order_by(User.id),
            User,
        )
    ).all()
    by_id = {user.id: user for user in rows}
    me = by_id.get(caller.user_id)
    if me is None or not me.active:
        raise Unauthenticated()
    if not me.is_org_admin:
        raise Forbidden(Permission.ORG_ADMIN)
    user = by_id.get(user_id)
    if user is None:
        raise NotFound("User")
    check_if_match(if_match, user.id, stamp_version(user.updated_at))
    if user.id == caller.user_id:
        if "active" in fields and active is False:
            raise Conflict("cannot_deactivate_self", "You cannot deactivate yourself.")
        if "is_org_admin" in fields and is_org_admin is False and user.is_org_admin:
            other_admins = session.scalar(
                select(func.count())
                .select_from(User)
                .where(User.is_org_admin, User.active, User.id != user.id)
            )
            if not other_admins:
                raise Conflict(
                    "last_admin", "You are the last organization admin; appoint another first."
                )
    changed = False
    if "name" in fields and name is not None and name != user.name:
        user.name, changed = name, True
    if "is_org_admin" in fields and is_org_admin is not None and is_org_admin != user.is_org_admin:
        user.is_org_admin, changed = is_org_admin, True
    if "active" in fields and active is not None and active != user.active:
        user.active, changed = active, True
    if changed:
        user.updated_at = touched(user.updated_at)
        audit.record(
            session,
            "user.updated",
            actor=caller,
            target=audit.Target("user", user.id),
            details={
                "fields": sorted(
                    _AUDITED_USER_FIELDS[f] for f in fields if f in _AUDITED_USER_FIELDS
                )
            }
            | {"isOrgAdmin": user.is_org_admin, "active": user.active},
        )
    return user


_AUDITED_USER_FIELDS = {"name": "name", "is_org_admin": "isOrgAdmin", "active": "active"}


def update_me(
    session: Session, *, caller: Caller, email_notifications: bool | None, fields: set[str]
) -> User:
    """`PATCH /me`: the caller's own settings (a key of any scope may change them: they
    grant nothing). Turning email notifications on starts with what is notified from now."""
    user: User = session.scalars(
        for_change(session, select(User).where(User.id == caller.user_id), User)
    ).one()
    wanted = email_notifications
    if (
        "email_notifications" in fields
        and wanted is not None
        and wanted != user.email_notifications
    ):
        user.email_notifications = wanted
        user.updated_at = touched(user.updated_at)
        audit.record(
            session,
            "user.updated",
            actor=caller,
            target=audit.Target("user", user.id),
            details={"fields": ["emailNotifications"], "emailNotifications": wanted},
        )
    return user


def create_key(
    session: Session,
    *,
    caller: Caller | None,
    owner: User,
    name: str,
    permissions: list[Permission] | None,
    workspace_id: str | None,
    expires_at: datetime | None,
) -> tuple[ApiKey, str]:
    """A new key for `owner`, and its secret (shown once, stored only as a hash).

    A key minted with a narrowed key can be no broader than the key that minted it: it keeps
    that key's workspace and may only hold permissions that key holds.
    """
    if caller is not None and caller.user_id == owner.id:
        if caller.key_permissions is not None:
            if permissions is None:
                permissions = [Permission(p) for p in sorted(caller.key_permissions)]
            elif not set(permissions) <= caller.key_permissions:
                raise InvalidRequest(
                    "permissions", "invalid_value", "permissions: broader than this key's own."
                )
        if caller.key_workspace_id is not None:
            if workspace_id not in (None, caller.key_workspace_id):
                raise InvalidRequest(
                    "workspaceId", "invalid_value", "workspaceId: this key is for another one."
                )
            workspace_id = caller.key_workspace_id
    if expires_at is not None and expires_at <= utcnow():
        raise InvalidRequest("expiresAt", "invalid_value", "expiresAt: must be in the future.")
    if caller is not None:  # (`create-admin` is the way back in for an admin who lost them all)
        _check_key_limit(session, owner)
    # The workspace locked for key share, as the key's row will: a delete of it waits for
    # this key (and takes it along), or has gone first and the workspace is not found.
    if workspace_id is not None and (
        session.scalar(
            select(WorkspaceMember.id)
            .join(Workspace, Workspace.id == WorkspaceMember.workspace_id)
            .where(
                WorkspaceMember.workspace_id == workspace_id, WorkspaceMember.user_id == owner.id
            )
            .with_for_update(of=Workspace, read=True, key_share=True)
        )
        is None
    ):
        raise InvalidRequest("workspaceId", "not_found", "workspaceId: no such workspace.")
    secret = new_secret()
    key = ApiKey(
        user_id=owner.id,
        name=name,
        prefix=secret[:10],
        secret_hash=hash_secret(secret),
        permissions=sorted(set(permissions)) if permissions is not None else None,
        workspace_id=workspace_id,
        expires_at=expires_at,
    )
    session.add(key)
    session.flush()
    audit.record(
        session,
        "key.created",
        actor=caller,
        target=audit.Target("key", key.id),
        workspace_id=workspace_id,
        details={"userId": owner.id, "name": name, "prefix": key.prefix},
    )
    return key, secret


def _check_key_limit(session: Session, owner: User) -> None:
    """409 `key_limit` once `owner` holds `MAX_KEYS_PER_USER` unrevoked keys. The owner's
    row is locked first, so two creates at once count one after the other."""
    session.execute(for_change(session, select(User.id).where(User.id == owner.id), User)).first()
    held = session.scalar(
        select(func.count())
        .select_from(ApiKey)
        .where(ApiKey.user_id == owner.id, ApiKey.revoked_at.is_(None))
    )
    if (held or 0) >= MAX_KEYS_PER_USER:
        raise Conflict(
            "key_limit",
            f"A user holds at most {MAX_KEYS_PER_USER} unrevoked keys; revoke one first.",
            limit=MAX_KEYS_PER_USER,
        )


def list_keys(session: Session, *, user_id: str, window: Window) -> ListPage:
    query = select(ApiKey).where(ApiKey.user_id == user_id)
    return window.page(session, query, ApiKey.created_at, ApiKey.id)


def revoke_key(
    session: Session, *, caller: Caller, key_id: str, if_match: str | None = None
) -> ApiKey:
    """Revoke one of the caller's keys (an organization admin may revoke anyone's)."""
    key = session.get(ApiKey, key_id)
    is_admin = caller.is_org_admin and caller.allows(Permission.ORG_ADMIN)
    if key is None or (key.user_id != caller.user_id and not is_admin):
        raise NotFound("API key")
    check_if_match(if_match, key.id, stamp_version(key.updated_at))
    if key.revoked_at is None:
        key.revoked_at = key.updated_at = touched(key.updated_at)
        audit.record(
            session,
            "key.revoked",
            actor=caller,
            target=audit.Target("key", key.id),
            details={"userId": key.user_id, "prefix": key.prefix},
        )
    return key
