"""`POST /tasks/bulk-create`: up to 500 work items in one transaction, set-based.

Each entry is checked as `POST /tasks` checks one (an error names its entry, `tasks[3].name`),
but the work is done per kind, not per item: one bump of each project's key counter for all
its new items (so their keys are consecutive, in request order), one read of each table a
rule needs, multi-row INSERTs, one read back. Locks are taken in the order a single create
takes them: sprints (for share), then the projects' counters (in `$id` order), then parents
(key share) and the workspace's hierarchy lock.
"""

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from sprintboard.access import WorkspaceAccess
from sprintboard.errors import InvalidRequest
from sprintboard.events import service as events
from sprintboard.models import new_ids, utcnow
from sprintboard.sql import Raw, in_list, raw
from sprintboard.workitems import hierarchy, reads
from sprintboard.workitems.schemas import TaskCreate
from sprintboard.workitems.service import (
    check_sprint,
    check_type,
    entry,
    entry_error,
    no_project,
    title_of,
    unique,
)

_COLUMNS = (
    "id",
    "workspace_id",
    "project_id",
    "sprint_id",
    "number",
    "key",
    "title",
    "type",
    "status",
    "priority",
    "description",
    "assignee_ids",
    "labels",
    "due_date",
    "estimated_hours",
    "story_points",
    "flagged",
    "position",
    "comment_count",
    "logged_hours",
    "created_by",
    "version",
    "created_at",
    "updated_at",
    "parent_id",
)
_ROWS_PER_INSERT = 100
"""25 columns a row: 2,500 parameters a statement, well within both drivers' limits."""


def workspace_of(entries: Sequence[TaskCreate]) -> str:
    """The one workspace of the entries; 400 `mixed_workspaces` if they name several."""
    workspaces = {data.workspace_id for data in entries}
    if len(workspaces) > 1:
        raise InvalidRequest(
            "tasks", "mixed_workspaces", "tasks: all work items must be in one workspace."
        )
    return entries[0].workspace_id


def bulk_create(
    session: Session, *, access: WorkspaceAccess, entries: Sequence[TaskCreate]
) -> list[dict[str, Any]]:
    """Create the entries' work items, all or nothing; returns them in request order."""
    db = raw(session)
    workspace_id = access.workspace_id
    titles = []
    for index, data in enumerate(entries):
        with entry(index):
            title = title_of(data.name, data.title)
            if title is None:
                raise InvalidRequest("name", "required", "name: a title is required.")
            titles.append(title)
    for type_name, at in _first_of(entries, lambda e: [e.type]).items():
        with entry(at):
            check_type(session, workspace_id, type_name)
    _check_assignees(db, workspace_id, entries)
    _check_projects(db, workspace_id, entries)
    sprint_ids = _sprints(session, db, workspace_id, entries)
    numbers = _numbers(db, workspace_id, entries)
    positions = _positions(db, workspace_id, entries)
    parent_ids = _parents(db, workspace_id, entries)
    now, codec = db.codec.param(utcnow()), db.codec
    ids = new_ids(len(entries))
    rows = []
    for index, data in enumerate(entries):
        number, project_key = numbers[index]
        sprint_id = sprint_ids[index]
        rows.append(
            (
                ids[index],
                workspace_id,
                data.project_id,
                sprint_id,
                number,
                f"{project_key}-{number}",
                titles[index],
                data.type,
                data.status or ("TODO" if sprint_id else "BACKLOG"),
                data.priority,
                data.description,
                codec.json_param(unique(data.assignee_ids)),
                codec.json_param(unique(data.labels)),
                codec.day_param(data.due_date),
                data.estimated_hours,
                data.story_points,
                data.flagged,
                positions[index],
                0,
                0,
                access.caller.user_id,
                1,
                now,
                now,
                parent_ids[index],
            )
        )
    _insert(db, rows)
    records = reads.read_items(session, ids)  # (in `$id` order, which is request order)
    events.record_many(
        session,
        [
            {
                "workspace_id": workspace_id,
                "type": "task.created",
                "subject_id": record["$id"],
                "actor_id": access.caller.user_id,
                "payload": {"workItem": reads.event_form(record)},
            }
            for record in records
        ],
    )
    return records


def _first_of(entries: Sequence[TaskCreate], values: Any) -> dict[str, int]:
    """Each value the entries hold (`values(entry)` lists an entry's), and the first entry
    holding it (errors name that one)."""
    first: dict[str, int] = {}
    for index, data in enumerate(entries):
        for value in values(data):
            first.setdefault(value, index)
    return first


def _check_assignees(db: Raw, workspace_id: str, entries: Sequence[TaskCreate]) -> None:
    wanted = sorted({user for e in entries for user in e.assignee_ids})
    if not wanted:
        return
    placeholders, names = in_list("u", wanted)
    members = {
        row[0]
        for row in db.rows(
            "SELECT user_id FROM workspace_members"
            f" WHERE workspace_id = :workspace_id AND user_id IN {placeholders}",
            {"workspace_id": workspace_id, **names},
        )
    }
    for index, data in enumerate(entries):
        if missing := [u for u in data.assignee_ids if u not in members]:
            raise InvalidRequest(
                f"tasks[{index}].assigneeIds",
                "not_found",
                f"tasks[{index}].assigneeIds: not members of the workspace: {missing}",
            )


