"""A Jira file's people, statuses and types, matched to the workspace's records (contract §21).

The reader keeps what Jira wrote (`Row.jira`); only the workspace can say what "Ada Lovelace"
or "Ready for QA" is there. Matching changes the rows in place: their `status`, `type` and
assignees (as emails) are set, or the row gets an error naming the option that resolves it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sprintboard.client import Client
from sprintboard.transfer.plan import Json, Plan, Row

BUILT_IN_STATUSES = {
    "to do": "TODO",
    "in progress": "IN_PROGRESS",
    "in review": "IN_REVIEW",
    "done": "DONE",
    "backlog": "BACKLOG",
}
BUILT_IN_TYPES = {
    "task": "TASK",
    "bug": "BUG",
    "story": "STORY",
    "epic": "EPIC",
    "sub-task": "TASK",
}
TYPES = ("TASK", "BUG", "STORY", "EPIC")
"""The types every workspace has; `GET /workspaces/{id}/work-item-types` lists the others."""
CATEGORIES = {"to do": "TODO", "in progress": "IN_PROGRESS", "done": "DONE"}
"""Jira's `Status Category` column, as §17's categories."""
NAME = re.compile(r"[A-Z][A-Z0-9_]{0,31}")
STATUS_LIMIT = 30
"""A project's statuses at most (§17), checked before any is created."""


@dataclass(frozen=True)
class Choices:
    """What the command line decided: mappings win over every match."""

    statuses: Mapping[str, str] = field(default_factory=dict)
    types: Mapping[str, str] = field(default_factory=dict)
    assignees: Mapping[str, str] = field(default_factory=dict)
    """Jira's name of a person → a member's email."""
    skip_unknown_assignees: bool = False
    create_missing: bool = False


@dataclass(frozen=True)
class Records:
    """What the workspace and the project already have."""

    members: list[Json]
    statuses: list[Json]
    types: list[str]

    @classmethod
    def read(cls, client: Client, workspace_id: str, project_id: str) -> Records:
        return cls(
            members=client.members(workspace_id),
            statuses=client.statuses(project_id),
            types=[*TYPES, *(t["name"] for t in client.work_item_types(workspace_id))],
        )


FIELD_KEY = re.compile(r"[a-z][a-zA-Z0-9]{0,31}")


def keep_keys(client: Client, plan: Plan, *, workspace_id: str, field_key: str) -> bool:
    """Puts each row's original key in the custom text field `field_key`; True when that
    field is still to be created (`create_kept_key_field`).

    Raises ValueError when the key cannot name a field, or names one that is not text.
    """
    if not FIELD_KEY.fullmatch(field_key):
        raise ValueError(f"--keep-key {field_key!r}: a field key matches [a-z][a-zA-Z0-9]{{0,31}}")
    found = next((f for f in client.fields(workspace_id) if f["key"] == field_key), None)
    if found is not None and found["type"] != "text":
        raise ValueError(
            f"--keep-key {field_key}: the workspace's field {field_key} is a {found['type']} "
            "field; a key is kept in a text field"
        )
    for row in plan.rows:
        row.fields.setdefault("fields", {})[field_key] = row.original_key or row.ref
    return found is None


def create_kept_key_field(client: Client, *, workspace_id: str, field_key: str, name: str) -> None:
    client.create_field(
        workspace_id,
        key=field_key,
        name=name,
        type="text",
        description="The item's key in the system it was imported from.",
    )


@dataclass
class Matched:
    new_statuses: dict[str, Json] = field(default_factory=dict)
    """Statuses `--create-missing` adds, by name: `{"name", "label", "category"}`."""
    new_types: list[str] = field(default_factory=list)
    lost_assignees: int = 0
    """Rows imported without their assignee (`--unknown-assignees skip`)."""
    notes: list[str] = field(default_factory=list)


