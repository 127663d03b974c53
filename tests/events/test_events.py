"""The outbox and the change feed: events exist exactly when their change commits, in order."""

import threading
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sprintboard.db import Database
from sprintboard.events import service as events
from sprintboard.events.schemas import EventType
from sprintboard.models import Event
from tests.factories import Api, add_member, make_project, make_user, make_workspace

EMPTY_PAGE = {"documents": [], "total": 0, "nextCursor": None}


def make_task(api: Api, project: dict[str, Any], **fields: Any) -> dict[str, Any]:
    body = {
        "name": "A task",
        "workspaceId": project["workspaceId"],
        "projectId": project["$id"],
        **fields,
    }
    data: dict[str, Any] = api.ok("POST", "/tasks", body)
    return data


def feed(api: Api, workspace_id: str, **params: Any) -> dict[str, Any]:
    data: dict[str, Any] = api.ok(
        "GET",
        "/events?"
        + "&".join(f"{k}={v}" for k, v in {"workspaceId": workspace_id, **params}.items()),
    )
    return data


def count_events(database: Database) -> int:
    with database.transaction() as session:
        return session.scalar(select(func.count()).select_from(Event)) or 0


def test_event_types_schema_lists_every_type() -> None:
    assert set(EventType.__args__) == set(events.EVENT_TYPES)  # type: ignore[attr-defined]


def test_task_changes_appear_in_the_feed_in_order(admin: Api) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    task = make_task(admin, project)
    admin.ok("PATCH", f"/tasks/{task['$id']}", {"status": "IN_PROGRESS", "priority": "HIGH"})
    admin.ok("PATCH", f"/tasks/{task['$id']}", {"status": "IN_PROGRESS"})  # changes nothing
    admin.ok("DELETE", f"/tasks/{task['$id']}")

    page = feed(admin, workspace["$id"])
    assert page["total"] == 3
    created, updated, removed = page["documents"]
    assert [e["type"] for e in page["documents"]] == [
        "task.created",
        "task.updated",
        "task.deleted",
    ]
    assert created["subjectId"] == task["$id"]
    assert created["payload"]["workItem"]["key"] == task["key"]
    assert updated["payload"]["changes"] == {
        "status": {"from": "BACKLOG", "to": "IN_PROGRESS"},
        "priority": {"from": "MEDIUM", "to": "HIGH"},
    }
    me = admin.ok("GET", "/me")
    assert {e["actorId"] for e in page["documents"]} == {me["$id"]}
    assert removed["payload"]["workItem"]["$id"] == task["$id"]

    rest = feed(admin, workspace["$id"], after=created["$id"], limit=1)
    assert rest["total"] == 2
    assert [e["$id"] for e in rest["documents"]] == [updated["$id"]]
    assert feed(admin, workspace["$id"], after=removed["$id"]) == EMPTY_PAGE


def test_deleting_a_project_reports_each_item_and_sprint_deleted(admin: Api) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    kept = make_task(admin, make_project(admin, workspace["$id"]))
    sprint = admin.ok(
        "POST",
        "/sprints",
        {"name": "S", "workspaceId": workspace["$id"], "projectId": project["$id"]},
    )
    first = make_task(admin, project, sprintId=sprint["$id"])
    second = make_task(admin, project, storyPoints=3)
    admin.ok("POST", f"/tasks/{first['$id']}/comments", {"body": "a comment"})
    seen = feed(admin, workspace["$id"], limit=500)["documents"][-1]["$id"]

    admin.ok("DELETE", f"/projects/{project['$id']}")
    gone = feed(admin, workspace["$id"], after=seen)["documents"]
    assert [(e["type"], e["subjectId"]) for e in gone] == [
        ("task.deleted", first["$id"]),
        ("task.deleted", second["$id"]),
        ("sprint.deleted", sprint["$id"]),
    ]
    me = admin.ok("GET", "/me")["$id"]
    assert {e["actorId"] for e in gone} == {me}
    removed = gone[1]["payload"]["workItem"]
    assert (removed["key"], removed["storyPoints"]) == (second["key"], 3)
    assert gone[0]["payload"]["workItem"]["commentCount"] == 1
    assert gone[2]["payload"]["sprint"]["name"] == "S"
    assert admin.get(f"/tasks/{kept['$id']}").status_code == 200


