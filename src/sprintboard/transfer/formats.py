"""Readers: Jira's CSV export, our own CSV columns, and our JSON export, each into a `Plan`."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from sprintboard.transfer.custom import jira_columns, jira_values
from sprintboard.transfer.plan import ITEM_FIELDS, JiraCells, Json, Plan, Row, SprintPlan
from sprintboard.workitems.fields import PLAIN, ItemField

JIRA_PRIORITIES = {
    "highest": "URGENT",
    "blocker": "URGENT",
    "critical": "URGENT",
    "high": "HIGH",
    "major": "HIGH",
    "medium": "MEDIUM",
    "low": "LOW",
    "minor": "LOW",
    "lowest": "LOW",
    "trivial": "LOW",
}
# Jira's link names, by the side of the link a column shows.
JIRA_LINKS = {
    ("outward", "blocks"): "blocks",
    ("inward", "blocks"): "blocked_by",
    ("outward", "duplicate"): "duplicates",
    ("inward", "duplicate"): "duplicated_by",
    ("outward", "relates"): "relates_to",
    ("inward", "relates"): "relates_to",
}
STORY_POINT_COLUMNS = (
    "Story Points",
    "Story point estimate",
    "Custom field (Story Points)",
    "Custom field (Story point estimate)",
)
# Jira's date formats, by its "Day/Month/Year" settings: `22/Sep/25 9:26 AM`, `16/02/2017
# 15:26`; ISO (`2025-09-22`, `2025-09-22T09:26:00.000+0200`) is read by `fromisoformat`.
JIRA_DATES = (
    "%d/%b/%y %I:%M %p",
    "%d/%b/%y %H:%M",
    "%d/%b/%y",
    "%d/%b/%Y %I:%M %p",
    "%d/%b/%Y %H:%M",
    "%d/%b/%Y",
    "%d/%m/%Y %H:%M",
    "%d/%m/%Y",
    "%d/%m/%y %H:%M",
    "%d/%m/%y",
    "%Y-%m-%d %H:%M",
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d",
)
LINK_COLUMN = re.compile(r"^(Inward|Outward) issue link \((.+)\)$", re.IGNORECASE)
_CSV_PLAIN = tuple(f for f in PLAIN if f.exported)
"""The plain fields our CSV carries, each in a column of its API name, read by its kind."""
OWN_COLUMNS = (
    "key",
    "title",
    "type",
    "status",
    *(f.name for f in _CSV_PLAIN),
    "assignees",
    "labels",
    "sprint",
    "parent",
    "blocks",
    "relatesTo",
    "duplicates",
)


def read(kind: str, text: str, *, fields: Sequence[Json] = ()) -> Plan:
    """`fields`: the workspace's custom fields, which Jira's `Custom field (<Name>)` fill."""
    if kind == "jira-csv":
        return read_jira_csv(text, fields=fields)
    if kind == "csv":
        return read_csv(text)
    if kind == "json":
        return read_json(text)
    raise ValueError(f"unknown format {kind!r}: jira-csv, csv or json")


def read_jira_csv(text: str, *, fields: Sequence[Json] = ()) -> Plan:
    """Jira's "Export Excel CSV (all fields)": one row per issue, repeated columns for lists.

    Statuses, types and assignees are kept as Jira wrote them (`Row.jira`): `transfer.jira`
    matches them to the workspace's records. `Custom field (<Name>)` columns fill the
    custom field of that name (`transfer.custom`).
    """
    header, records = _records(text)
    custom = jira_columns(header, fields, (*STORY_POINT_COLUMNS, "Custom field (Epic Link)"))
    ids: dict[str, str] = {}
    rows: list[Row] = []
    row_sprints: dict[int, list[str]] = {}
    first_issue: dict[str, tuple[int, int]] = {}
    for line, values in records:
        cells = _Cells(header, values)
        key = cells.one("Issue key")
        row = Row(line=line, ref=key or f"line {line}", fields={})
        if not key:
            row.errors.append("Issue key: required")
        issue_id = cells.one("Issue id")
        if issue_id:
            ids[issue_id] = row.ref
        row.fields["title"] = cells.one("Summary")
        row.jira = JiraCells(
            status=cells.one("Status"),
            category=cells.one("Status Category"),
            type=cells.one("Issue Type"),
            assignee=cells.one("Assignee"),
        )
        if priority := cells.one("Priority"):
            if priority.lower() in JIRA_PRIORITIES:
                row.fields["priority"] = JIRA_PRIORITIES[priority.lower()]
            else:
                row.errors.append(f"priority {priority!r} is not one Jira exports")
        if description := cells.one("Description"):
            row.fields["description"] = description
        if labels := [label for label in cells.all("Labels") if label]:
            row.fields["labels"] = labels
        points = next((v for c in STORY_POINT_COLUMNS if (v := cells.one(c))), "")
        if points:
            row.fields["storyPoints"] = _number(points, "story points", row)
        if due := cells.one("Due date"):
            row.fields["dueDate"] = _jira_date(due, row)
        if sprints := [s for s in cells.all("Sprint") if s]:
            row_sprints[id(row)] = sprints
            made = (0, int(issue_id)) if issue_id.isdigit() else (1, line)
            for sprint in sprints:
                first_issue[sprint] = min(first_issue.get(sprint, made), made)
        row.parent = (
            cells.one("Parent id")
            or cells.one("Parent")
            or cells.one("Custom field (Epic Link)")
            or None
        )
        for column, value in cells.items():
            if value and (match := LINK_COLUMN.match(column)):
                side, name = match.group(1).lower(), match.group(2).lower()
                kind_of_link = JIRA_LINKS.get((side, name), "relates_to")
                row.relations.append((kind_of_link, value))
        jira_values(custom, cells.all, row)
        rows.append(row)
    # Jira lists rows (and so sprints) newest first; its sprint ids are not in the file, but a
    # sprint's oldest issue tells when it was made, near enough to keep Sprint 1 before 2.
    sprint_names = sorted(first_issue, key=lambda name: first_issue[name])
    for row in rows:
        if id(row) in row_sprints:
            row.sprint = max(row_sprints[id(row)], key=sprint_names.index)  # (its newest)
    rows = _in_key_order(rows)
    for row in rows:
        if row.parent is not None:
            row.parent = ids.get(row.parent, row.parent)
    notes = ["Reporter and Created are not imported: items are created by the importing key."]
    if custom.ignored:
        notes.append("Columns not imported (no custom field of that name, or a user field):")
        notes += [f"  {column!r}" for column in custom.ignored]
    return Plan(rows=rows, sprints=[SprintPlan(ref=n, name=n) for n in sprint_names], notes=notes)


def read_csv(text: str) -> Plan:
    """Our own columns (README lists them); lists separated by `;`."""
    header, records = _records(text)
    unknown = [c for c in header if c not in OWN_COLUMNS]
    rows: list[Row] = []
    sprint_names: list[str] = []
    for line, values in records:
        cells = _Cells(header, values)
        row = Row(line=line, ref=cells.one("key") or f"line {line}", fields={})
        row.errors.extend(f"unknown column {c!r}" for c in unknown)
        row.fields["title"] = cells.one("title")
        for name in ("type", "status"):
            if value := cells.one(name):
                row.fields[name] = value
        for f in _CSV_PLAIN:
            if value := cells.one(f.name):
                row.fields[f.name] = _cell(f, value, row)
        if labels := _list(cells.one("labels")):
            row.fields["labels"] = labels
        row.assignees = _list(cells.one("assignees"))
        if sprint := cells.one("sprint"):
            row.sprint = sprint
            if sprint not in sprint_names:
                sprint_names.append(sprint)
        row.parent = cells.one("parent") or None
        for column, kind in (("blocks", "blocks"), ("relatesTo", "relates_to")):
            row.relations += [(kind, target) for target in _list(cells.one(column))]
        row.relations += [("duplicates", t) for t in _list(cells.one("duplicates"))]
        rows.append(row)
    return Plan(rows=rows, sprints=[SprintPlan(ref=n, name=n) for n in sprint_names])


def read_json(text: str) -> Plan:
    """A document `sprintboard export` wrote, of exactly one project."""
    document = json.loads(text)
    if not isinstance(document, dict) or document.get("format") != "sprintboard-export":
        raise ValueError("not a sprintboard export (its 'format' is not 'sprintboard-export')")
    projects = document.get("projects") or []
    if len(projects) != 1:
        raise ValueError(
            f"the export holds {len(projects)} projects; export one with --project to import it"
        )
    project = projects[0]
    sprints = [
        SprintPlan(
            ref=s["$id"],
            name=s["name"],
            status=s["status"],
            goal=s.get("goal"),
            start_date=s.get("startDate"),
            end_date=s.get("endDate"),
        )
        for s in project["sprints"]
    ]
    rows: list[Row] = []
    for index, item in enumerate(project["items"], start=1):
        fields = {k: item[k] for k in ITEM_FIELDS if item.get(k) not in (None, [], False)}
        row = Row(
            line=index,
            ref=item["$id"],
            fields=fields,
            assignees=list(item.get("assignees", [])),
            sprint=item.get("sprintId"),
            parent=item.get("parentId"),
            original_key=item.get("key"),
            comments=[c["body"] for c in item.get("comments", [])],
            time_logs=[
                {k: log[k] for k in ("hours", "date", "note") if log.get(k) is not None}
                for log in item.get("timeLogs", [])
            ],
        )
        rows.append(row)
    by_id = {row.ref: row for row in rows}
    for relation in project.get("relations", []):
        if relation["from"] in by_id:
            by_id[relation["from"]].relations.append((relation["type"], relation["to"]))
    return Plan(rows=rows, sprints=sprints, custom_fields=list(document.get("fields") or []))


class _Cells:
    """One CSV record, read by column name; Jira repeats a column for each value of a list."""

    def __init__(self, header: list[str], values: list[str]) -> None:
        self._cells = [(c, c.casefold(), v) for c, v in zip(header, values, strict=False)]

    def one(self, column: str) -> str:
        """The first non-blank cell of the column, named in any case (`Due Date`)."""
        name = column.casefold()
        return next((v.strip() for _, c, v in self._cells if c == name and v.strip()), "")

    def all(self, column: str) -> list[str]:
        name = column.casefold()
        return [v.strip() for _, c, v in self._cells if c == name]

    def items(self) -> Iterator[tuple[str, str]]:
        return ((c, v.strip()) for c, _, v in self._cells)


def _records(text: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and each record with the line it starts on (a cell may span lines)."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    header = [column.strip() for column in next(reader, [])]
    if not header:
        raise ValueError("the file is empty: no header row")
    records: list[tuple[int, list[str]]] = []
    start = reader.line_num + 1
    for values in reader:
        if any(value.strip() for value in values):
            records.append((start, values))
        start = reader.line_num + 1
    return header, records


def _in_key_order(rows: list[Row]) -> list[Row]:
    """Jira exports newest first; items are created oldest first, so keys keep their order."""

    def number(row: Row) -> tuple[int, int]:
        match = re.search(r"-(\d+)$", row.ref)
        return (0, int(match.group(1))) if match else (1, row.line)

    return sorted(rows, key=number)


def _cell(f: ItemField, value: str, row: Row) -> Any:
    """A plain field's cell as its kind reads it; a bad one is an error of the row."""
    if f.kind == "real":
        return _number(value, f.name, row)
    if f.kind == "bool":
        if value.lower() not in ("true", "false"):
            row.errors.append(f"{f.name}: {value!r} is not true or false")
        return value.lower() == "true"
    return value


def _number(value: str, name: str, row: Row) -> Any:
    try:
        return float(value)
    except ValueError:
        row.errors.append(f"{name}: {value!r} is not a number")
        return None


def _jira_date(value: str, row: Row) -> str | None:
    try:
        return datetime.fromisoformat(value).date().isoformat()
    except ValueError:
        pass
    for pattern in JIRA_DATES:
        try:
            return datetime.strptime(value, pattern).date().isoformat()
        except ValueError:
            continue
    row.errors.append(
        f"due date: {value!r} is not a date Jira exports "
        "(e.g. 22/Sep/25 9:26 AM, 16/02/2017 15:26 or 2025-09-22)"
    )
    return None


def _list(value: str) -> list[str]:
    return [part.strip() for part in value.split(";") if part.strip()]


def sprint_fields(sprint: SprintPlan) -> Json:
    """The create body of a sprint of the plan (its status is reached afterwards)."""
    body: dict[str, Any] = {"name": sprint.name}
    for name, value in (
        ("goal", sprint.goal),
        ("startDate", sprint.start_date),
        ("endDate", sprint.end_date),
    ):
        if value is not None:
            body[name] = value
    return body