def fit(jira_name: str) -> str | None:
    """Jira's name made a §17 name (`Ready for QA` → `READY_FOR_QA`); None when nothing of it
    fits (no letter first, say)."""
    ascii_name = unicodedata.normalize("NFKD", jira_name).encode("ascii", "ignore").decode()
    fitted = re.sub(r"[^A-Z0-9]+", "_", ascii_name.upper()).strip("_")[:32].rstrip("_")
    return fitted if NAME.fullmatch(fitted) else None


def _squashed(text: str) -> str:
    """Compared ignoring case and spaces (and the underscores fitting puts for them)."""
    return re.sub(r"[\s_]+", "", text).casefold()


def match(plan: Plan, records: Records, choices: Choices) -> Matched:
    """Sets each Jira row's status, type and assignee, or an error on the row.

    Raises ValueError when a mapping of the command line names nothing the workspace has
    (that is the command's mistake, not a row's).
    """
    matcher = _Matcher(records, choices)
    matched = Matched()
    seen_status: Counter[tuple[str, str]] = Counter()
    seen_type: Counter[tuple[str, str]] = Counter()
    seen_person: Counter[tuple[str, str]] = Counter()
    for row in plan.rows:
        if row.jira is None:
            continue
        seen_status[(row.jira.status, _status(row, matcher, matched))] += 1
        seen_type[(row.jira.type, _type(row, matcher, matched))] += 1
        if row.jira.assignee:
            seen_person[(row.jira.assignee, _assignee(row, matcher, matched))] += 1
    total = len(records.statuses) + len(matched.new_statuses)
    if total > STATUS_LIMIT:
        raise ValueError(
            f"--create-missing would give the project {total} statuses, over the "
            f"{STATUS_LIMIT} a project may have: map some with --map-status"
        )
    matched.notes += _table("Jira status → status:", seen_status)
    matched.notes += _table("Jira issue type → type:", seen_type)
    matched.notes += _table("Jira assignee → member:", seen_person)
    return matched


def create_missing(
    client: Client,
    matched: Matched,
    *,
    workspace_id: str,
    project_id: str,
    progress: Callable[[str], None],
) -> None:
    """Adds the statuses and types `--create-missing` asked for, before any item needs them."""
    for status in matched.new_statuses.values():
        client.create_status(project_id, **status)
    for name in matched.new_types:
        client.create_work_item_type(workspace_id, name)
    if matched.new_statuses or matched.new_types:
        progress(f"statuses: {len(matched.new_statuses)} created, types: {len(matched.new_types)}")


class _Matcher:
    def __init__(self, records: Records, choices: Choices) -> None:
        self.create = choices.create_missing
        self.skip_unknown_assignees = choices.skip_unknown_assignees
        self.statuses = records.statuses
        self.types = records.types
        self.by_email = {m["email"].casefold(): m["email"] for m in records.members}
        self.by_name: dict[str, list[str]] = {}
        for member in records.members:
            self.by_name.setdefault(member["name"].casefold(), []).append(member["email"])
        self.status_map = {
            k.casefold(): self._mapped(k, v, self.status, "--map-status")
            for k, v in choices.statuses.items()
        }
        self.type_map = {
            k.casefold(): self._mapped(k, v, self.type, "--map-type")
            for k, v in choices.types.items()
        }
        self.person_map: dict[str, str] = {}
        for jira_name, email in choices.assignees.items():
            if email.casefold() not in self.by_email:
                raise ValueError(
                    f"--map-assignee '{jira_name}={email}': {email} is not a member of the "
                    "workspace"
                )
            self.person_map[jira_name.casefold()] = self.by_email[email.casefold()]

    @staticmethod
    def _mapped(source: str, target: str, find: Callable[[str], str | None], option: str) -> str:
        found = find(target)
        if found is None:
            what = "status of the project" if option == "--map-status" else "type of the workspace"
            raise ValueError(f"{option} '{source}={target}': {target} is not a {what}")
        return found

    def status(self, jira_name: str) -> str | None:
        """The project's status that Jira's name is, by fitted name or label, or the table."""
        fitted = _squashed(fit(jira_name) or jira_name)
        for status in self.statuses:
            if fitted == _squashed(status["name"]) or _squashed(jira_name) == _squashed(
                status["label"]
            ):
                return str(status["name"])
        built_in = BUILT_IN_STATUSES.get(" ".join(jira_name.casefold().split()))
        if built_in in {s["name"] for s in self.statuses}:
            return built_in
        return None

    def type(self, jira_name: str) -> str | None:
        fitted = _squashed(fit(jira_name) or jira_name)
        for name in self.types:
            if fitted == _squashed(name):
                return name
        return BUILT_IN_TYPES.get(" ".join(jira_name.casefold().split()))

    def person(self, jira_name: str) -> tuple[str | None, str]:
        """A member's email, or None and why not."""
        if mapped := self.person_map.get(jira_name.casefold()):
            return mapped, ""
        if email := self.by_email.get(jira_name.casefold()):
            return email, ""
        named = self.by_name.get(jira_name.casefold(), [])
        if len(named) == 1:
            return named[0], ""
        if named:
            return None, f"{len(named)} members are named {jira_name!r}"
        return None, "no member has that email or name"