def test_feed_is_for_members_only(admin: Api) -> None:
    workspace = make_workspace(admin)
    _, outsider = make_user(admin)
    response = outsider.get(f"/events?workspaceId={workspace['$id']}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
    viewer, viewer_api = make_user(admin)
    add_member(admin, workspace["$id"], viewer["$id"], "VIEWER")
    assert feed(viewer_api, workspace["$id"]) == EMPTY_PAGE


def test_feed_cursor_must_be_an_event_of_the_workspace(admin: Api) -> None:
    first = make_workspace(admin)
    second = make_workspace(admin)
    make_task(admin, make_project(admin, first["$id"]))
    event_id = feed(admin, first["$id"])["documents"][0]["$id"]
    response = admin.get(f"/events?workspaceId={second['$id']}&after={event_id}")
    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"field": "after", "reason": "not_found"}


def test_activity_tells_who_changed_what(admin: Api) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    member, member_api = make_user(admin)
    add_member(admin, workspace["$id"], member["$id"], "MEMBER")
    task = make_task(admin, project)
    member_api.ok("PATCH", f"/tasks/{task['key']}", {"title": "Renamed"})

    activity = member_api.ok("GET", f"/tasks/{task['key']}/activity")
    assert activity["total"] == 2
    created, renamed = activity["documents"]
    assert created["type"] == "task.created"
    assert created["changes"] is None
    assert renamed["actor"] == {
        "$id": member["$id"],
        "name": member["name"],
        "email": member["email"],
    }
    assert renamed["changes"] == {"title": {"from": "A task", "to": "Renamed"}}
    assert renamed["$createdAt"].endswith("Z")

    _, outsider = make_user(admin)
    assert outsider.get(f"/tasks/{task['$id']}/activity").status_code == 404


def test_a_rolled_back_request_leaves_no_event(
    admin: Api, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    task = make_task(admin, project)
    before = count_events(database)
    written: list[int] = []

    def failing_commit(session: Session) -> None:
        events.write_staged(session)  # the events are in the transaction now...
        written.append(session.scalar(select(func.count()).select_from(Event)) or 0)
        raise RuntimeError("the commit failed")  # ...and it never commits

    monkeypatch.setattr(Session, "commit", failing_commit)
    response = admin.patch(f"/tasks/{task['$id']}", json={"status": "DONE"})
    monkeypatch.undo()

    assert response.status_code == 500
    assert written == [before + 1]
    assert count_events(database) == before
    assert admin.ok("GET", f"/tasks/{task['$id']}")["status"] == "BACKLOG"
    # The session that failed is gone; the next request writes its own events only.
    admin.ok("PATCH", f"/tasks/{task['$id']}", {"status": "TODO"})
    assert count_events(database) == before + 1


def _record(session: Session, workspace_id: str, subject_id: str) -> None:
    events.record(
        session,
        workspace_id=workspace_id,
        type="sprint.updated",
        subject_id=subject_id,
        actor_id=None,
        payload={"sprint": {"$id": subject_id}},
    )


def test_feed_follows_commit_order(admin: Api, database: Database) -> None:
    """A writer that draws its position first commits first: a second writer waits for it, so
    a reader's cursor can never pass an event that is yet to commit."""
    workspace = make_workspace(admin)
    first = database.session(write=True)
    _record(first, workspace["$id"], "first")
    events.write_staged(first)  # the position is drawn; the transaction is still open

    second_done = threading.Event()

    def second_writer() -> None:
        with database.transaction() as session:
            _record(session, workspace["$id"], "second")
        second_done.set()

    thread = threading.Thread(target=second_writer)
    thread.start()
    assert not second_done.wait(0.5), "the second writer must wait for the first"
    assert feed(admin, workspace["$id"])["total"] == 0
    first.commit()
    first.close()
    thread.join(10)
    assert second_done.is_set()

    page = feed(admin, workspace["$id"])
    assert [e["subjectId"] for e in page["documents"]] == ["first", "second"]


def test_record_many_writes_in_order(admin: Api, database: Database) -> None:
    workspace = make_workspace(admin)
    with database.transaction() as session:
        events.record_many(
            session,
            [
                {
                    "workspace_id": workspace["$id"],
                    "type": "sprint.updated",
                    "subject_id": f"s{n}",
                    "actor_id": None,
                    "payload": {"n": n},
                }
                for n in range(300)
            ],
        )
    documents = feed(admin, workspace["$id"], limit=500)["documents"]
    assert [e["payload"]["n"] for e in documents] == list(range(300))
