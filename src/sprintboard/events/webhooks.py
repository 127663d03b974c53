"""Webhook subscriptions and their delivery log."""

import base64
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from sprintboard import audit
from sprintboard.access import Caller, lock_workspace
from sprintboard.cursors import ListPage, Window
from sprintboard.db import Database
from sprintboard.errors import Conflict, InvalidRequest, NotFound
from sprintboard.events.service import deliveries_written
from sprintboard.events.targets import refusal
from sprintboard.models import Webhook, WebhookDelivery, new_id, utcnow
from sprintboard.responses import iso
from sprintboard.serverkey import SecretBox

SECRET_PREFIX = "whsec_"
MAX_WEBHOOKS_PER_WORKSPACE = 20
PING = "ping"


@dataclass(frozen=True, slots=True)
class WebhookPolicy:
    """What the deployment decides about webhooks: the key their secrets are sealed with,
    and whether non-public addresses may be targets (`SPRINTBOARD_WEBHOOK_ALLOW_PRIVATE`)."""

    box: SecretBox
    allow_private: bool


def new_secret() -> str:
    """A Standard Webhooks secret: `whsec_` and 32 random bytes in base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def check_url(url: str, policy: WebhookPolicy) -> None:
    """400 `invalid_value` on `url` for a target the deployment does not send to."""
    problem = refusal(url, allow_private=policy.allow_private)
    if problem is not None:
        raise InvalidRequest("url", "invalid_value", problem)


def create_webhook(
    session: Session,
    *,
    workspace_id: str,
    url: str,
    events: list[str],
    actor: Caller,
    policy: WebhookPolicy,
) -> tuple[Webhook, str]:
    """The new webhook and its secret, in plain text this once (it is stored sealed)."""
    check_url(url, policy)
    lock_workspace(session, workspace_id)  # (two creates count one after the other)
    count = session.scalar(
        select(func.count()).select_from(Webhook).where(Webhook.workspace_id == workspace_id)
    )
    if (count or 0) >= MAX_WEBHOOKS_PER_WORKSPACE:
        raise Conflict(
            "webhook_limit",
            f"A workspace has at most {MAX_WEBHOOKS_PER_WORKSPACE} webhooks.",
            limit=MAX_WEBHOOKS_PER_WORKSPACE,
        )
    secret = new_secret()
    webhook = Webhook(
        workspace_id=workspace_id,
        url=url,
        events=list(dict.fromkeys(events)),
        secret_encrypted=policy.box.seal(secret),
        enabled=True,
        created_by=actor.user_id,
    )
    session.add(webhook)
    session.flush()
    # (Not its URL, which may carry a token of the receiver's in its query.)
    _audit(session, "webhook.created", actor, webhook, events=webhook.events)
    return webhook, secret


def _audit(session: Session, action: str, actor: Caller, webhook: Webhook, **details: Any) -> None:
    audit.record(
        session,
        action,
        actor=actor,
        target=audit.Target("webhook", webhook.id),
        workspace_id=webhook.workspace_id,
        details=details,
    )


def update_webhook(
    session: Session,
    webhook: Webhook,
    *,
    url: str | None,
    events: list[str] | None,
    enabled: bool | None,
    policy: WebhookPolicy,
    actor: Caller,
) -> None:
    """`enabled: true` on a disabled webhook starts it afresh: its failure record is cleared
    (the deliveries that failed with it stay failed; redeliver those wanted)."""
    changed: list[str] = []
    if url is not None and url != webhook.url:
        check_url(url, policy)
        webhook.url = url
        changed.append("url")
    if events is not None and list(dict.fromkeys(events)) != webhook.events:
        webhook.events = list(dict.fromkeys(events))
        changed.append("events")
    if enabled is not None and enabled != webhook.enabled:
        webhook.enabled = enabled
        changed.append("enabled")
        if enabled:
            webhook.disabled_reason = None
            webhook.failing_since = None
        else:
            webhook.disabled_reason = "Disabled by a workspace admin."
    if changed:
        webhook.updated_at = utcnow()
        session.flush()
        _audit(session, "webhook.updated", actor, webhook, fields=changed)


def queue_ping(session: Session, webhook: Webhook) -> WebhookDelivery:
    """A `ping` delivery, due now: a signed request a receiver can be tested with."""
    now = utcnow()
    delivery = WebhookDelivery(
        webhook_id=webhook.id,
        event_seq=None,
        event_id=new_id(),
        event_type=PING,
        subject_id=webhook.id,
        status="PENDING",
        attempts=0,
        next_attempt_at=now,
        payload={"webhookId": webhook.id, "workspaceId": webhook.workspace_id},
        created_at=now,
        updated_at=now,
    )
    session.add(delivery)
    session.flush()
    deliveries_written(session)
    return delivery


def webhook_delivery(session: Session, webhook: Webhook, delivery_id: str) -> WebhookDelivery:
    """One of the webhook's deliveries (the webhook itself came through `access_webhook`)."""
    delivery = session.scalar(
        select(WebhookDelivery).where(
            WebhookDelivery.id == delivery_id, WebhookDelivery.webhook_id == webhook.id
        )
    )
    if delivery is None:
        raise NotFound("Delivery")
    return delivery