def _status(row: Row, matcher: _Matcher, matched: Matched) -> str:
    """Sets the row's status; what it became, for the table."""
    assert row.jira is not None
    jira_name = row.jira.status
    if not jira_name:
        return "the default (TODO in a sprint, else BACKLOG)"
    found = matcher.status_map.get(jira_name.casefold()) or matcher.status(jira_name)
    if found is not None:
        row.fields["status"] = found
        return found
    name, category = fit(jira_name), CATEGORIES.get(row.jira.category.casefold())
    if matcher.create and name and category:
        new = matched.new_statuses.setdefault(
            name, {"name": name, "label": jira_name[:64], "category": category}
        )
        row.fields["status"] = name
        return f"{name} (new, {new['category']})"
    mapping = f"add --map-status '{jira_name}=TODO'"
    if not name:
        row.errors.append(f"status {jira_name!r} cannot be made a status name: {mapping}")
    elif category is None and matcher.create:
        row.errors.append(
            f"status {jira_name!r} has no Status Category (To Do, In Progress or Done) to "
            f"create it with: {mapping}"
        )
    else:
        alternative = " or --create-missing" if category else ""
        row.errors.append(
            f"status {jira_name!r} is not one of the project's: {mapping}{alternative}"
        )
    return "?"


def _type(row: Row, matcher: _Matcher, matched: Matched) -> str:
    assert row.jira is not None
    jira_name = row.jira.type
    if not jira_name:
        return "TASK (the default)"
    found = matcher.type_map.get(jira_name.casefold()) or matcher.type(jira_name)
    if found is not None:
        row.fields["type"] = found
        return found
    name = fit(jira_name)
    if matcher.create and name:
        if name not in matched.new_types:
            matched.new_types.append(name)
        row.fields["type"] = name
        return f"{name} (new)"
    mapping = f"add --map-type '{jira_name}=TASK'"
    if not name:
        row.errors.append(f"issue type {jira_name!r} cannot be made a type name: {mapping}")
    else:
        row.errors.append(
            f"issue type {jira_name!r} is not one of the workspace's: {mapping} or --create-missing"
        )
    return "?"


def _assignee(row: Row, matcher: _Matcher, matched: Matched) -> str:
    assert row.jira is not None
    jira_name = row.jira.assignee
    email, why = matcher.person(jira_name)
    if email is not None:
        row.assignees = [email]
        return email
    if matcher.skip_unknown_assignees:
        matched.lost_assignees += 1
        return "nobody (--unknown-assignees skip)"
    row.errors.append(
        f"assignee {jira_name!r} is not a member of the workspace ({why}): add --map-assignee "
        f"'{jira_name}=<email>' or --unknown-assignees skip"
    )
    return "?"


def _table(title: str, seen: Counter[tuple[str, str]]) -> list[str]:
    if not seen:
        return []
    lines = [title]
    for (source, target), count in sorted(seen.items()):
        lines.append(f"  {source!r} → {target} ({count} rows)")
    return lines
