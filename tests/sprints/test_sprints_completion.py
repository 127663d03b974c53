"""Completing a sprint (both routes, both `moveTo` forms), deleting one, reordering, and
optimistic concurrency on PATCH and DELETE.
"""

from collections.abc import Callable
from typing import Any

import pytest

from tests.factories import Api, add_member, make_project, make_user
from tests.sprint_factories import (
    complete,
    error,
    figures,
    make_board,
    make_sprint,
    make_task,
    sprint_of,
    start,
    task_of,
)

# Everything of an item but `sprintId` and what every write touches.
MOVE_TOUCHES = {"sprintId", "$updatedAt"}


def unchanged_but_sprint(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert {k: v for k, v in after.items() if k not in MOVE_TOUCHES} == {
        k: v for k, v in before.items() if k not in MOVE_TOUCHES
    }


def active_sprint_with_items(admin: Api) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
    """A project, its ACTIVE sprint, and that sprint's items: two unfinished, one DONE."""
    project = make_board(admin)
    user, _ = make_user(admin)
    add_member(admin, project["workspaceId"], user["$id"], "MEMBER")
    sprint = make_sprint(admin, project)
    start(admin, sprint)
    items = [
        make_task(
            admin,
            project,
            status="IN_PROGRESS",
            storyPoints=3,
            priority="HIGH",
            labels=["api"],
            assigneeIds=[user["$id"]],
            position=7,
        ),
        make_task(admin, project, storyPoints=5),  # TODO, by joining the sprint
        make_task(admin, project, status="DONE", storyPoints=2),
    ]
    assert all(item["sprintId"] == sprint["$id"] for item in items)
    return project, sprint, [task_of(admin, item["$id"]) for item in items]


COMPLETIONS: dict[str, Callable[[Api, dict[str, Any]], dict[str, Any]]] = {
    "POST moveTo backlog": lambda api, s: complete(
        api, s, {"unfinishedDetails": {"moveTo": "backlog"}}
    ),
    "POST without a body": lambda api, s: complete(api, s),
    "POST with own ids": lambda api, s: complete(
        api, s, {"workspaceId": s["workspaceId"], "projectId": s["projectId"]}
    ),
    "PATCH COMPLETED": lambda api, s: api.ok(
        "PATCH", f"/sprints/{s['$id']}", {"status": "COMPLETED"}
    ),
    "PATCH COMPLETED with own ids": lambda api, s: api.ok(
        "PATCH",
        f"/sprints/{s['$id']}",
        {"status": "COMPLETED", "workspaceId": s["workspaceId"], "projectId": s["projectId"]},
    ),
}


@pytest.mark.parametrize("how", list(COMPLETIONS))
def test_completion_moves_unfinished_items_to_the_backlog(admin: Api, how: str) -> None:
    project, sprint, (in_progress, todo, done) = active_sprint_with_items(admin)

    completed = COMPLETIONS[how](admin, sprint)
    assert completed["status"] == "COMPLETED"
    assert completed["completedAt"] is not None
    assert completed["movedItemCount"] == 2
    assert figures(completed) == (1, 2, 2)  # the DONE item stays
    assert {k: v for k, v in completed.items() if k != "movedItemCount"} == {
        k: v for k, v in sprint_of(admin, sprint["$id"]).items() if k != "workItems"
    }

    for before in (in_progress, todo):
        after = task_of(admin, before["$id"])
        assert after["sprintId"] is None
        unchanged_but_sprint(before, after)
    assert task_of(admin, done["$id"]) == done
    backlog = admin.ok("GET", f"/tasks?workspaceId={project['workspaceId']}&sprintId=none")
    assert {i["$id"] for i in backlog["documents"]} == {in_progress["$id"], todo["$id"]}

    # A completed sprint takes no new items, neither automatically nor by name.
    assert make_task(admin, project)["sprintId"] is None
    body = {
        "name": "late",
        "workspaceId": project["workspaceId"],
        "projectId": project["$id"],
        "sprintId": sprint["$id"],
    }
    assert error(admin.post("/tasks", body), 400)["details"]["field"] == "sprintId"


def test_each_moved_item_has_an_event_showing_it_as_it_now_stands(admin: Api) -> None:
    project, sprint, (in_progress, todo, _done) = active_sprint_with_items(admin)
    complete(admin, sprint)
    events = admin.ok("GET", f"/events?workspaceId={project['workspaceId']}&limit=500")
    moves = {
        e["subjectId"]: e["payload"]
        for e in events["documents"]
        if e["type"] == "task.updated" and "sprintId" in e["payload"]["changes"]
    }
    assert set(moves) == {in_progress["$id"], todo["$id"]}
    for item in (in_progress, todo):
        now = task_of(admin, item["$id"])
        embedded = ("project", "assignees", "comments", "timeLogs", "childCount")
        embedded += (
            "parent",
            "progress",
            "relations",
            "blocked",
            "links",
        )  # (derived: not in events)
        shown = {k: v for k, v in now.items() if k not in embedded}
        assert moves[item["$id"]]["workItem"] == shown
        assert moves[item["$id"]]["changes"] == {"sprintId": {"from": sprint["$id"], "to": None}}


def test_completion_moves_unfinished_items_to_another_sprint(admin: Api) -> None:
    project, sprint, (in_progress, todo, done) = active_sprint_with_items(admin)
    target = make_sprint(admin, project)
    already = make_task(admin, project, sprintId=target["$id"], storyPoints=1)

    completed = complete(
        admin, sprint, {"unfinishedDetails": {"moveTo": {"sprintId": target["$id"]}}}
    )
    assert (completed["status"], completed["movedItemCount"]) == ("COMPLETED", 2)
    for before in (in_progress, todo):
        after = task_of(admin, before["$id"])
        assert after["sprintId"] == target["$id"]
        unchanged_but_sprint(before, after)
    assert task_of(admin, done["$id"]) == done
    moved_into = sprint_of(admin, target["$id"])
    assert figures(moved_into) == (3, 9, 0)
    assert {i["$id"] for i in moved_into["workItems"]} == {
        in_progress["$id"],
        todo["$id"],
        already["$id"],
    }
    # The target keeps its own state; it is not started by receiving the items.
    assert moved_into["status"] == "PLANNED"


def test_completion_refuses_bad_targets_and_foreign_ids(admin: Api) -> None:
    project, sprint, items = active_sprint_with_items(admin)
    other_project = make_project(admin, project["workspaceId"])
    foreign = make_sprint(admin, other_project)
    elsewhere = make_board(admin)
    before = sprint_of(admin, sprint["$id"])

    def move_to(sprint_id: str) -> dict[str, Any]:
        return {"unfinishedDetails": {"moveTo": {"sprintId": sprint_id}}}

    refused: list[tuple[dict[str, Any], str, str]] = [
        (move_to(sprint["$id"]), "unfinishedDetails", "invalid_value"),
        (move_to(foreign["$id"]), "unfinishedDetails", "invalid_value"),
        (move_to("0" * 32), "unfinishedDetails", "not_found"),
        (move_to(make_sprint(admin, elsewhere)["$id"]), "unfinishedDetails", "not_found"),
        ({"workspaceId": elsewhere["workspaceId"]}, "workspaceId", "invalid_value"),
        ({"projectId": other_project["$id"]}, "projectId", "invalid_value"),
        ({"unfinishedDetails": {"moveTo": "nowhere"}}, "unfinishedDetails", "invalid_value"),
    ]
    for body, field, reason in refused:
        response = admin.post(f"/sprints/{sprint['$id']}/complete", json=body)
        details = error(response, 400)["details"]
        assert (details["field"], details["reason"]) == (field, reason), body
        response = admin.patch(f"/sprints/{sprint['$id']}", {"status": "COMPLETED", **body})
        details = error(response, 400)["details"]
        assert (details["field"], details["reason"]) == (field, reason), ("PATCH", body)
    details = error(admin.patch(f"/sprints/{sprint['$id']}", move_to(foreign["$id"])), 400)[
        "details"
    ]
    # PATCH takes unfinishedDetails only together with status COMPLETED.
    assert (details["field"], details["reason"]) == ("unfinishedDetails", "invalid_value")

    assert sprint_of(admin, sprint["$id"]) == before
    for item in items:
        assert task_of(admin, item["$id"]) == item


def test_completion_refuses_a_completed_target_of_the_same_project(admin: Api) -> None:
    project = make_board(admin)
    earlier = make_sprint(admin, project)
    start(admin, earlier)
    complete(admin, earlier)
    current = make_sprint(admin, project)
    start(admin, current)
    item = make_task(admin, project)
    body = {"unfinishedDetails": {"moveTo": {"sprintId": earlier["$id"]}}}
    details = error(admin.post(f"/sprints/{current['$id']}/complete", json=body), 400)["details"]
    assert (details["field"], details["reason"]) == ("unfinishedDetails", "invalid_value")
    assert details["path"] == "unfinishedDetails.moveTo.sprintId"
    assert sprint_of(admin, current["$id"])["status"] == "ACTIVE"
    assert task_of(admin, item["$id"])["sprintId"] == current["$id"]


# --- delete --------------------------------------------------------------------------------


def test_delete_moves_every_item_to_the_backlog_and_keeps_them(admin: Api) -> None:
    project, sprint, items = active_sprint_with_items(admin)
    other = make_sprint(admin, project)
    kept = make_task(admin, project, sprintId=other["$id"])

    assert admin.ok("DELETE", f"/sprints/{sprint['$id']}") == {
        "$id": sprint["$id"],
        "deleted": True,
    }
    assert error(admin.get(f"/sprints/{sprint['$id']}"), 404)["code"] == "NOT_FOUND"
    assert error(admin.delete(f"/sprints/{sprint['$id']}"), 404)["code"] == "NOT_FOUND"
    for before in items:  # DONE items too
        after = task_of(admin, before["$id"])
        assert after["sprintId"] is None
        unchanged_but_sprint(before, after)
    assert task_of(admin, kept["$id"])["sprintId"] == other["$id"]
    listed = admin.ok("GET", f"/sprints?projectId={project['$id']}")
    assert [s["$id"] for s in listed["documents"]] == [other["$id"]]
    assert admin.ok("GET", f"/tasks?workspaceId={project['workspaceId']}")["total"] == 4
    # The deleted sprint was the ACTIVE one: new items now land in the backlog.
    assert make_task(admin, project)["sprintId"] is None


# --- reorder -------------------------------------------------------------------------------


def test_reorder_returns_the_projects_sprints_in_their_new_order(admin: Api) -> None:
    project = make_board(admin)
    a, b, c = (make_sprint(admin, project) for _ in range(3))
    make_sprint(admin, make_project(admin, project["workspaceId"]))  # not in the answer

    body = {"sprints": [{"$id": c["$id"], "position": 0.5}, {"$id": a["$id"], "position": 10}]}
    page = admin.ok("POST", "/sprints/reorder", body, 200)
    assert [s["$id"] for s in page["documents"]] == [c["$id"], b["$id"], a["$id"]]
    assert page["total"] == 3
    assert [s["position"] for s in page["documents"]] == [0.5, b["position"], 10]
    listed = admin.ok("GET", f"/sprints?projectId={project['$id']}")
    assert listed == page


def test_reorder_is_all_or_nothing(admin: Api) -> None:
    project = make_board(admin)
    mine = make_sprint(admin, project)
    neighbour = make_sprint(admin, make_project(admin, project["workspaceId"]))
    _, stranger = make_user(admin)
    hidden = make_sprint(stranger, make_board(stranger))
    before = admin.ok("GET", f"/sprints?workspaceId={project['workspaceId']}")

    two_projects = {
        "sprints": [{"$id": mine["$id"], "position": 5}, {"$id": neighbour["$id"], "position": 6}]
    }
    details = error(admin.post("/sprints/reorder", two_projects), 400)["details"]
    assert (details["field"], details["reason"]) == ("sprints", "invalid_value")

    for unseen in (hidden["$id"], "0" * 32):
        body = {"sprints": [{"$id": mine["$id"], "position": 5}, {"$id": unseen, "position": 6}]}
        assert error(admin.post("/sprints/reorder", body), 404)["code"] == "NOT_FOUND"

    twice = {"sprints": [{"$id": mine["$id"], "position": 5}, {"$id": mine["$id"], "position": 6}]}
    assert error(admin.post("/sprints/reorder", twice), 400)["details"]["field"] == "sprints"
    assert (
        error(admin.post("/sprints/reorder", {"sprints": []}), 400)["details"]["field"] == "sprints"
    )

    assert admin.ok("GET", f"/sprints?workspaceId={project['workspaceId']}") == before
    assert sprint_of(stranger, hidden["$id"])["position"] == hidden["position"]


# --- ETag / If-Match -----------------------------------------------------------------------


def test_a_stale_if_match_changes_nothing(admin: Api) -> None:
    project = make_board(admin)
    sprint = make_sprint(admin, project)
    item = make_task(admin, project, sprintId=sprint["$id"])
    first = admin.get(f"/sprints/{sprint['$id']}").headers["ETag"]

    renamed = admin.patch(
        f"/sprints/{sprint['$id']}", {"name": "Renamed"}, headers={"If-Match": first}
    )
    assert renamed.status_code == 200, renamed.text
    current = renamed.headers["ETag"]
    assert current != first
    assert admin.get(f"/sprints/{sprint['$id']}").headers["ETag"] == current

    state = sprint_of(admin, sprint["$id"])
    for method, body in (
        ("PATCH", {"status": "ACTIVE"}),
        ("PATCH", {"goal": "x"}),
        ("DELETE", None),
    ):
        response = admin.request(
            method, f"/sprints/{sprint['$id']}", json=body, headers={"If-Match": first}
        )
        assert error(response, 412)["code"] == "PRECONDITION_FAILED"
    assert sprint_of(admin, sprint["$id"]) == state
    assert task_of(admin, item["$id"])["sprintId"] == sprint["$id"]

    response = admin.delete(f"/sprints/{sprint['$id']}", headers={"If-Match": current})
    assert response.status_code == 200, response.text
    assert task_of(admin, item["$id"])["sprintId"] is None
