"""Integrations (contract §20): made, read, changed and deleted by a workspace's admins; each
with a secret that is shown once and kept sealed (as webhook secrets are), and a user of its
own that its changes are made by."""

import secrets
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sprintboard import audit
from sprintboard.access import Caller, lock_workspace
from sprintboard.cursors import ListPage, Window
from sprintboard.errors import Conflict
from sprintboard.models import Integration, User, new_id, utcnow
from sprintboard.responses import iso
from sprintboard.serverkey import SecretBox

MAX_INTEGRATIONS_PER_WORKSPACE = 10
PROVIDER_NAMES = {"github": "GitHub", "gitlab": "GitLab", "gitea": "Gitea"}
HOOK_PATH = "/api/v1/integrations/{id}/hooks"


def create_integration(
    session: Session,
    *,
    workspace_id: str,
    provider: str,
    name: str | None,
    on_open: str | None,
    on_merge: str | None,
    actor: Caller,
    box: SecretBox,
) -> tuple[Integration, str]:
    """The new integration and its secret, in plain text this once (it is stored sealed).
    Its user is made with it: no member of any workspace, no key, no password, so it can
    do nothing but what the integration's hooks do."""
    lock_workspace(session, workspace_id)  # (two creates count one after the other)
    count = session.scalar(
        select(func.count())
        .select_from(Integration)
        .where(Integration.workspace_id == workspace_id)
    )
    if (count or 0) >= MAX_INTEGRATIONS_PER_WORKSPACE:
        raise Conflict(
            "integration_limit",
            f"A workspace has at most {MAX_INTEGRATIONS_PER_WORKSPACE} integrations.",
            limit=MAX_INTEGRATIONS_PER_WORKSPACE,
        )
    integration_id = new_id()
    name = name or PROVIDER_NAMES[provider]
    # (A reserved domain: the address can never receive mail nor collide with a person's.)
    email = f"integration-{integration_id}@integrations.invalid"
    user = User(name=name, email=email, email_normalized=email, is_org_admin=False)
    session.add(user)
    session.flush()
    secret = secrets.token_urlsafe(32)
    integration = Integration(
        id=integration_id,
        workspace_id=workspace_id,
        provider=provider,
        name=name,
        secret_encrypted=box.seal(secret),
        on_open=on_open,
        on_merge=on_merge,
        user_id=user.id,
        created_by=actor.user_id,
    )
    session.add(integration)
    session.flush()
    _audit(session, "integration.created", actor, integration, provider=provider)
    return integration, secret


def _audit(
    session: Session, action: str, actor: Caller, integration: Integration, **details: Any
) -> None:
    audit.record(
        session,
        action,
        actor=actor,
        target=audit.Target("integration", integration.id),
        workspace_id=integration.workspace_id,
        details=details,
    )


def update_integration(
    session: Session,
    integration: Integration,
    *,
    changes: dict[str, Any],
) -> None:
    """`changes`: the fields sent (`name`, `on_open`, `on_merge`); the user's name follows
    the integration's, so an item's history shows what the admins call it."""
    changed = {f: v for f, v in changes.items() if getattr(integration, f) != v}
    if not changed:
        return
    for field, value in changed.items():
        setattr(integration, field, value)
    integration.updated_at = utcnow()
    if "name" in changed:
        user = session.get(User, integration.user_id)
        if user is not None:
            user.name = changed["name"]
            user.updated_at = integration.updated_at
    session.flush()


def list_integrations(session: Session, *, workspace_id: str, window: Window) -> ListPage:
    query = select(Integration).where(Integration.workspace_id == workspace_id)
    return window.page(session, query, Integration.created_at, Integration.id)


def delete_integration(session: Session, integration: Integration, *, actor: Caller) -> None:
    """Its hooks answer 404 from now on; the links it made stay on their items (the pull
    requests and commits still exist), and its user stays, deactivated, as the actor of
    the changes it made."""
    _audit(session, "integration.deleted", actor, integration, provider=integration.provider)
    user = session.get(User, integration.user_id)
    if user is not None:
        user.active = False
        user.updated_at = utcnow()
    session.delete(integration)


def integration_json(
    integration: Integration, *, public_url: str, secret: str | None = None, created: bool = False
) -> dict[str, Any]:
    """The integration as shown; `secret` only in the create response (`created`)."""
    data: dict[str, Any] = {
        "$id": integration.id,
        "workspaceId": integration.workspace_id,
        "provider": integration.provider,
        "name": integration.name,
        "url": public_url + HOOK_PATH.format(id=integration.id),
        "onOpen": integration.on_open,
        "onMerge": integration.on_merge,
        "userId": integration.user_id,
        "$createdAt": iso(integration.created_at),
        "$updatedAt": iso(integration.updated_at),
    }
    if created:
        data["secret"] = secret
    return data