def _check_projects(db: Raw, workspace_id: str, entries: Sequence[TaskCreate]) -> None:
    first = _first_of(entries, lambda e: [e.project_id])
    placeholders, names = in_list("p", sorted(first))
    found = {
        row[0]
        for row in db.rows(
            f"SELECT id FROM projects WHERE workspace_id = :workspace_id AND id IN {placeholders}",
            {"workspace_id": workspace_id, **names},
        )
    }
    for project_id, index in sorted(first.items(), key=lambda pair: pair[1]):
        if project_id not in found:
            raise entry_error(index, no_project())


def _sprints(
    session: Session, db: Raw, workspace_id: str, entries: Sequence[TaskCreate]
) -> list[str | None]:
    """Each entry's sprint: the one it names (checked, locked for share) or, if it names
    none, its project's active sprint (locked for share), as a single create does."""
    named = _first_of(
        entries, lambda e: [e.sprint_id] if e.sent("sprint_id") and e.sprint_id else []
    )
    for sprint_id, index in sorted(named.items()):
        with entry(index):
            check_sprint(session, entries[index].project_id, workspace_id, sprint_id)
    for index, data in enumerate(entries):  # (each named sprint must be of its entry's project)
        if data.sprint_id in named and named[data.sprint_id] != index:
            with entry(index):
                check_sprint(session, data.project_id, workspace_id, data.sprint_id)
    defaulted = sorted({e.project_id for e in entries if not e.sent("sprint_id")})
    active: dict[str, str] = {}
    if defaulted:
        placeholders, names = in_list("p", defaulted)
        share = "" if db.codec.sqlite else " ORDER BY id FOR SHARE"
        active = {
            project_id: sprint_id
            for sprint_id, project_id in db.rows(
                f"SELECT id, project_id FROM sprints WHERE project_id IN {placeholders}"
                f" AND status = 'ACTIVE'{share}",
                names,
            )
        }
    return [(e.sprint_id if e.sent("sprint_id") else active.get(e.project_id)) for e in entries]


def _numbers(db: Raw, workspace_id: str, entries: Sequence[TaskCreate]) -> list[tuple[int, str]]:
    """Each entry's number and project key: one counter bump per project, for all its new
    items (projects in `$id` order, so two bulk creates never wait for each other in a ring)."""
    counts: dict[str, int] = defaultdict(int)
    for data in entries:
        counts[data.project_id] += 1
    next_number: dict[str, list[Any]] = {}
    for project_id in sorted(counts):
        row = db.row(
            "UPDATE projects SET last_item_number = last_item_number + :n,"
            " item_count = item_count + :n WHERE id = :project_id AND workspace_id = :workspace_id"
            " RETURNING last_item_number, key",
            {"n": counts[project_id], "project_id": project_id, "workspace_id": workspace_id},
        )
        if row is None:  # (checked before; deleted meanwhile is "not found" too)
            raise no_project()
        next_number[project_id] = [int(row[0]) - counts[project_id] + 1, row[1]]
    numbers = []
    for data in entries:
        slot = next_number[data.project_id]
        numbers.append((slot[0], slot[1]))
        slot[0] += 1
    return numbers


def _positions(db: Raw, workspace_id: str, entries: Sequence[TaskCreate]) -> list[float]:
    """Each entry's position: its own, or the end of its project's board, one after another
    in request order (read under the counters' locks, as a single create reads it)."""
    projects = sorted({e.project_id for e in entries if e.position is None})
    ends: dict[str, float] = {}
    if projects:
        placeholders, names = in_list("p", projects)
        ends = {
            project_id: end or 0
            for project_id, end in db.rows(
                "SELECT project_id, max(position) FROM work_items"
                f" WHERE workspace_id = :workspace_id AND project_id IN {placeholders}"
                " GROUP BY project_id",
                {"workspace_id": workspace_id, **names},
            )
        }
    positions = []
    for data in entries:
        if data.position is not None:
            positions.append(data.position)
            continue
        ends[data.project_id] = ends.get(data.project_id, 0) + 1
        positions.append(ends[data.project_id])
    return positions


def _parents(db: Raw, workspace_id: str, entries: Sequence[TaskCreate]) -> list[str | None]:
    """Each entry's parent `$id`: found in the workspace, and deep enough for one level more."""
    first = _first_of(entries, lambda e: [e.parent_id] if e.parent_id is not None else [])
    if not first:
        return [None] * len(entries)
    found = hierarchy.resolve_parents(db, workspace_id, first, lock=True)
    for ref, index in sorted(first.items(), key=lambda pair: pair[1]):
        if ref not in found:
            raise InvalidRequest(
                f"tasks[{index}].parentId",
                "not_found",
                f"tasks[{index}].parentId: no such work item here.",
            )
    hierarchy.lock_hierarchy(db, workspace_id)
    levels = {
        parent: len(chain) for parent, chain in hierarchy.ancestry(db, found.values()).items()
    }
    for ref, index in sorted(first.items(), key=lambda pair: pair[1]):
        with entry(index):
            hierarchy.check_depth(levels[found[ref]] + 1, "parentId")
    return [found[e.parent_id] if e.parent_id is not None else None for e in entries]


def _insert(db: Raw, rows: list[tuple[Any, ...]]) -> None:
    columns = ", ".join(_COLUMNS)
    for start in range(0, len(rows), _ROWS_PER_INSERT):
        chunk = rows[start : start + _ROWS_PER_INSERT]
        params: dict[str, Any] = {}
        values = []
        for n, row in enumerate(chunk):
            names = [f"c{n}_{i}" for i in range(len(_COLUMNS))]
            params.update(zip(names, row, strict=True))
            values.append(f"({', '.join(':' + name for name in names)})")
        db.execute(f"INSERT INTO work_items ({columns}) VALUES {', '.join(values)}", params)
