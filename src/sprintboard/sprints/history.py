"""A sprint's history, the facts its report is computed from (`SprintHistory`), taken from the
events a transaction writes, when it writes them: `record` is an outbox subscriber
(`events.service.SUBSCRIBERS`, registered by `wiring.py`). Every change
to a work item goes through an event, so every path that changes one (PATCH, bulk update, a
completion's moves, deletes) is recorded here without knowing of it; but for the moves out of
a sprint its completion makes: its report was frozen before them and is never read again.

An event about an item gives a row for each sprint it concerns: the sprint it is in after the
change (`in`, with its points and whether it is DONE), and the sprint it left (`out`). Only
events that can change a report give rows: an item created in a sprint, deleted from one,
moved, re-estimated, or made DONE or not DONE. A sprint's start keeps one `start` row per
item it then holds, and drops the rows from before it.
"""

from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from sprintboard.sql import raw
from sprintboard.workitems.reads import SPRINT_ITEMS

COLUMNS = ("sprint_id", "seq", "at", "work_item_id", "key", "kind", "points", "done")

_SNAPSHOT = f"""
INSERT INTO sprint_history (sprint_id, seq, at, work_item_id, key, kind, points, done)
SELECT i.sprint_id, :seq, :at, i.id, i.key, 'start', i.story_points, i.done
FROM ({SPRINT_ITEMS}) i
"""


def record(
    session: Session, events: list[dict[str, Any]], stamp: Callable[[Any], Any]
) -> list[tuple[str, tuple[str, ...], list[tuple[Any, ...]]]]:
    """The outbox subscriber: the history rows of numbered `events`, to insert with them."""
    starts = record_starts(session, events)
    return [("sprint_history", COLUMNS, rows_for(events, starts, stamp))]


def forget_workspace(session: Session, workspace_id: str) -> None:
    """A workspace's delete hook (`workspaces.service.BEFORE_DELETE`): its sprints' history."""
    forget(session, scope="workspace_id", record_id=workspace_id)


def record_starts(session: Session, events: list[dict[str, Any]]) -> dict[str, int]:
    """For each sprint started in `events` (numbered), the items it holds now, as `start`
    rows; returns `{sprint: the start's seq}`."""
    starts: dict[str, int] = {}
    for event in events:
        if event["type"] != "sprint.started":
            continue
        db, sprint_id = raw(session), event["subject_id"]
        starts[sprint_id] = event["seq"]
        db.execute("DELETE FROM sprint_history WHERE sprint_id = :id", {"id": sprint_id})
        at = db.codec.param(event["created_at"])
        db.execute(_SNAPSHOT, {"sprint_id": sprint_id, "seq": event["seq"], "at": at})
    return starts


_ENDS = frozenset({"sprint.deleted", "sprint.completed"})


def rows_for(
    events: list[dict[str, Any]], starts: dict[str, int], stamp: Callable[[Any], Any]
) -> list[tuple[Any, ...]]:
    """The history rows of numbered `events` (in `COLUMNS` order), leaving out sprints the
    same transaction deletes (their rows would go with them) or completes (their report was
    frozen from the rows before: a completion's moves out, thousands of rows, would never be
    read), and what came before a start."""
    ended = {e["subject_id"] for e in events if e["type"] in _ENDS}
    rows: list[tuple[Any, ...]] = []
    for event in events:
        if not event["type"].startswith("task."):
            continue
        payload = event["payload"]
        item = payload.get("workItem") or {}
        sprint_id = item.get("sprintId")
        changes = payload.get("changes") or {}
        standing: list[tuple[str | None, str]]
        if event["type"] == "task.created":
            standing = [(sprint_id, "in")]
        elif event["type"] == "task.deleted":
            standing = [(sprint_id, "out")]
        else:
            if "sprintId" in changes:
                if sprint_id is None and changes["sprintId"]["from"] in ended:
                    continue  # (a completion's move to the backlog: nothing to write)
                standing = [(changes["sprintId"]["from"], "out"), (sprint_id, "in")]
            elif "storyPoints" in changes or "status" in changes:
                standing = [(sprint_id, "in")]
            else:
                continue
        for target, kind in standing:
            if target is None or target in ended or event["seq"] < starts.get(target, 0):
                continue
            rows.append(
                (
                    target,
                    event["seq"],
                    stamp(event["created_at"]),
                    event["subject_id"],
                    item.get("key", ""),
                    kind,
                    item.get("storyPoints"),
                    item.get("statusCategory") == "DONE",
                )
            )
    return rows


def forget(session: Session, *, scope: str, record_id: str) -> None:
    """Delete the history of the sprints about to be deleted: the sprint `record_id`
    (`scope` "id"), or all of a project's ("project_id") or a workspace's ("workspace_id").
    Called after the delete has locked what it removes, so no change under way writes more."""
    if scope not in ("id", "project_id", "workspace_id"):
        raise ValueError(scope)
    raw(session).execute(
        "DELETE FROM sprint_history WHERE sprint_id IN"
        f" (SELECT id FROM sprints WHERE {scope} = :record_id)",
        {"record_id": record_id},
    )
