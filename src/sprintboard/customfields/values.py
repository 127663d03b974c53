"""Custom field values: checked as the contract types them (`checked`), and kept typed in
`work_item_field_values` (`write_values`) so that `GET /tasks` filters (`condition`) and
sorts (`sort_key`) by them through an index: `(field_id, text_value, item_id)` and
`(field_id, number_value, item_id)`. The item's own row holds the same values as the API
shows them (`work_items.custom_fields`); both are written in the change's transaction.
"""

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any
from urllib.parse import urlsplit

from sprintboard.customfields.service import Definition, Definitions
from sprintboard.errors import InvalidRequest
from sprintboard.sql import Raw, in_list

MAX_TEXT = 4_000
MAX_URL = 2_000
MAX_CHOSEN = 50
MAX_MAGNITUDE = 10**12
INDEXED_TEXT = 255
"""How much of a text value its index row keeps (a B-tree entry has a size limit): a filter
by a text field compares that much."""
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def checked(
    db: Raw, workspace_id: str, definitions: Definitions, sent: Mapping[str, Any]
) -> dict[str, Any]:
    """The values `sent` (a request's `fields`) as items keep them, by key; None clears one.
    400 on `fields.<key>`: `unknown_field` for a key the workspace lacks, `invalid_type` for
    a value of the wrong JSON type, `invalid_value` for one outside the field's values (a
    user who is not a member, an option the field lacks...)."""
    found: dict[str, Any] = {}
    users: dict[str, str] = {}
    for key, value in sent.items():
        name = f"fields.{key}"
        definition = definitions.get(key)
        if definition is None:
            raise InvalidRequest(name, "unknown_field", f"{name}: the workspace has no such field.")
        found[key] = None if value is None else _value(definition, value, name)
        if definition.type == "user" and found[key] is not None:
            users[key] = found[key]
    if users:
        placeholders, params = in_list("u", sorted(set(users.values())))
        rows = db.rows(
            "SELECT user_id FROM workspace_members WHERE workspace_id = :workspace_id"
            f" AND user_id IN {placeholders}",
            {**params, "workspace_id": workspace_id},
        )
        members = {row[0] for row in rows}
        for key, user_id in users.items():
            if user_id not in members:
                raise InvalidRequest(
                    f"fields.{key}",
                    "invalid_value",
                    f"fields.{key}: {user_id!r} is not a member of the workspace.",
                )
    return found


def _bad(name: str, reason: str, why: str) -> InvalidRequest:
    return InvalidRequest(name, reason, f"{name}: {why}")


def _value(definition: Definition, value: Any, name: str) -> Any:
    """One value checked against its field; None for one that sets nothing ("" or [])."""
    kind = definition.type
    if kind == "checkbox":
        if not isinstance(value, bool):
            raise _bad(name, "invalid_type", "true or false.")
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _bad(name, "invalid_type", "a number.")
        if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
            raise _bad(name, "invalid_value", "a finite number of magnitude at most 10^12.")
        return value
    if kind == "multiselect":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _bad(name, "invalid_type", "a list of options.")
        if len(value) > MAX_CHOSEN or len(set(value)) != len(value):
            raise _bad(name, "invalid_value", f"at most {MAX_CHOSEN} distinct options.")
        if unknown := [v for v in value if v not in definition.options]:
            raise _bad(name, "invalid_value", f"not options of the field: {unknown}.")
        return [o for o in definition.options if o in value] or None  # (in option order)
    if not isinstance(value, str):
        raise _bad(name, "invalid_type", "a string.")
    if kind == "select":
        if value not in definition.options:
            raise _bad(name, "invalid_value", f"{value!r} is not an option of the field.")
        return value
    text = value.strip()
    if kind == "text":
        if len(text) > MAX_TEXT:
            raise _bad(name, "invalid_value", f"at most {MAX_TEXT} characters.")
        return text or None
    if kind == "date":
        if not is_day(text):
            raise _bad(name, "invalid_value", "a date, YYYY-MM-DD.")
        return text
    if kind == "url":
        if len(text) > MAX_URL or not is_web_address(text):
            raise _bad(name, "invalid_value", f"an http(s) URL of at most {MAX_URL} characters.")
        return text
    return text  # (user: a member, checked with the others in one statement)


