"""Sprint reports and velocity (contract §11): a sprint played through the API day by day,
every figure compared with numbers worked out by hand, and the report frozen at completion."""

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import func, select

from sprintboard import models
from sprintboard.db import Database
from sprintboard.models import SprintHistory
from tests.factories import Api, make_user
from tests.sprint_factories import complete, error, make_board, make_sprint, make_task, start


class Clock:
    """The service's clock, set by the test: `clock.at("2030-01-07T09:00")`."""

    def __init__(self) -> None:
        self.now = datetime(2030, 1, 6, 8, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def at(self, moment: str) -> None:
        self.now = datetime.fromisoformat(moment).replace(tzinfo=UTC)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(models, "clock", fake)
    return fake


def report(api: Api, sprint: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = api.ok("GET", f"/sprints/{sprint['$id']}/report")
    return data


def patch(api: Api, task: dict[str, Any], **fields: Any) -> None:
    api.ok("PATCH", f"/tasks/{task['$id']}", fields)


def day(date: str, remaining: float, items: int, scope: float) -> dict[str, Any]:
    return {
        "date": date,
        "remainingPoints": remaining,
        "remainingItems": items,
        "scopePoints": scope,
    }


def test_a_sprint_played_day_by_day(admin: Api, clock: Clock) -> None:
    # The day before: planned with six items, one re-estimated before the start.
    project = make_board(admin)
    sprint = make_sprint(admin, project, startDate="2030-01-07", endDate="2030-01-11")
    later, other = make_sprint(admin, project), make_sprint(admin, project)
    in_sprint = {"sprintId": sprint["$id"]}
    a = make_task(admin, project, storyPoints=3, **in_sprint)
    b = make_task(admin, project, storyPoints=4, **in_sprint)
    c = make_task(admin, project, **in_sprint)  # no points: 0 points, 1 item
    d = make_task(admin, project, storyPoints=8, **in_sprint)
    e = make_task(admin, project, storyPoints=2, **in_sprint)
    f = make_task(admin, project, storyPoints=1, **in_sprint)
    g = make_task(admin, project, storyPoints=13, sprintId=None)
    patch(admin, b, storyPoints=5)
    assert error(admin.get(f"/sprints/{sprint['$id']}/report"), 409)["details"] == {
        "reason": "not_started"
    }

    # Day 1: started (committed: 6 items, 3+5+0+8+2+1 = 19 points); A done.
    clock.at("2030-01-07T09:00")
    start(admin, sprint)
    clock.at("2030-01-07T10:00")
    patch(admin, a, status="DONE")
    # Day 2: G joins (+13), H is created in it (+2), B re-estimated 5 → 8 (+3).
    clock.at("2030-01-08T11:00")
    patch(admin, g, sprintId=sprint["$id"])
    clock.at("2030-01-08T12:00")
    h = make_task(admin, project, storyPoints=2)  # (the active sprint by default)
    clock.at("2030-01-08T13:00")
    patch(admin, b, storyPoints=8)
    # Day 3: nothing changes.
    clock.at("2030-01-09T14:00")
    midway = report(admin, sprint)
    assert midway["status"] == "ACTIVE"
    assert midway["completed"] == {"items": 1, "points": 3}
    assert midway["carriedOver"] == {"items": 0, "points": 0, "to": None}
    assert midway["completedAt"] is None
    assert midway["burndown"] == [
        day("2030-01-07", 16, 5, 19),
        day("2030-01-08", 34, 7, 37),
        day("2030-01-09", 34, 7, 37),
    ]
    # Day 4: D moves to another sprint (-8), E is deleted (-2), G re-estimated 13 → 5 (-8);
    # F done then reopened; C (0 points) and H done.
    clock.at("2030-01-10T09:00")
    patch(admin, d, sprintId=other["$id"])
    clock.at("2030-01-10T10:00")
    admin.ok("DELETE", f"/tasks/{e['$id']}")
    clock.at("2030-01-10T11:00")
    patch(admin, g, storyPoints=5)
    clock.at("2030-01-10T12:00")
    patch(admin, f, status="DONE")
    clock.at("2030-01-10T13:00")
    patch(admin, f, status="TODO")
    clock.at("2030-01-10T14:00")
    patch(admin, c, status="DONE")
    clock.at("2030-01-10T15:00")
    bulk = {"tasks": [{"$id": h["$id"], "status": "DONE"}]}
    admin.ok("POST", "/tasks/bulk-update", bulk, 200)
    # Day 5 (the end date): nothing. Day 6, past the end date: B done. Day 7: completed,
    # F (1) and G (5) carried over to the next sprint.
    clock.at("2030-01-12T10:00")
    patch(admin, b, status="DONE")
    clock.at("2030-01-13T16:00")
    body = {"unfinishedDetails": {"moveTo": {"sprintId": later["$id"]}}}
    assert complete(admin, sprint, body)["movedItemCount"] == 2

    expected = {
        "sprintId": sprint["$id"],
        "status": "COMPLETED",
        "startDate": "2030-01-07T00:00:00.000Z",
        "endDate": "2030-01-11T00:00:00.000Z",
        "startedAt": "2030-01-07T09:00:00.000Z",
        "completedAt": "2030-01-13T16:00:00.000Z",
        "committed": {"items": 6, "points": 19},
        "added": {"items": 2, "points": 15},
        "removed": {"items": 2, "points": 10},
        "completed": {"items": 4, "points": 13},  # A 3, B 8, C 0, H 2
        "carriedOver": {"items": 2, "points": 6, "to": {"sprintId": later["$id"]}},
        "scopeChanges": [
            change("2030-01-08T11:00", g, "added", 13),
            change("2030-01-08T12:00", h, "added", 2),
            change("2030-01-08T13:00", b, "estimate_changed", 3),
            change("2030-01-10T09:00", d, "removed", -8),
            change("2030-01-10T10:00", e, "removed", -2),
            change("2030-01-10T11:00", g, "estimate_changed", -8),
        ],
        "burndown": [
            day("2030-01-07", 16, 5, 19),
            day("2030-01-08", 34, 7, 37),
            day("2030-01-09", 34, 7, 37),
            day("2030-01-10", 14, 3, 19),
            day("2030-01-11", 14, 3, 19),
            day("2030-01-12", 6, 2, 19),
            day("2030-01-13", 6, 2, 19),
        ],
        "ideal": [
            {"date": "2030-01-07", "points": 19},
            {"date": "2030-01-08", "points": 14.25},
            {"date": "2030-01-09", "points": 9.5},
            {"date": "2030-01-10", "points": 4.75},
            {"date": "2030-01-11", "points": 0},
        ],
    }
    frozen = admin.get(f"/sprints/{sprint['$id']}/report")
    assert frozen.json()["data"] == expected

    # Afterwards its items change in every way; the report stays, byte for byte.
    clock.at("2030-01-14T09:00")
    patch(admin, a, storyPoints=21, status="TODO")
    patch(admin, h, sprintId=later["$id"])
    admin.ok("DELETE", f"/tasks/{b['$id']}")
    patch(admin, g, storyPoints=40, sprintId=None)
    admin.ok("PATCH", f"/sprints/{sprint['$id']}", {"endDate": "2030-02-01"})
    start(admin, later)
    assert admin.get(f"/sprints/{sprint['$id']}/report").content == frozen.content

    # The next sprint committed what was carried over (F 1) and H (2) joined before its start;
    # G left it before the start.
    assert report(admin, later)["committed"] == {"items": 2, "points": 3}


def change(at: str, task: dict[str, Any], kind: str, points: float) -> dict[str, Any]:
    return {
        "at": f"{at}:00.000Z",
        "taskId": task["$id"],
        "key": task["key"],
        "kind": kind,
        "points": points,
    }


def test_carried_over_to_the_backlog_and_an_active_report_today(admin: Api, clock: Clock) -> None:
    project = make_board(admin)
    sprint = make_sprint(admin, project, endDate="2030-01-08")
    clock.at("2030-01-06T22:00")
    start(admin, sprint)  # no start date: the start sets it
    done = make_task(admin, project, storyPoints=2.5)
    undone = make_task(admin, project, storyPoints=0.1)
    make_task(admin, project, storyPoints=0.2)
    clock.at("2030-01-07T01:00")
    patch(admin, done, status="DONE")
    clock.at("2030-01-09T07:30")  # past the end date, still ACTIVE: to today
    now = report(admin, sprint)
    assert now["startDate"] == now["startedAt"] == "2030-01-06T22:00:00.000Z"
    assert now["committed"] == {"items": 0, "points": 0}
    assert now["added"] == {"items": 3, "points": 2.8}
    assert now["burndown"] == [
        day("2030-01-06", 2.8, 3, 2.8),
        day("2030-01-07", 0.3, 2, 2.8),
        day("2030-01-08", 0.3, 2, 2.8),
        day("2030-01-09", 0.3, 2, 2.8),
    ]
    assert now["ideal"] == [
        {"date": "2030-01-06", "points": 0},
        {"date": "2030-01-07", "points": 0},
        {"date": "2030-01-08", "points": 0},
    ]
    clock.at("2030-01-09T08:00")
    complete(admin, sprint)
    frozen = report(admin, sprint)
    assert frozen["carriedOver"] == {"items": 2, "points": 0.3, "to": "backlog"}
    assert frozen["completed"] == {"items": 1, "points": 2.5}
    assert frozen["burndown"][-1] == day("2030-01-09", 0.3, 2, 2.8)
    admin.ok("DELETE", f"/tasks/{undone['$id']}")
    assert report(admin, sprint) == frozen


def test_velocity_lists_completed_sprints_newest_first(admin: Api, clock: Clock) -> None:
    project = make_board(admin)
    path = f"/projects/{project['$id']}/velocity"
    assert admin.ok("GET", path) == {"sprints": [], "averageCompletedPoints": None}
    played = []
    for n, (committed, done) in enumerate([(10, 4), (6, 6), (9, 1)]):
        sprint = make_sprint(admin, project)
        first = make_task(admin, project, storyPoints=done, sprintId=sprint["$id"])
        make_task(admin, project, storyPoints=committed - done, sprintId=sprint["$id"])
        clock.at(f"2030-02-0{n + 1}T10:00")
        start(admin, sprint)
        patch(admin, first, status="DONE")
        complete(admin, sprint)
        played.append((sprint, committed, done, f"2030-02-0{n + 1}T10:00:00.000Z"))
    make_sprint(admin, project)  # PLANNED: not listed
    expected = [
        {
            "sprintId": sprint["$id"],
            "name": sprint["name"],
            "completedAt": completed_at,
            "committedPoints": committed,
            "completedPoints": done,
            "completedItems": 1,
        }
        for sprint, committed, done, completed_at in reversed(played)
    ]
    assert admin.ok("GET", path) == {"sprints": expected, "averageCompletedPoints": 3.666667}
    assert admin.ok("GET", f"{path}?limit=2") == {
        "sprints": expected[:2],
        "averageCompletedPoints": 3.5,
    }
    for bad in ("0", "51"):
        assert error(admin.get(f"{path}?limit={bad}"), 400)["details"]["reason"] == "out_of_range"


def test_reports_are_for_members_only(admin: Api, clock: Clock) -> None:
    project = make_board(admin)
    sprint = make_sprint(admin, project)
    start(admin, sprint)
    _, outsider = make_user(admin)
    assert error(outsider.get(f"/sprints/{sprint['$id']}/report"), 404)["code"] == "NOT_FOUND"
    path = f"/projects/{project['$id']}/velocity"
    assert error(outsider.get(path), 404)["code"] == "NOT_FOUND"
    viewer, as_viewer = make_user(admin)
    admin.ok(
        "POST",
        f"/workspaces/{project['workspaceId']}/members",
        {"userId": viewer["$id"], "role": "VIEWER"},
    )
    assert as_viewer.ok("GET", f"/sprints/{sprint['$id']}/report")["committed"]["items"] == 0
    assert as_viewer.ok("GET", path)["sprints"] == []


def test_deletes_take_their_sprints_history_with_them(admin: Api, database: Database) -> None:
    def history_rows() -> int:
        with database.transaction() as session:
            return session.scalar(select(func.count()).select_from(SprintHistory)) or 0

    for delete in ("sprint", "project", "workspace"):
        project = make_board(admin)
        sprint = make_sprint(admin, project)
        make_task(admin, project, storyPoints=2, sprintId=sprint["$id"])
        start(admin, sprint)
        make_task(admin, project, storyPoints=3)
        assert history_rows() == 2  # (the start's row and the new item's)
        path = {
            "sprint": f"/sprints/{sprint['$id']}",
            "project": f"/projects/{project['$id']}",
            "workspace": f"/workspaces/{project['workspaceId']}",
        }[delete]
        admin.ok("DELETE", path)
        assert history_rows() == 0, delete


def test_a_completion_writes_no_history_for_the_sprint_it_completes(
    admin: Api, database: Database
) -> None:
    """The completed sprint's report is frozen from its rows before the moves: the moves out
    give it none (thousands for a big sprint), and the sprint they go to gets its own."""

    def rows_of(sprint: dict[str, Any]) -> list[tuple[str, str]]:
        with database.transaction() as session:
            found = session.execute(
                select(SprintHistory.work_item_id, SprintHistory.kind)
                .where(SprintHistory.sprint_id == sprint["$id"])
                .order_by(SprintHistory.seq, SprintHistory.work_item_id)
            )
            return [(item_id, kind) for item_id, kind in found]

    project = make_board(admin)
    sprint, next_sprint = make_sprint(admin, project), make_sprint(admin, project)
    task = make_task(admin, project, storyPoints=2, sprintId=sprint["$id"])
    start(admin, sprint)
    before = rows_of(sprint)
    assert before == [(task["$id"], "start")]
    complete(admin, sprint, {"unfinishedDetails": {"moveTo": {"sprintId": next_sprint["$id"]}}})
    assert rows_of(sprint) == before
    assert rows_of(next_sprint) == [(task["$id"], "in")]
    assert report(admin, sprint)["carriedOver"] == {
        "items": 1,
        "points": 2,
        "to": {"sprintId": next_sprint["$id"]},
    }
