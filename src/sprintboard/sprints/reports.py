"""Sprint reports and velocity, computed from a sprint's history (`sprints/history.py`), and
frozen when the sprint completes: the completing transaction stores the report's JSON
(`SprintReport`), which is served from then on, byte for byte.

The burndown has one entry per UTC day, from the day the sprint started to the day it
completed (or today while it is ACTIVE), whatever its end date: a sprint that runs past its
end date goes on to its completion. Each entry is the state at the end of its day; the
completion day's is the state the completion found (before it moved unfinished items out).
"""

from datetime import date, datetime, timedelta
from typing import Any

import orjson
from sqlalchemy.orm import Session

from sprintboard.errors import Conflict
from sprintboard.models import Sprint, SprintReport, utcnow
from sprintboard.responses import iso
from sprintboard.sql import raw

_HISTORY = """
SELECT {at}, work_item_id, key, kind, points, done FROM sprint_history
WHERE sprint_id = :sprint_id ORDER BY seq
"""
"""In the index's order: rows of one `seq` are a start's, whose order does not matter."""


def report_json(session: Session, sprint: Sprint) -> bytes:
    """The report's `data`, as JSON: the frozen one of a completed sprint, or computed now."""
    if sprint.status == "PLANNED":
        raise Conflict("not_started", "A PLANNED sprint has no report yet.")
    frozen = raw(session).row(
        "SELECT body FROM sprint_reports WHERE sprint_id = :id", {"id": sprint.id}
    )
    if frozen is not None:
        body: str = frozen[0]
        return body.encode()
    return orjson.dumps(compute(session, sprint, now=utcnow(), carried_to=None))


def freeze(session: Session, sprint: Sprint, *, carried_to: str | None) -> None:
    """Store the report of `sprint`, completed just now in this transaction; unfinished items
    went to the sprint `carried_to`, or to the backlog."""
    assert sprint.completed_at is not None
    report = compute(session, sprint, now=sprint.completed_at, carried_to=carried_to or "backlog")
    session.add(
        SprintReport(
            sprint_id=sprint.id,
            project_id=sprint.project_id,
            completed_at=sprint.completed_at,
            committed_points=report["committed"]["points"],
            completed_points=report["completed"]["points"],
            completed_items=report["completed"]["items"],
            body=orjson.dumps(report).decode(),
        )
    )


def velocity(session: Session, *, project_id: str, limit: int) -> dict[str, Any]:
    """The project's last `limit` completed sprints, newest first, and their average."""
    db = raw(session)
    rows = db.rows(
        f"SELECT r.sprint_id, s.name, {db.codec.timestamp_column('r.completed_at')},"
        " r.committed_points, r.completed_points, r.completed_items"
        " FROM sprint_reports r JOIN sprints s ON s.id = r.sprint_id"
        " WHERE r.project_id = :project_id"
        " ORDER BY r.completed_at DESC, r.sprint_id DESC LIMIT :limit",
        {"project_id": project_id, "limit": limit},
    )
    sprints = [
        {
            "sprintId": sprint_id,
            "name": name,
            "completedAt": completed_at,
            "committedPoints": number(committed),
            "completedPoints": number(completed),
            "completedItems": int(items),
        }
        for sprint_id, name, completed_at, committed, completed, items in rows
    ]
    average = (
        number(sum(float(s["completedPoints"]) for s in sprints) / len(sprints))
        if sprints
        else None
    )
    return {"sprints": sprints, "averageCompletedPoints": average}


def number(value: Any) -> int | float:
    """Points as the API shows them: whole numbers as integers, others rounded to 6 decimals
    (binary floats would show 0.1 + 0.2 points as 0.30000000000000004)."""
    value = round(float(value), 6)
    return int(value) if value.is_integer() else value


def _tally(items: int, points: float) -> dict[str, Any]:
    return {"items": items, "points": number(points)}