def is_day(text: str) -> bool:
    if not _DAY.match(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def is_web_address(text: str) -> bool:
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in text


def merged(current: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """An item's values after a change that sets some keys and clears others (None)."""
    result = dict(current)
    for key, value in changes.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


def _rows(definitions: Definitions, item_id: str, values: Mapping[str, Any]) -> list[Any]:
    rows = []
    for key, value in values.items():
        definition = definitions.get(key)
        if definition is None:
            continue
        chosen = value if definition.type == "multiselect" else [value]
        for ordinal, one in enumerate(chosen):
            text, number = _typed(definition.type, one)
            rows.append(
                {
                    "item_id": item_id,
                    "field_id": definition.id,
                    "ordinal": ordinal,
                    "text_value": text,
                    "number_value": number,
                }
            )
    return rows


def _typed(kind: str, value: Any) -> tuple[str | None, float | None]:
    if kind == "number":
        return None, float(value)
    if kind == "checkbox":
        return ("true" if value else "false"), None
    return str(value)[:INDEXED_TEXT], None


_INSERT = (
    "INSERT INTO work_item_field_values (item_id, field_id, ordinal, text_value, number_value)"
    " VALUES (:item_id, :field_id, :ordinal, :text_value, :number_value)"
)


def write_values(
    db: Raw,
    definitions: Definitions,
    items: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    new: bool = False,
) -> None:
    """The typed rows of these items (`$id`, all their values), replacing theirs unless the
    items are `new`."""
    if not new and items:
        placeholders, params = in_list("i", [item_id for item_id, _ in items])
        db.execute(f"DELETE FROM work_item_field_values WHERE item_id IN {placeholders}", params)
    rows = [row for item_id, values in items for row in _rows(definitions, item_id, values)]
    if len(rows) == 1:
        db.execute(_INSERT, rows[0])
    elif rows:
        db.execute_many(_INSERT, rows)


@dataclass(frozen=True)
class FieldMatch:
    """`fields.<key>=v1,v2` of `GET /tasks`: any of the values (`none`: unset)."""

    definition: Definition
    values: tuple[str, ...]


def parse_match(definition: Definition, param: str, raw_values: Sequence[str]) -> FieldMatch:
    """400 `invalid_value` on the parameter for a value the field cannot hold."""
    for value in raw_values:
        if value == "none":
            continue
        kind = definition.type
        bad = (
            (kind in ("select", "multiselect") and value not in definition.options)
            or (kind == "number" and _number(value) is None)
            or (kind == "checkbox" and value not in ("true", "false"))
            or (kind == "date" and not is_day(value))
        )
        if bad:
            raise InvalidRequest(
                param, "invalid_value", f"{param}: {value!r} is not a value of it."
            )
    return FieldMatch(definition, tuple(raw_values))


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def condition(match: FieldMatch, name: str) -> tuple[str, dict[str, Any]]:
    """SQL on `wi` (the items) for a match; its parameters are named after `name`."""
    definition = match.definition
    params: dict[str, Any] = {f"{name}f": definition.id}
    parts = []
    wanted = [v for v in match.values if v != "none"]
    if wanted:
        column = "number_value" if definition.type == "number" else "text_value"
        typed = [_number(v) if definition.type == "number" else v[:INDEXED_TEXT] for v in wanted]
        placeholders, names = in_list(f"{name}v", typed)
        params.update(names)
        parts.append(
            "wi.id IN (SELECT v.item_id FROM work_item_field_values v"
            f" WHERE v.field_id = :{name}f AND v.{column} IN {placeholders})"
        )
    if len(wanted) < len(match.values):
        parts.append(
            "NOT EXISTS (SELECT 1 FROM work_item_field_values v"
            f" WHERE v.item_id = wi.id AND v.field_id = :{name}f)"
        )
    return f"({' OR '.join(parts)})", params


@dataclass(frozen=True)
class SortBy:
    """A sort by a custom field: its expression (on the join `join`, if any), the Python
    type of its values and the parameters both take."""

    sql: str
    kind: type
    join: str
    params: dict[str, Any]


def sort_key(definition: Definition, name: str) -> SortBy:
    """How lists sort by a field (`name` names its join and parameters): numbers as
    numbers, a select by its options' order, a multiselect by its first option in that
    order, anything else as text (dates as `YYYY-MM-DD`, checkboxes false first)."""
    params: dict[str, Any] = {f"{name}f": definition.id}
    join = (
        f" LEFT JOIN work_item_field_values {name} ON {name}.item_id = wi.id"
        f" AND {name}.field_id = :{name}f"
    )
    if definition.type == "number":
        return SortBy(f"{name}.number_value", float, join, params)
    if definition.type not in ("select", "multiselect"):
        return SortBy(f"{name}.text_value", str, join, params)
    ranks = []
    for rank, option in enumerate(definition.options):
        params[f"{name}o{rank}"] = option
        ranks.append(f"WHEN :{name}o{rank} THEN {rank}")
    if definition.type == "select":
        return SortBy(f"CASE {name}.text_value {' '.join(ranks)} END", int, join, params)
    rank_of = f"CASE v.text_value {' '.join(ranks)} END"
    first = (
        f"(SELECT min({rank_of}) FROM work_item_field_values v"
        f" WHERE v.item_id = wi.id AND v.field_id = :{name}f)"
    )
    return SortBy(first, int, "", params)
