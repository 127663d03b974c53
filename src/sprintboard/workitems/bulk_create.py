"""`POST /tasks/bulk-create`: up to 500 work items in one transaction, set-based.

Each entry is checked as `POST /tasks` checks one (an error names its entry, `tasks[3].name`),
but the work is done per kind, not per item: one bump of each project's key counter for all
its new items (so their keys are consecutive, in request order, and their default positions
follow the board's end, which the counter's row keeps), one read of each table a rule needs,
one bulk write (the driver's `executemany` on SQLite, `COPY` on PostgreSQL), and an answer
built from the values written, not read back. Locks are taken in the order a single create
takes them: sprints (for share), then the projects' counters (in `$id` order), then parents
(key share) and the workspace's hierarchy lock.
"""

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy.orm import Session

from sprintboard.access import Caller, WorkspaceAccess, access_workspace_id, lock_clause
from sprintboard.customfields.service import read_definitions
from sprintboard.customfields.values import write_values
from sprintboard.errors import InvalidRequest, NotFound
from sprintboard.events import service as events
from sprintboard.models import new_ids, utcnow
from sprintboard.responses import iso
from sprintboard.sql import Raw, in_list, insert_rows, raw
from sprintboard.workflows.service import read_workflows
from sprintboard.workitems import hierarchy
from sprintboard.workitems.schemas import TaskCreate
from sprintboard.workitems.service import (
    BOARD_TOP,
    ITEM_COLUMNS,
    Assignee,
    NewItem,
    check_sprint,
    check_type,
    custom_values,
    entry,
    entry_error,
    item_values,
    new_record,
    no_project,
    placed,
    read_members,
    title_of,
    unique,
)


