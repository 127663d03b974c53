"""Relations between two work items of one workspace: `blocks`, `relates_to`, `duplicates`
and their inverses. Each is stored once, in its canonical direction (`models.
WorkItemRelation`), so `A blocked_by B` and `B blocks A` are one row, and the unique index
on (source, target, type) refuses the second spelling as it refuses the first."""

from typing import Any

from sqlalchemy.orm import Session

from sprintboard.access import WorkspaceAccess
from sprintboard.errors import Conflict, InvalidRequest
from sprintboard.events import service as events
from sprintboard.models import WorkItem, WorkItemRelation, new_id, utcnow
from sprintboard.sql import raw
from sprintboard.workitems import hierarchy, reads

_CANONICAL = {
    # type as sent → (stored type, whether the sender is the source)
    "blocks": ("blocks", True),
    "blocked_by": ("blocks", False),
    "duplicates": ("duplicates", True),
    "duplicated_by": ("duplicates", False),
    "relates_to": ("relates_to", True),
}


def create_relation(
    session: Session, *, access: WorkspaceAccess, item: WorkItem, type: str, target_ref: str
) -> dict[str, Any]:
    """Relate `item` to the workspace's item `target_ref` names; returns the relation as
    `item` sees it. 400 `not_found` for an item elsewhere, `invalid_value` for the item
    itself; 409 `duplicate_relation` if it exists, in either spelling."""
    db = raw(session)
    target_id = hierarchy.resolve_parents(db, item.workspace_id, [target_ref], lock=True).get(
        target_ref
    )
    if target_id is None:
        raise InvalidRequest("targetId", "not_found", "targetId: no such work item here.")
    if target_id == item.id:
        raise InvalidRequest(
            "targetId", "invalid_value", "targetId: an item cannot relate to itself."
        )
    stored, forward = _CANONICAL[type]
    source_id, other_id = (item.id, target_id) if forward else (target_id, item.id)
    if stored == "relates_to":  # (the same both ways: the lesser `$id` is the source)
        source_id, other_id = sorted((item.id, target_id))
    relation_id, now = new_id(), utcnow()
    inserted = db.row(
        "INSERT INTO work_item_relations"
        " (id, workspace_id, source_id, target_id, type, created_by, created_at)"
        " VALUES (:id, :workspace_id, :source_id, :target_id, :type, :created_by, :now)"
        " ON CONFLICT DO NOTHING RETURNING id",
        {
            "id": relation_id,
            "workspace_id": item.workspace_id,
            "source_id": source_id,
            "target_id": other_id,
            "type": stored,
            "created_by": access.caller.user_id,
            "now": db.codec.param(now),
        },
    )
    if inserted is None:
        raise Conflict("duplicate_relation", "These items are already related this way.")
    _record(session, access, "relation.created", relation_id)
    return _seen_from(db, item.id, relation_id)


def delete_relation(
    session: Session, *, access: WorkspaceAccess, relation: WorkItemRelation
) -> None:
    _record(session, access, "relation.deleted", relation.id)
    session.delete(relation)


def _seen_from(db: Any, item_id: str, relation_id: str) -> dict[str, Any]:
    return next(r for r in reads.read_relations(db, item_id) if r["$id"] == relation_id)


def _record(session: Session, access: WorkspaceAccess, type: str, relation_id: str) -> None:
    """The event, carrying the relation in its canonical direction with both items'
    `$id` and key."""
    db = raw(session)
    row = db.row(
        "SELECT r.id, r.type, s.id, s.key, t.id, t.key,"
        f" {db.codec.timestamp_column('r.created_at')} FROM work_item_relations r"
        " JOIN work_items s ON s.id = r.source_id JOIN work_items t ON t.id = r.target_id"
        " WHERE r.id = :id",
        {"id": relation_id},
    )
    if row is None:
        raise RuntimeError("the relation is gone")
    relation = {
        "$id": row[0],
        "type": row[1],
        "source": {"$id": row[2], "key": row[3]},
        "target": {"$id": row[4], "key": row[5]},
        "$createdAt": row[6],
    }
    events.record(
        session,
        workspace_id=access.workspace_id,
        type=type,
        subject_id=relation_id,
        actor_id=access.caller.user_id,
        payload={"relation": relation},
    )
