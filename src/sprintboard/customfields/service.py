"""A workspace's custom fields: their definitions (ORM records: few, seldom changed) and the
rules for their values on work items.

An item's values travel as the API shows them (`{"severity": "HIGH"}`) in its row's
`custom_fields` column, which every read takes with the item, and, typed, in
`work_item_field_values` (`values.py`), which filters and sorts read through its indexes.
Work items call `read_definitions` and `checked` when a create or change sends `fields`.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import select
from sqlalchemy.orm import Session

from sprintboard import audit
from sprintboard.access import Caller, lock_workspace
from sprintboard.errors import Conflict, InvalidRequest
from sprintboard.models import CustomField, utcnow
from sprintboard.responses import iso
from sprintboard.sql import Raw, in_list, raw

MAX_FIELDS = 50
WITH_OPTIONS = frozenset({"select", "multiselect"})


@dataclass(frozen=True)
class Definition:
    """One field as items' values are checked against it."""

    id: str
    key: str
    name: str
    type: str
    options: tuple[str, ...]


Definitions = Mapping[str, Definition]
"""A workspace's fields by key."""


def field_json(field: CustomField) -> dict[str, Any]:
    return {
        "$id": field.id,
        "workspaceId": field.workspace_id,
        "key": field.key,
        "name": field.name,
        "type": field.type,
        "options": list(field.options) if field.options is not None else None,
        "description": field.description,
        "$createdAt": iso(field.created_at),
        "$updatedAt": iso(field.updated_at),
    }


def list_fields(session: Session, workspace_id: str) -> list[CustomField]:
    """In the order they were made."""
    return list(
        session.scalars(
            select(CustomField)
            .where(CustomField.workspace_id == workspace_id)
            .order_by(CustomField.created_at, CustomField.id)
        )
    )


def _check_options(type_: str, options: Sequence[str] | None) -> list[str] | None:
    if type_ not in WITH_OPTIONS:
        if options is not None:
            raise InvalidRequest(
                "options", "invalid_value", f"options: a {type_} field has no options."
            )
        return None
    if options is None:
        raise InvalidRequest("options", "required", f"options: a {type_} field needs options.")
    if len(set(options)) != len(options):
        raise InvalidRequest("options", "invalid_value", "options: each option once.")
    return list(options)


def create_field(
    session: Session,
    *,
    workspace_id: str,
    key: str,
    name: str,
    type_: str,
    options: Sequence[str] | None,
    description: str | None,
    actor: Caller,
) -> CustomField:
    """409 `duplicate_field` for a key the workspace has, `field_limit` past 50 fields."""
    checked_options = _check_options(type_, options)
    lock_workspace(session, workspace_id)  # (two creates count one after the other)
    keys = session.scalars(
        select(CustomField.key).where(CustomField.workspace_id == workspace_id)
    ).all()
    if key in keys:
        raise Conflict("duplicate_field", f"The workspace has a field {key}.", field="key")
    if len(keys) >= MAX_FIELDS:
        raise Conflict(
            "field_limit", f"A workspace has at most {MAX_FIELDS} fields.", limit=MAX_FIELDS
        )
    field = CustomField(
        workspace_id=workspace_id,
        key=key,
        name=name,
        type=type_,
        options=checked_options,
        description=description,
    )
    session.add(field)
    session.flush()
    _audit(session, "field.created", actor, field, key=key, type=type_)
    return field


def update_field(
    session: Session,
    field: CustomField,
    *,
    sent: set[str],
    name: str | None,
    description: str | None,
    options: Sequence[str] | None,
    actor: Caller,
) -> None:
    """Removing an option that an item holds is 409 `option_in_use`."""
    changed: list[str] = []
    if name is not None and name != field.name:
        field.name = name
        changed.append("name")
    if "description" in sent and description != field.description:
        field.description = description
        changed.append("description")
    if options is not None:
        new = _check_options(field.type, options) or []
        dropped = [o for o in field.options or [] if o not in new]
        if removed := held_options(raw(session), field.id, dropped):
            raise Conflict(
                "option_in_use",
                f"options: items hold {removed}; change them first.",
                field="options",
                options=removed,
            )
        if new != field.options:
            field.options = new
            changed.append("options")
    if changed:
        field.updated_at = utcnow()
        session.flush()
        _audit(session, "field.updated", actor, field, key=field.key, fields=changed)


def delete_field(session: Session, field: CustomField, *, actor: Caller) -> None:
    """The field and its typed values (its foreign key); items' own copies are
    `workitems.store.forget_field`'s."""
    _audit(session, "field.deleted", actor, field, key=field.key)
    session.delete(field)
    session.flush()


def _audit(
    session: Session, action: str, actor: Caller, field: CustomField, **details: Any
) -> None:
    audit.record(
        session,
        action,
        actor=actor,
        target=audit.Target("field", field.id),
        workspace_id=field.workspace_id,
        details=details,
    )


_DEFINITIONS = (
    "SELECT id, key, name, type, {options} AS options FROM custom_fields"
    " WHERE workspace_id = :workspace_id ORDER BY created_at, id"
)


def read_definitions(db: Raw, workspace_id: str) -> dict[str, Definition]:
    """The workspace's fields by key, in one statement."""
    rows, columns = db.fetch(
        _DEFINITIONS.format(options=db.codec.json_column("options")),
        {"workspace_id": workspace_id},
    )
    get = columns.getter("id", "key", "name", "type", "options")
    found = {}
    for row in rows:
        id_, key, name, type_, options = get(row)
        loaded = orjson.loads(options) if options is not None else None
        found[key] = Definition(id_, key, name, type_, tuple(loaded or ()))
    return found


def held_options(db: Raw, field_id: str, options: Sequence[str]) -> list[str]:
    """Those of `options` that an item holds (in the field `field_id`)."""
    if not options:
        return []
    placeholders, params = in_list("o", list(options))
    rows = db.rows(
        "SELECT DISTINCT text_value FROM work_item_field_values"
        f" WHERE field_id = :field_id AND text_value IN {placeholders}",
        {**params, "field_id": field_id},
    )
    return [row[0] for row in rows]
