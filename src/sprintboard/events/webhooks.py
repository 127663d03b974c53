"""Webhook subscriptions and their delivery log."""

import base64
import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from sprintboard.models import Webhook, WebhookDelivery
from sprintboard.responses import iso

SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    """A Standard Webhooks secret: `whsec_` and 32 random bytes in base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def create_webhook(
    session: Session, *, workspace_id: str, url: str, events: list[str], created_by: str
) -> Webhook:
    webhook = Webhook(
        workspace_id=workspace_id,
        url=url,
        events=list(dict.fromkeys(events)),
        secret=new_secret(),
        enabled=True,
        created_by=created_by,
    )
    session.add(webhook)
    session.flush()
    return webhook


def list_webhooks(
    session: Session, *, workspace_id: str, limit: int, offset: int
) -> tuple[Sequence[Webhook], int]:
    criterion = Webhook.workspace_id == workspace_id
    webhooks = session.scalars(
        select(Webhook)
        .where(criterion)
        .order_by(Webhook.created_at, Webhook.id)
        .limit(limit)
        .offset(offset)
    ).all()
    total = session.scalar(select(func.count()).select_from(Webhook).where(criterion))
    return webhooks, total or 0


def delete_webhook(session: Session, webhook: Webhook) -> None:
    """Deletes the webhook and its deliveries: nothing more is sent to it."""
    session.execute(delete(WebhookDelivery).where(WebhookDelivery.webhook_id == webhook.id))
    session.delete(webhook)


def list_deliveries(
    session: Session, *, webhook_id: str, status: str | None, limit: int, offset: int
) -> tuple[Sequence[WebhookDelivery], int]:
    """The webhook's deliveries, most recent event first."""
    criteria = [WebhookDelivery.webhook_id == webhook_id]
    if status is not None:
        criteria.append(WebhookDelivery.status == status)
    deliveries = session.scalars(
        select(WebhookDelivery)
        .where(*criteria)
        .order_by(WebhookDelivery.event_seq.desc())
        .limit(limit)
        .offset(offset)
    ).all()
    total = session.scalar(select(func.count()).select_from(WebhookDelivery).where(*criteria))
    return deliveries, total or 0


def webhook_json(webhook: Webhook, *, with_secret: bool = False) -> dict[str, Any]:
    data = {
        "$id": webhook.id,
        "workspaceId": webhook.workspace_id,
        "url": webhook.url,
        "events": webhook.events,
        "enabled": webhook.enabled,
        "disabledReason": webhook.disabled_reason,
        "failingSince": iso(webhook.failing_since),
        "$createdAt": iso(webhook.created_at),
        "$updatedAt": iso(webhook.updated_at),
    }
    if with_secret:
        data["secret"] = webhook.secret
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
