"""Custom fields in imports: Jira's `Custom field (<Name>)` columns read into the workspace's
field of that name (any case), and the fields a JSON export carries made where missing.
Kept apart from the Jira reader's own columns (`formats.py`), which calls `jira_columns` and
`jira_values`."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sprintboard.client import Client
from sprintboard.transfer.plan import Json, Row

COLUMN = re.compile(r"^Custom field \((.+)\)$", re.IGNORECASE)
_TRUE, _FALSE = ("yes", "true", "1", "y"), ("no", "false", "0", "n")
_DAYS = ("%Y-%m-%d", "%d/%b/%y %I:%M %p", "%d/%b/%y", "%d/%b/%Y %I:%M %p", "%Y-%m-%d %H:%M")


@dataclass(frozen=True)
class JiraColumns:
    """Which `Custom field (...)` columns fill which field, and those that fill none."""

    matched: dict[str, Json]
    """Column → the field (as `GET /workspaces/{id}/fields` shows it)."""
    ignored: list[str]


def jira_columns(header: Sequence[str], fields: Sequence[Json], used: Sequence[str]) -> JiraColumns:
    """The header's custom field columns matched by name (any case) to the workspace's
    fields; `used`: columns the reader reads itself (story points, epic link)."""
    by_name = {f["name"].lower(): f for f in fields if f["type"] != "user"}
    matched: dict[str, Json] = {}
    ignored: list[str] = []
    for column in dict.fromkeys(header):
        found = COLUMN.match(column)
        if found is None or column.lower() in {u.lower() for u in used}:
            continue
        field = by_name.get(found.group(1).strip().lower())
        if field is None:
            ignored.append(column)
        else:
            matched[column] = field
    return JiraColumns(matched, ignored)


def jira_values(columns: JiraColumns, cells: Callable[[str], list[str]], row: Row) -> None:
    """The row's values of the matched columns, as its `fields` (`cells(column)`: the
    column's values, Jira repeating a column for each value of a list)."""
    values: dict[str, Any] = {}
    for column, field in columns.matched.items():
        found = [v for v in cells(column) if v]
        if not found:
            continue
        value = _value(field, found, column, row)
        if value is not None:
            values[field["key"]] = value
    if values:
        row.fields["fields"] = values


def _value(field: Json, found: list[str], column: str, row: Row) -> Any:
    kind, first = field["type"], found[0]
    options = field.get("options") or []
    if kind == "multiselect":
        chosen = [part.strip() for value in found for part in value.split(",") if part.strip()]
        if bad := [v for v in chosen if v not in options]:
            row.errors.append(f"{column}: not options of the field: {bad}")
        return list(dict.fromkeys(chosen))
    if kind == "select" and first not in options:
        row.errors.append(f"{column}: {first!r} is not an option of the field")
    if kind == "number":
        try:
            return float(first)
        except ValueError:
            row.errors.append(f"{column}: {first!r} is not a number")
            return None
    if kind == "checkbox":
        if first.lower() not in _TRUE + _FALSE:
            row.errors.append(f"{column}: {first!r} is not yes or no")
        return first.lower() in _TRUE
    if kind == "date":
        for pattern in _DAYS:
            try:
                return datetime.strptime(first, pattern).date().isoformat()
            except ValueError:
                continue
        row.errors.append(f"{column}: {first!r} is not a date Jira exports")
        return None
    return first


def ensure_fields(client: Client, workspace_id: str, fields: Sequence[Json]) -> int:
    """Make the fields (an export's definitions) the workspace lacks, by key; how many."""
    have = {f["key"] for f in client.fields(workspace_id)}
    made = 0
    for field in fields:
        if field["key"] not in have:
            body = {k: field.get(k) for k in ("key", "name", "type", "options", "description")}
            client.create_field(workspace_id, **{k: v for k, v in body.items() if v is not None})
            made += 1
    return made
