"""A project's workflow: its statuses (each of a category) and its transition rules.

An item's `status` is a name of its project's statuses; the status's category, which never
changes, is kept on the item's row with it (`work_items.status_category`), so that "DONE"
(completion, points, progress, `blocked`, reports) costs what it did with five fixed
statuses. Item changes read the workflow here (`read_workflows`) and check it (`Workflow`).
The database holds the rule itself (`models.STATUS_FOREIGN_KEY`): a change that races a
status's delete fails there and runs again, so none leaves an item on a status its project
no longer has. Changes to one project's statuses take turns (`_locked`).
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from sqlalchemy.orm import Session

from sprintboard.access import row_lock
from sprintboard.errors import Conflict, InvalidRequest, NotFound
from sprintboard.sql import Raw, in_list, raw

Category = Literal["BACKLOG", "TODO", "IN_PROGRESS", "DONE"]
CATEGORIES: tuple[str, ...] = ("BACKLOG", "TODO", "IN_PROGRESS", "DONE")
NAME_PATTERN = r"^[A-Z][A-Z0-9_]{0,31}$"
BUILT_IN = (
    ("BACKLOG", "BACKLOG"),
    ("TODO", "TODO"),
    ("IN_PROGRESS", "IN_PROGRESS"),
    ("IN_REVIEW", "IN_PROGRESS"),
    ("DONE", "DONE"),
)
"""Every new project's statuses, in order, with their categories."""
MAX_STATUSES = 30


def label_of(name: str) -> str:
    """A status's default label: its name in sentence case (`IN_REVIEW` → "In review")."""
    return name.replace("_", " ").capitalize()


@dataclass(frozen=True)
class Status:
    name: str
    label: str
    category: str
    position: int

    def shown(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "category": self.category,
            "position": self.position,
        }


@dataclass(frozen=True)
class Workflow:
    """One project's statuses, in position order, and its transition rules (None: any)."""

    statuses: tuple[Status, ...]
    transitions: dict[str, list[str]] | None

    def category(self, name: str, field: str = "status") -> str:
        """The category of the status `name`; 400 `invalid_value` on `field` if the project
        has no such status."""
        for status in self.statuses:
            if status.name == name:
                return status.category
        names = ", ".join(s.name for s in self.statuses)
        raise InvalidRequest(
            field, "invalid_value", f"{field}: {name!r} is not a status of the project ({names})."
        )

    def default(self, *, in_sprint: bool) -> Status:
        """A new item's status: the first of category TODO in a sprint, else of BACKLOG."""
        wanted = "TODO" if in_sprint else "BACKLOG"
        return next(s for s in self.statuses if s.category == wanted)

    def check_transition(self, current: str, wanted: str) -> None:
        """409 `invalid_transition` unless the rules let `current` change to `wanted`."""
        if self.transitions is None or current == wanted or current not in self.transitions:
            return
        allowed = self.transitions[current]
        if wanted not in allowed:
            raise _invalid_transition(current, wanted, allowed)


def _invalid_transition(current: str, wanted: str, allowed: list[str]) -> Conflict:
    return Conflict(
        "invalid_transition",
        f"status: {current} may change only to {', '.join(allowed) or 'no other status'}.",
        field="status",
        **{"from": current, "to": wanted, "allowed": list(allowed)},
    )


_WORKFLOW = (
    "SELECT s.project_id AS project_id, s.name AS name, s.label AS label,"
    " s.category AS category, s.position AS position, {transitions} AS transitions"
    " FROM project_statuses s JOIN projects p ON p.id = s.project_id"
)


def read_workflows(
    db: Raw, project_ids: Iterable[str], *, workspace_id: str | None = None, lock: bool = False
) -> dict[str, Workflow]:
    """The workflows of these projects (those of the workspace `workspace_id`, if given: an
    item may only name its own workspace's projects), in one statement; with `lock`, their
    statuses locked (`row_lock`'s `NO KEY UPDATE`: see `_locked`)."""
    ids = sorted(set(project_ids))
    if not ids:
        return {}
    placeholders, params = in_list("p", ids)
    order = " ORDER BY s.project_id, s.position, s.name"
    if workspace_id is not None:
        order = f" AND p.workspace_id = :workspace_id{order}"
        params["workspace_id"] = workspace_id
    rows, columns = db.fetch(
        _WORKFLOW.format(transitions=db.codec.json_column("p.transitions"))
        + f" WHERE s.project_id IN {placeholders}{order}{row_lock(db, 's') if lock else ''}",
        params,
    )
    get = columns.getter("project_id", "name", "label", "category", "position", "transitions")
    statuses: dict[str, list[Status]] = {}
    rules: dict[str, dict[str, list[str]] | None] = {}
    for row in rows:
        project_id, name, label, category, position, transitions = get(row)
        statuses.setdefault(project_id, []).append(Status(name, label, category, int(position)))
        rules[project_id] = orjson.loads(transitions) if transitions is not None else None
    return {pid: Workflow(tuple(found), rules[pid]) for pid, found in statuses.items()}


def read_workflow(session: Session, project_id: str) -> Workflow:
    return read_workflows(raw(session), [project_id])[project_id]


def add_built_in(session: Session, project_id: str) -> None:
    """A new project's statuses: the five built-in ones."""
    raw(session).execute_many(
        "INSERT INTO project_statuses (project_id, name, label, category, position)"
        " VALUES (:project_id, :name, :label, :category, :position)",
        [
            {
                "project_id": project_id,
                "name": name,
                "label": label_of(name),
                "category": category,
                "position": position,
            }
            for position, (name, category) in enumerate(BUILT_IN)
        ],
    )