def workspace_access(
    session: Session, caller: Caller, entries: Sequence[TaskCreate]
) -> WorkspaceAccess:
    """The caller's standing in the one workspace of the entries (404 if not a member).
    Entries of several workspaces are 400 `mixed_workspaces`, once each is known to the
    caller: one naming a workspace the caller cannot see is a missing project (400
    `not_found` on `tasks[i].projectId`), as in any other workspace, so that nothing tells
    whether it exists."""
    first = _first_of(entries, lambda e: [e.workspace_id])
    if len(first) > 1:
        for workspace_id, index in sorted(first.items(), key=lambda pair: pair[1]):
            try:
                access_workspace_id(session, caller, workspace_id)
            except NotFound:
                raise entry_error(index, no_project()) from None
        raise InvalidRequest(
            "tasks", "mixed_workspaces", "tasks: all work items must be in one workspace."
        )
    return access_workspace_id(session, caller, entries[0].workspace_id)


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
    sending = any(data.custom_fields for data in entries)
    definitions = read_definitions(db, workspace_id) if sending else {}
    values = []
    for index, data in enumerate(entries):
        with entry(index):
            values.append(custom_values(db, workspace_id, data, definitions)[1])
    assignees = _assignees(db, workspace_id, entries)
    _check_projects(db, workspace_id, entries)
    workflows = read_workflows(db, {e.project_id for e in entries}, workspace_id=workspace_id)
    for index, data in enumerate(entries):
        if data.status is not None:
            with entry(index):
                workflows[data.project_id].category(data.status)
    sprint_ids = _sprints(session, db, workspace_id, entries)
    places = _places(db, workspace_id, entries)
    parent_ids = _parents(db, workspace_id, entries)
    moment = utcnow()
    now, created_at, codec = db.codec.param(moment), str(iso(moment)), db.codec
    created_by = access.caller.user_id
    rows, records, owns = [], [], []
    for index, (data, item_id) in enumerate(zip(entries, new_ids(len(entries)), strict=True)):
        number, project, position = places[index]
        new = NewItem(
            item_id=item_id,
            number=number,
            project=project,
            sprint_id=sprint_ids[index],
            position=data.position if data.position is not None else position,
            title=titles[index],
            assignees=[assignees[user] for user in unique(data.assignee_ids)]
            if len(data.assignee_ids) > 1
            else [assignees[user] for user in data.assignee_ids],
            parent_id=parent_ids[index],
            fields=values[index],
        )
        new = placed(new, data, workflows[data.project_id])
        rows.append(item_values(codec, data, new, created_by, now, json=_json_text))
        record, own = new_record(data, new, created_at=created_at)
        records.append(record)
        owns.append(own)
    _insert(session, rows)
    if any(values):
        write_values(db, definitions, [(r["$id"], r["fields"]) for r in records], new=True)
    events.record_many(
        session,
        [
            {
                "workspace_id": workspace_id,
                "type": "task.created",
                "subject_id": own["$id"],
                "actor_id": created_by,
                "payload": {"workItem": own},
            }
            for own in owns
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


def _assignees(db: Raw, workspace_id: str, entries: Sequence[TaskCreate]) -> dict[str, Assignee]:
    """The users the entries assign, by `$id`, each a member of the workspace (else 400
    `not_found`, naming the first entry with one who is not)."""
    wanted = sorted({user for e in entries for user in e.assignee_ids})
    if not wanted:
        return {}
    members = {assignee.id: assignee for assignee in read_members(db, workspace_id, wanted)}
    for index, data in enumerate(entries):
        if missing := [u for u in data.assignee_ids if u not in members]:
            raise InvalidRequest(
                f"tasks[{index}].assigneeIds",
                "not_found",
                f"tasks[{index}].assigneeIds: not members of the workspace: {missing}",
            )
    return members


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
        share = "" if db.codec.sqlite else " ORDER BY id" + lock_clause(db.dialect, "SHARE")
        rows, columns = db.fetch(
            f"SELECT id, project_id FROM sprints WHERE project_id IN {placeholders}"
            f" AND status = 'ACTIVE'{share}",
            names,
        )
        active = dict(map(columns.getter("project_id", "id"), rows))
    return [(e.sprint_id if e.sent("sprint_id") else active.get(e.project_id)) for e in entries]


_PLACE = {
    dialect: f"""
UPDATE projects SET last_item_number = last_item_number + :n, item_count = item_count + :n,
    board_end = {greatest}(board_end, coalesce({BOARD_TOP}, 0)) + :placed
WHERE id = :project_id AND workspace_id = :workspace_id
RETURNING last_item_number, key, name, board_end
"""
    for dialect, greatest in (("sqlite", "max"), ("postgresql", "greatest"))
}
"""One project's counter moved on for `n` new items, and its board's end for the `placed`
of them that take the default position (as `service.create_work_item` moves them)."""


def _places(
    db: Raw, workspace_id: str, entries: Sequence[TaskCreate]
) -> list[tuple[int, tuple[str, str, str], float]]:
    """Each entry's number, project (`$id`, key, name) and default position: one counter
    bump per project for all its new items (projects in `$id` order, so two bulk creates
    never wait for each other in a ring); the default positions follow the board's end one
    after another, in request order."""
    counts: dict[str, int] = defaultdict(int)
    placed: dict[str, int] = defaultdict(int)
    given: dict[str, float] = {}
    for data in entries:
        counts[data.project_id] += 1
        if data.position is None:
            placed[data.project_id] += 1
        else:
            given[data.project_id] = max(given.get(data.project_id, data.position), data.position)
    slots: dict[str, list[Any]] = {}
    for project_id in sorted(counts):
        params = {"project_id": project_id, "workspace_id": workspace_id}
        row, columns = db.fetch_one(
            _PLACE[db.dialect], {**params, "n": counts[project_id], "placed": placed[project_id]}
        )
        if row is None:  # (checked before; deleted meanwhile is "not found" too)
            raise no_project()
        last_number, key, name, end = columns.getter(
            "last_item_number", "key", "name", "board_end"
        )(row)
        if given.get(project_id, end) > end:  # (the end moves past positions given)
            db.execute(
                "UPDATE projects SET board_end = :end WHERE id = :project_id",
                {**params, "end": given[project_id]},
            )
        first = int(last_number) - counts[project_id] + 1
        slots[project_id] = [first, (project_id, key, name), float(end) - placed[project_id]]
    places = []
    for data in entries:
        slot = slots[data.project_id]
        if data.position is None:
            slot[2] += 1
        places.append((slot[0], slot[1], slot[2]))
        slot[0] += 1
    return places


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


def _json_text(value: Any) -> str:
    """JSON as text, for either driver: `COPY` parses it into jsonb (psycopg's `Jsonb` would
    encode it with the standard library's slower encoder)."""
    return orjson.dumps(value).decode()


def _insert(session: Session, rows: list[tuple[Any, ...]]) -> None:
    """The rows of `ITEM_COLUMNS`, in one go (`sql.insert_rows`)."""
    insert_rows(
        session.connection().connection.driver_connection,
        postgresql=not raw(session).codec.sqlite,
        table="work_items",
        columns=ITEM_COLUMNS,
        rows=rows,
    )
