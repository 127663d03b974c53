"""Relations between two work items of one workspace: `blocks`, `relates_to`, `duplicates`
and their inverses. Each is stored once, in its canonical direction (`models.
WorkItemRelation`), so `A blocked_by B` and `B blocks A` are one row, and the unique index
on (source, target, type) refuses the second spelling as it refuses the first."""

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy.orm import Session

from sprintboard.access import WorkspaceAccess
from sprintboard.errors import Conflict, InvalidRequest
from sprintboard.events import service as events
from sprintboard.models import WorkItem, WorkItemRelation, new_id, utcnow
from sprintboard.sql import Columns, in_list, raw
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


def delete_relations_of(
    session: Session, *, workspace_id: str, actor_id: str | None, condition: str, **params: Any
) -> None:
    """Deletes the relations of the items that match `condition` (SQL on `work_items`), which
    are about to be deleted, each with a `relation.deleted` event as `DELETE /relations/{id}`
    writes it. Call it before the items go: the events carry both items' keys.

    (Their foreign keys would delete them too, silently: deleted here, the events name
    exactly the relations this transaction removed.)
    """
    db = raw(session)
    items = f"SELECT id FROM work_items WHERE {condition}"
    created = db.codec.timestamp_column("created_at")
    rows, columns = db.fetch(
        "DELETE FROM work_item_relations WHERE id IN ("
        f"SELECT id FROM work_item_relations WHERE source_id IN ({items}) UNION"
        f" SELECT id FROM work_item_relations WHERE target_id IN ({items}))"
        f" RETURNING id, type, source_id, target_id, {created} AS created_at",
        params,
    )
    if not rows:
        return
    ends_of = columns.getter("source_id", "target_id")
    ends = sorted({end for row in rows for end in ends_of(row)})
    keys: dict[str, str] = {}
    for start in range(0, len(ends), 1000):  # (a project's may pass a statement's limit)
        placeholders, names = in_list("i", ends[start : start + 1000])
        found, by = db.fetch(f"SELECT id, key FROM work_items WHERE id IN {placeholders}", names)
        keys.update(map(by.getter("id", "key"), found))
    relation = columns.made(_relation_reader)
    source_id, target_id = columns["source_id"], columns["target_id"]
    events.record_many(
        session,
        [
            {
                "workspace_id": workspace_id,
                "type": "relation.deleted",
                "subject_id": row[columns["id"]],
                "actor_id": actor_id,
                "payload": {"relation": relation(row, keys[row[source_id]], keys[row[target_id]])},
            }
            for row in sorted(rows, key=columns.getter("created_at", "id"))
        ],
    )


def _seen_from(db: Any, item_id: str, relation_id: str) -> dict[str, Any]:
    return next(r for r in reads.read_relations(db, item_id) if r["$id"] == relation_id)


def _record(session: Session, access: WorkspaceAccess, type: str, relation_id: str) -> None:
    """The event, carrying the relation in its canonical direction with both items'
    `$id` and key."""
    db = raw(session)
    row, columns = db.fetch_one(
        "SELECT r.id, r.type, s.id AS source_id, t.id AS target_id,"
        f" {db.codec.timestamp_column('r.created_at')} AS created_at, s.key AS source_key,"
        " t.key AS target_key FROM work_item_relations r"
        " JOIN work_items s ON s.id = r.source_id JOIN work_items t ON t.id = r.target_id"
        " WHERE r.id = :id",
        {"id": relation_id},
    )
    if row is None:
        raise RuntimeError("the relation is gone")
    keys = columns.getter("source_key", "target_key")(row)
    events.record(
        session,
        workspace_id=access.workspace_id,
        type=type,
        subject_id=relation_id,
        actor_id=access.caller.user_id,
        payload={"relation": columns.made(_relation_reader)(row, *keys)},
    )


def _relation_reader(columns: Columns) -> Callable[[Sequence[Any], str, str], dict[str, Any]]:
    """What makes an event's relation from a row's `id, type, source_id, target_id,
    created_at` (as the API shows it) and the two items' keys."""
    get = columns.getter("id", "type", "source_id", "target_id", "created_at")

    def relation(row: Sequence[Any], source_key: str, target_key: str) -> dict[str, Any]:
        relation_id, type, source_id, target_id, created_at = get(row)
        return {
            "$id": relation_id,
            "type": type,
            "source": {"$id": source_id, "key": source_key},
            "target": {"$id": target_id, "key": target_key},
            "$createdAt": created_at,
        }

    return relation
