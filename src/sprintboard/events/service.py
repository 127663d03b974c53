"""The outbox: every change to a work item or sprint is written here, in its own transaction."""

from typing import Any

from sqlalchemy.orm import Session

from sprintboard.models import Event


def record(
    session: Session,
    *,
    workspace_id: str,
    type: str,
    subject_id: str,
    actor_id: str | None,
    payload: dict[str, Any],
) -> Event:
    """Write one event row in the caller's transaction; it exists only if that commits.

    `payload` holds the record after the change (`workItem` or `sprint`) and, for
    `*.updated`, `changes`: `{field: {"from": old, "to": new}}` in API field names.
    """
    event = Event(
        workspace_id=workspace_id,
        type=type,
        subject_id=subject_id,
        actor_id=actor_id,
        payload=payload,
    )
    session.add(event)
    return event


def record_many(session: Session, events: list[dict[str, Any]]) -> None:
    """Write several events at once (bulk updates, the moves of a sprint completion).

    Each dict has the keyword arguments of `record`.
    """
    for fields in events:
        record(session, **fields)
