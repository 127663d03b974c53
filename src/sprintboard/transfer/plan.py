"""What an import will write, read from any format, checked whole before anything is written.

Every reader turns its file into a `Plan`: sprints, and rows that each become one work item
with its comments, time logs and relations. References between rows (parents, relations)
and to sprints use the file's own names (`ref`), resolved to new records only when written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from sprintboard.workitems.fields import EXPORTED
from sprintboard.workitems.schemas import TaskCreate

Json = dict[str, Any]

ITEM_FIELDS = EXPORTED
"""An item's own fields: what an export writes of it and an import sends back on create (the
registry's `exported` fields)."""
RELATION_TYPES = ("blocks", "blocked_by", "relates_to", "duplicates", "duplicated_by")
# The one direction a relation is stored in, whichever side of it a file names.
CANONICAL = {"blocked_by": "blocks", "duplicated_by": "duplicates"}


@dataclass
class SprintPlan:
    ref: str
    name: str
    status: str = "PLANNED"
    goal: str | None = None
    start_date: str | None = None
    end_date: str | None = None


@dataclass
class JiraCells:
    """What a Jira row says that only the workspace's records can decide: its status (with
    Jira's category of it), its type and its assignee, matched by `transfer.jira`."""

    status: str = ""
    category: str = ""
    type: str = ""
    assignee: str = ""


@dataclass
class Row:
    line: int
    """Where the row starts in the file (1-based), for error messages."""
    ref: str
    """The row's name in the file (its key there), for parents and relations."""
    fields: Json
    """The create body's fields, without workspace, project, sprint and parent."""
    assignees: list[str] = field(default_factory=list)
    sprint: str | None = None
    parent: str | None = None
    relations: list[tuple[str, str]] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    time_logs: list[Json] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    original_key: str | None = None
    """The item's key in the system it came from, when that is not `ref` (a JSON export)."""
    jira: JiraCells | None = None


@dataclass
class Plan:
    rows: list[Row]
    sprints: list[SprintPlan] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the reader decided that the user should see (mappings, columns ignored)."""
    custom_fields: list[Json] = field(default_factory=list)
    """Custom fields the items' values need (an export's), made where the workspace lacks
    them."""

    def drop_missing_links(self) -> int:
        """Leave out the parents and relations naming an item not in the file; how many."""
        refs = {row.ref for row in self.rows}
        dropped = 0
        for row in self.rows:
            if row.parent is not None and row.parent not in refs:
                row.parent = None
                dropped += 1
            kept = [(kind, target) for kind, target in row.relations if target in refs]
            dropped += len(row.relations) - len(kept)
            row.relations = kept
        return dropped

    def relations(self) -> list[tuple[str, str, str]]:
        """Each relation once, `(from, type, to)` in its stored direction."""
        seen: dict[tuple[str, str, str], None] = {}
        for row in self.rows:
            for kind, target in row.relations:
                source, stored = row.ref, kind
                if kind in CANONICAL:
                    source, stored, target = target, CANONICAL[kind], row.ref
                if stored == "relates_to" and (target, stored, source) in seen:
                    continue
                seen.setdefault((source, stored, target), None)
        return list(seen)


def check(plan: Plan, *, members: dict[str, str]) -> list[str]:
    """Every problem of the plan, one line each, naming the row's line, in the file's order
    (rows may be planned in another); empty when all is good.

    `members` maps a member's email (lower case) to their user id.
    """
    refs = {row.ref for row in plan.rows}
    sprints = {sprint.ref for sprint in plan.sprints}
    problems: list[str] = []
    duplicates = _repeated(row.ref for row in plan.rows)
    for row in sorted(plan.rows, key=lambda row: row.line):
        errors = list(row.errors)
        if row.ref in duplicates:
            errors.append(f"key {row.ref!r} appears more than once")
        errors.extend(_field_errors(row))
        for email in row.assignees:
            if email.lower() not in members:
                errors.append(f"assignee {email!r} is not a member of the workspace")
        if row.sprint is not None and row.sprint not in sprints:
            errors.append(f"sprint {row.sprint!r} is not in the file")
        if row.parent is not None and row.parent not in refs:
            errors.append(f"parent {row.parent!r} is not in the file")
        if row.parent == row.ref:
            errors.append("an item cannot be its own parent")
        for kind, target in row.relations:
            if kind not in RELATION_TYPES:
                errors.append(f"unknown relation type {kind!r}")
            elif target not in refs:
                errors.append(f"related item {target!r} is not in the file")
            elif target == row.ref:
                errors.append("an item cannot be related to itself")
        problems.extend(f"line {row.line}: {error}" for error in errors)
    return problems


def _field_errors(row: Row) -> list[str]:
    """The API's own rules for a create, checked here so every bad row is named at once."""
    body = {**row.fields, "workspaceId": "w", "projectId": "p"}
    if not str(body.get("title") or "").strip():
        return ["title: required"]
    try:
        TaskCreate.model_validate_json(json.dumps(body))
    except ValidationError as exc:
        return [
            f"{'.'.join(str(p) for p in error['loc']) or 'row'}: {error['msg']}"
            for error in exc.errors()
        ]
    return []


def _repeated(values: Any) -> set[str]:
    seen: set[str] = set()
    repeated: set[str] = set()
    for value in values:
        (repeated if value in seen else seen).add(value)
    return repeated