def compute(
    session: Session, sprint: Sprint, *, now: datetime, carried_to: str | None
) -> dict[str, Any]:
    """The report of a started sprint as of `now`; `carried_to` (a sprint id or "backlog") is
    where a completion moved unfinished items, None while the sprint is ACTIVE.

    One pass over the history in commit order, keeping the sprint's contents (item → points,
    done) and running totals, so that a day's burndown entry costs nothing: a hot loop, kept
    to plain locals (20,000 changes in well under 100 ms).
    """
    db = raw(session)
    # SQLite stores timestamps as UTC text already; PostgreSQL formats them faster than
    # psycopg would parse them. Either way a row's day is its first ten characters.
    at_column = "at" if db.codec.sqlite else db.codec.timestamp_column("at")
    history = db.rows(_HISTORY.format(at=at_column), {"sprint_id": sprint.id})
    api_time = _sqlite_time if db.codec.sqlite else str
    started = sprint.started_at or sprint.start_date or now
    first_day = started.date()
    last_day = max(first_day, (sprint.completed_at or now).date())
    last_text = last_day.isoformat()
    items: dict[str, tuple[float, bool]] = {}
    committed_items = added_items = removed_items = remaining_items = 0
    committed_points = added_points = removed_points = remaining_points = scope_points = 0.0
    changes: list[dict[str, Any]] = []
    burndown: list[dict[str, Any]] = []
    day = first_day
    day_text = history_day = day.isoformat()
    for at, item_id, key, kind, points, done in history:
        # (by commit order: a day never goes back, even if a clock did)
        if at[:10] > history_day:
            history_day = at[:10]
            while day_text < history_day and day_text <= last_text:
                burndown.append(
                    _burndown_entry(day_text, remaining_points, remaining_items, scope_points)
                )
                day += _ONE_DAY
                day_text = day.isoformat()
        points = float(points or 0)
        old = items.pop(item_id, None)
        if old is not None:
            scope_points -= old[0]
            if not old[1]:
                remaining_points -= old[0]
                remaining_items -= 1
        if kind == "out":
            if old is not None:
                removed_items += 1
                removed_points += old[0]
                changes.append(_change(api_time(at), item_id, key, "removed", -old[0]))
            continue
        done = bool(done)
        items[item_id] = (points, done)
        scope_points += points
        if not done:
            remaining_points += points
            remaining_items += 1
        if kind == "start":
            committed_items += 1
            committed_points += points
        elif old is None:
            added_items += 1
            added_points += points
            changes.append(_change(api_time(at), item_id, key, "added", points))
        elif old[0] != points:
            changes.append(_change(api_time(at), item_id, key, "estimate_changed", points - old[0]))
    while day <= last_day:
        burndown.append(
            _burndown_entry(day.isoformat(), remaining_points, remaining_items, scope_points)
        )
        day += _ONE_DAY
    completed_points = sum(points for points, done in items.values() if done)
    completed_items = sum(1 for _, done in items.values() if done)
    carried: dict[str, Any] = {"items": 0, "points": 0, "to": None}
    if carried_to is not None:
        to = "backlog" if carried_to == "backlog" else {"sprintId": carried_to}
        carried = {
            **_tally(len(items) - completed_items, scope_points - completed_points),
            "to": to,
        }
    return {
        "sprintId": sprint.id,
        "status": sprint.status,
        "startDate": iso(sprint.start_date),
        "endDate": iso(sprint.end_date),
        "startedAt": iso(sprint.started_at),
        "completedAt": iso(sprint.completed_at),
        "committed": _tally(committed_items, committed_points),
        "added": _tally(added_items, added_points),
        "removed": _tally(removed_items, removed_points),
        "completed": _tally(completed_items, completed_points),
        "carriedOver": carried,
        "scopeChanges": changes,
        "burndown": burndown,
        "ideal": _ideal(first_day, sprint.end_date, committed_points),
    }


_ONE_DAY = timedelta(days=1)


def _sqlite_time(stored: str) -> str:
    """`2026-11-22T09:30:00.000Z` from SQLite's `2026-11-22 09:30:00.000000` (always UTC)."""
    return f"{stored[:10]}T{stored[11:23]}Z"


def _change(at: str, item_id: str, key: str, kind: str, points: float) -> dict[str, Any]:
    return {"at": at, "taskId": item_id, "key": key, "kind": kind, "points": number(points)}


def _burndown_entry(
    day: str, remaining_points: float, remaining_items: int, scope_points: float
) -> dict[str, Any]:
    return {
        "date": day,
        "remainingPoints": number(remaining_points),
        "remainingItems": remaining_items,
        "scopePoints": number(scope_points),
    }


def _ideal(first_day: date, end: datetime | None, committed: float) -> list[dict[str, Any]]:
    """Committed points on the first day, straight down to 0 on the end date's day (a single
    0 when the end date is not after the first day; none without an end date)."""
    if end is None:
        return []
    days = (end.date() - first_day).days
    if days <= 0:
        return [{"date": first_day.isoformat(), "points": 0}]
    return [
        {
            "date": (first_day + timedelta(days=n)).isoformat(),
            "points": number(committed * (days - n) / days),
        }
        for n in range(days + 1)
    ]