def create_status(
    session: Session,
    *,
    project_id: str,
    name: str,
    category: str,
    label: str | None,
    position: int | None,
) -> Status:
    db = raw(session)
    workflow = _locked(db, project_id)
    if any(s.name == name for s in workflow.statuses):
        raise Conflict("duplicate_status", f"The project has a status {name}.", name=name)
    if len(workflow.statuses) >= MAX_STATUSES:
        raise Conflict(
            "status_limit", f"A project has at most {MAX_STATUSES} statuses.", limit=MAX_STATUSES
        )
    made = Status(name, label or label_of(name), category, len(workflow.statuses))
    order = list(workflow.statuses)
    order.insert(min(position, len(order)) if position is not None else len(order), made)
    db.execute(
        "INSERT INTO project_statuses (project_id, name, label, category, position)"
        " VALUES (:project_id, :name, :label, :category, :position)",
        {**made.shown(), "project_id": project_id},
    )
    return _renumbered(db, project_id, order, made.name)


def update_status(
    session: Session, *, project_id: str, name: str, label: str | None, position: int | None
) -> Status:
    db = raw(session)
    workflow = _locked(db, project_id)
    current = _named(workflow, name)
    if label is not None and label != current.label:
        db.execute(
            "UPDATE project_statuses SET label = :label WHERE project_id = :p AND name = :name",
            {"label": label, "p": project_id, "name": name},
        )
    order = [s for s in workflow.statuses if s.name != name]
    where = current.position if position is None else min(position, len(order))
    order.insert(where, Status(name, label or current.label, current.category, current.position))
    return _renumbered(db, project_id, order, name)


def delete_status(
    session: Session, *, project_id: str, name: str, move_to: str | None
) -> tuple[Workflow, int]:
    """Removes the status; its items (if any) need `move_to` and move there (the caller
    moves them: `workitems`, which this module must not know). Answers the workflow as it was
    and how many items hold the status; nothing is written unless the delete may happen."""
    db = raw(session)
    workflow = _locked(db, project_id)
    status = _named(workflow, name)
    if sum(s.category == status.category for s in workflow.statuses) == 1:
        raise Conflict(
            "last_in_category",
            f"{name} is the last status of category {status.category}.",
            category=status.category,
        )
    if move_to is not None:
        if move_to == name:
            raise InvalidRequest("moveTo", "invalid_value", "moveTo: not the status deleted.")
        workflow.category(move_to, "moveTo")
    held = db.row(
        "SELECT count(*) FROM work_items WHERE project_id = :p AND status = :name",
        {"p": project_id, "name": name},
    )
    count = int(held[0]) if held else 0
    if count and move_to is None:
        raise Conflict(
            "status_in_use",
            f"{count} items hold {name}: say where they move (moveTo).",
            items=count,
        )
    return workflow, count


def remove_status(session: Session, *, project_id: str, workflow: Workflow, name: str) -> None:
    """The delete's write, once its items have moved: the row, its place in the order and in
    the transition rules."""
    db = raw(session)
    db.execute(
        "DELETE FROM project_statuses WHERE project_id = :p AND name = :name",
        {"p": project_id, "name": name},
    )
    _renumber(db, project_id, [s for s in workflow.statuses if s.name != name])
    if workflow.transitions is not None:
        rules = {
            source: [target for target in targets if target != name]
            for source, targets in workflow.transitions.items()
            if source != name
        }
        set_transitions(session, project_id=project_id, transitions=rules)


def set_transitions(
    session: Session, *, project_id: str, transitions: dict[str, list[str]] | None
) -> dict[str, list[str]] | None:
    db = raw(session)
    if transitions is not None:
        workflow = _locked(db, project_id)
        names = {s.name for s in workflow.statuses}
        for source, targets in transitions.items():
            for name in (source, *targets):
                if name not in names:
                    raise InvalidRequest(
                        "transitions",
                        "invalid_value",
                        f"transitions: {name!r} is not a status of the project.",
                    )
        transitions = {
            source: list(dict.fromkeys(targets)) for source, targets in transitions.items()
        }
    db.execute(
        "UPDATE projects SET transitions = :rules WHERE id = :p",
        {
            "rules": None if transitions is None else db.codec.json_param(transitions),
            "p": project_id,
        },
    )
    return transitions


def _locked(db: Raw, project_id: str) -> Workflow:
    """The workflow, its statuses locked (`row_lock`'s `NO KEY UPDATE`): changes of one
    project's statuses take turns, while item changes, whose foreign keys lock the statuses
    they move to for key share, go on."""
    return read_workflows(db, [project_id], lock=True)[project_id]


def _named(workflow: Workflow, name: str) -> Status:
    for status in workflow.statuses:
        if status.name == name:
            return status
    raise NotFound("Status")


def _renumbered(db: Raw, project_id: str, order: Sequence[Status], name: str) -> Status:
    """Positions 0, 1, 2... in `order` written where they changed; answers the status `name`
    at its place."""
    _renumber(db, project_id, order)
    at, status = next((at, s) for at, s in enumerate(order) if s.name == name)
    return Status(status.name, status.label, status.category, at)


def _renumber(db: Raw, project_id: str, order: Sequence[Status]) -> None:
    """Positions 0, 1, 2... in `order`, written where they changed."""
    changed = [
        {"p": project_id, "name": s.name, "position": at}
        for at, s in enumerate(order)
        if s.position != at
    ]
    if changed:
        db.execute_many(
            "UPDATE project_statuses SET position = :position"
            " WHERE project_id = :p AND name = :name",
            changed,
        )
