"""Sprint reports and velocity, computed from a sprint's history (`sprints/history.py`), and
frozen when the sprint completes: the completing transaction stores the report's JSON
(`SprintReport`), which is served from then on, byte for byte.

The burndown has one entry per UTC day, from the day the sprint started to the day it
completed (or today while it is ACTIVE), whatever its end date: a sprint that runs past its
end date goes on to its completion. Each entry is the state at the end of its day; the
completion day's is the state the completion found (before it moved unfinished items out).
"""

from dataclasses import dataclass, field
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
WHERE sprint_id = :sprint_id ORDER BY seq, id
"""


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


@dataclass
class _Tally:
    items: int = 0
    points: float = 0.0

    def add(self, points: float, sign: int = 1) -> None:
        self.items += sign
        self.points += sign * points

    def json(self) -> dict[str, Any]:
        return {"items": self.items, "points": number(self.points)}


@dataclass
class _Replay:
    """The sprint's contents as the history goes by: item → (key, points, done), with running
    totals so that a day's burndown entry costs nothing."""

    items: dict[str, tuple[str, float, bool]] = field(default_factory=dict)
    scope: _Tally = field(default_factory=_Tally)
    remaining: _Tally = field(default_factory=_Tally)

    def put(self, item_id: str, standing: tuple[str, float, bool] | None) -> None:
        old = self.items.pop(item_id, None)
        for entry, sign in ((old, -1), (standing, 1)):
            if entry is None:
                continue
            _, points, done = entry
            self.scope.add(points, sign)
            if not done:
                self.remaining.add(points, sign)
        if standing is not None:
            self.items[item_id] = standing


def compute(
    session: Session, sprint: Sprint, *, now: datetime, carried_to: str | None
) -> dict[str, Any]:
    """The report of a started sprint as of `now`; `carried_to` (a sprint id or "backlog") is
    where a completion moved unfinished items, None while the sprint is ACTIVE."""
    db = raw(session)
    history = db.rows(_HISTORY.format(at=db.codec.timestamp_column("at")), {"sprint_id": sprint.id})
    started = sprint.started_at or sprint.start_date or now
    first_day = started.date()
    last_day = max(first_day, (sprint.completed_at or now).date())
    replay, committed, added, removed = _Replay(), _Tally(), _Tally(), _Tally()
    changes: list[dict[str, Any]] = []
    burndown: list[dict[str, Any]] = []
    day, history_day = first_day, first_day
    for at, item_id, key, kind, points, done in history:
        # (by commit order: a day never goes back, even if a clock did)
        history_day = max(history_day, date.fromisoformat(at[:10]))
        while day < history_day and day <= last_day:
            burndown.append(_burndown_entry(day, replay))
            day += timedelta(days=1)
        points = float(points or 0)
        old = replay.items.get(item_id)
        if kind == "start":
            committed.add(points)
        elif kind == "in" and old is None:
            added.add(points)
            changes.append(_change(at, item_id, key, "added", points))
        elif kind == "in" and old is not None and old[1] != points:
            changes.append(_change(at, item_id, key, "estimate_changed", points - old[1]))
        elif kind == "out" and old is not None:
            removed.add(old[1])
            changes.append(_change(at, item_id, key, "removed", -old[1]))
        replay.put(item_id, None if kind == "out" else (key, points, bool(done)))
    while day <= last_day:
        burndown.append(_burndown_entry(day, replay))
        day += timedelta(days=1)
    completed, unfinished = _Tally(), _Tally()
    for _, points, done in replay.items.values():
        (completed if done else unfinished).add(points)
    carried: dict[str, Any] = {"items": 0, "points": 0, "to": None}
    if carried_to is not None:
        to = "backlog" if carried_to == "backlog" else {"sprintId": carried_to}
        carried = {**unfinished.json(), "to": to}
    return {
        "sprintId": sprint.id,
        "status": sprint.status,
        "startDate": iso(sprint.start_date),
        "endDate": iso(sprint.end_date),
        "startedAt": iso(sprint.started_at),
        "completedAt": iso(sprint.completed_at),
        "committed": committed.json(),
        "added": added.json(),
        "removed": removed.json(),
        "completed": completed.json(),
        "carriedOver": carried,
        "scopeChanges": changes,
        "burndown": burndown,
        "ideal": _ideal(first_day, sprint.end_date, committed.points),
    }


def _change(at: str, item_id: str, key: str, kind: str, points: float) -> dict[str, Any]:
    return {"at": at, "taskId": item_id, "key": key, "kind": kind, "points": number(points)}


def _burndown_entry(day: date, replay: _Replay) -> dict[str, Any]:
    return {
        "date": day.isoformat(),
        "remainingPoints": number(replay.remaining.points),
        "remainingItems": replay.remaining.items,
        "scopePoints": number(replay.scope.points),
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