def redeliver(session: Session, delivery: WebhookDelivery) -> WebhookDelivery:
    """Sends the delivery again, due now, with the same `webhook-id` (its `$id`); its
    attempts go on counting. One already pending is only brought forward."""
    now = utcnow()
    delivery.status = "PENDING"
    delivery.next_attempt_at = now
    delivery.delivered_at = None
    delivery.updated_at = now
    session.flush()
    deliveries_written(session)
    return delivery


def seal_legacy_secrets(database: Database, box: SecretBox) -> int:
    """Seals the secrets stored in plain text before migration 0005; returns how many."""
    with database.transaction() as session:
        legacy = session.execute(
            select(Webhook.id, Webhook.legacy_secret).where(Webhook.legacy_secret.is_not(None))
        ).all()
        for webhook_id, secret in legacy:
            assert secret is not None
            session.execute(
                update(Webhook)
                .where(Webhook.id == webhook_id)
                .values(secret_encrypted=box.seal(secret), legacy_secret=None)
                .execution_options(synchronize_session=False)
            )
    return len(legacy)


def list_webhooks(session: Session, *, workspace_id: str, window: Window) -> ListPage:
    query = select(Webhook).where(Webhook.workspace_id == workspace_id)
    return window.page(session, query, Webhook.created_at, Webhook.id)


def delete_webhook(session: Session, webhook: Webhook, *, actor: Caller) -> None:
    """Deletes the webhook and its deliveries: nothing more is sent to it."""
    _audit(session, "webhook.deleted", actor, webhook)
    session.execute(delete(WebhookDelivery).where(WebhookDelivery.webhook_id == webhook.id))
    session.delete(webhook)


def list_deliveries(
    session: Session, *, webhook_id: str, status: str | None, window: Window
) -> ListPage:
    """The webhook's deliveries, most recent event first."""
    criteria = [WebhookDelivery.webhook_id == webhook_id]
    if status is not None:
        criteria.append(WebhookDelivery.status == status)
    return window.page(
        session,
        select(WebhookDelivery).where(*criteria),
        WebhookDelivery.created_at.desc(),
        WebhookDelivery.event_seq.is_(None).desc(),  # (a ping has none: first, as NULLS FIRST)
        WebhookDelivery.event_seq.desc(),
        WebhookDelivery.id,
    )


def shown_url(url: str) -> str:
    """`url` without credentials: a webhook made before they were refused may have them."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def webhook_json(webhook: Webhook, *, secret: str | None = None) -> dict[str, Any]:
    """The webhook as shown; `secret` only in the create response (given, or `None`)."""
    data = {
        "$id": webhook.id,
        "workspaceId": webhook.workspace_id,
        "url": shown_url(webhook.url),
        "events": webhook.events,
        "enabled": webhook.enabled,
        "disabledReason": webhook.disabled_reason,
        "failingSince": iso(webhook.failing_since),
        "$createdAt": iso(webhook.created_at),
        "$updatedAt": iso(webhook.updated_at),
    }
    if secret is not None:
        data["secret"] = secret
    return data


def delivery_json(delivery: WebhookDelivery) -> dict[str, Any]:
    return {
        "$id": delivery.id,
        "webhookId": delivery.webhook_id,
        "eventId": delivery.event_id,
        "eventType": delivery.event_type,
        "subjectId": delivery.subject_id,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "nextAttemptAt": iso(delivery.next_attempt_at) if delivery.status == "PENDING" else None,
        "lastAttemptAt": iso(delivery.last_attempt_at),
        "responseStatus": delivery.response_status,
        "error": delivery.last_error,
        "deliveredAt": iso(delivery.delivered_at),
        "$createdAt": iso(delivery.created_at),
        "$updatedAt": iso(delivery.updated_at),
    }
