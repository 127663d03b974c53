"""Sprints through HTTP: creation, the state machine, lists with their three figures."""

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.factories import Api, add_member, make_project, make_user, make_workspace
from tests.sprint_factories import (
    complete,
    error,
    figures,
    make_board,
    make_sprint,
    make_task,
    sprint_of,
    start,
)


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


# --- create -------------------------------------------------------------------------------


def test_create_answers_the_new_planned_sprint(admin: Api) -> None:
    project = make_board(admin)
    response = admin.post(
        "/sprints",
        {
            "name": "  Sprint 1 ",
            "workspaceId": project["workspaceId"],
            "projectId": project["$id"],
            "startDate": "2026-12-01",
            "endDate": "2026-12-14T17:30:00+02:00",
            "goal": "Ship the board",
        },
    )
    assert response.status_code == 201, response.text
    sprint = response.json()["data"]
    assert response.headers["ETag"]
    assert sprint["name"] == "Sprint 1"
    assert sprint["status"] == "PLANNED"
    assert sprint["startDate"] == "2026-12-01T00:00:00.000Z"
    assert sprint["endDate"] == "2026-12-14T15:30:00.000Z"
    assert sprint["completedAt"] is None
    assert sprint["goal"] == "Ship the board"
    assert (sprint["workspaceId"], sprint["projectId"]) == (project["workspaceId"], project["$id"])
    assert figures(sprint) == (0, 0, 0)
    assert sprint_of(admin, sprint["$id"]) == {**sprint, "workItems": []}


def test_create_requires_name_workspace_and_project(admin: Api) -> None:
    project = make_board(admin)
    for field in ("name", "workspaceId", "projectId"):
        body = {"name": "S", "workspaceId": project["workspaceId"], "projectId": project["$id"]}
        del body[field]
        details = error(admin.post("/sprints", body), 400)["details"]
        assert (details["field"], details["reason"]) == (field, "required")
    blank = {"name": " ", "workspaceId": project["workspaceId"], "projectId": project["$id"]}
    details = error(admin.post("/sprints", blank), 400)["details"]
    assert (details["field"], details["reason"]) == ("name", "too_short")


def test_create_checks_dates_status_and_goal(admin: Api) -> None:
    project = make_board(admin)
    ids = {"workspaceId": project["workspaceId"], "projectId": project["$id"]}

    def refused(**fields: Any) -> dict[str, Any]:
        body = error(admin.post("/sprints", {"name": "S", **ids, **fields}), 400)
        return {k: body["details"][k] for k in ("field", "reason")}

    assert refused(startDate="2026-12-10", endDate="2026-12-09") == {
        "field": "endDate",
        "reason": "invalid_value",
    }
    assert refused(startDate="2026-13-01")["field"] == "startDate"
    assert refused(status="ACTIVE") == {"field": "status", "reason": "invalid_value"}
    assert refused(status="COMPLETED") == {"field": "status", "reason": "invalid_value"}
    assert refused(goal="g" * 4_001) == {"field": "goal", "reason": "too_long"}
    assert admin.ok("GET", f"/sprints?projectId={project['$id']}")["total"] == 0

    same_day = make_sprint(admin, project, startDate="2026-12-10", endDate="2026-12-10")
    assert same_day["endDate"] == same_day["startDate"]
    assert make_sprint(admin, project, status="PLANNED")["status"] == "PLANNED"
    assert make_sprint(admin, project, goal="g" * 4_000)["goal"] == "g" * 4_000


def test_new_sprints_go_to_the_end_of_their_projects_order(admin: Api) -> None:
    project = make_board(admin)
    other = make_project(admin, project["workspaceId"])
    first, second = make_sprint(admin, project), make_sprint(admin, project)
    assert first["position"] < second["position"]
    admin.ok("POST", "/sprints/reorder", {"sprints": [{"$id": first["$id"], "position": 50}]}, 200)
    make_sprint(admin, other)  # another project's order is its own
    third = make_sprint(admin, project)
    assert third["position"] > 50
    listed = admin.ok("GET", f"/sprints?projectId={project['$id']}")["documents"]
    assert [s["$id"] for s in listed] == [second["$id"], first["$id"], third["$id"]]


def test_a_reorder_names_each_sprint_once_all_of_one_project(admin: Api) -> None:
    project = make_board(admin)
    first, second = make_sprint(admin, project), make_sprint(admin, project)
    other_project = make_sprint(admin, make_project(admin, project["workspaceId"]))
    other_workspace = make_sprint(admin, make_board(admin))
    viewer, viewer_api = make_user(admin)
    add_member(admin, project["workspaceId"], viewer["$id"], "VIEWER")

    def reorder(api: Api, *sprints: dict[str, Any]) -> Any:
        entries = [{"$id": s["$id"], "position": 10 * i} for i, s in enumerate(sprints)]
        return api.post("/sprints/reorder", {"sprints": entries})

    # What the body asks is checked before what the caller may do, as a duplicate is.
    for api in (admin, viewer_api):
        for sprints in ((first, other_project), (first, first)):
            assert error(reorder(api, *sprints), 400)["details"] == {
                "field": "sprints",
                "reason": "invalid_value",
            }
    assert error(reorder(admin, first, other_workspace), 400)["details"]["field"] == "sprints"
    assert reorder(viewer_api, first, other_workspace).status_code == 404
    assert reorder(viewer_api, second, first).status_code == 403
    assert [s["$id"] for s in reorder(admin, second, first).json()["data"]["documents"]] == [
        second["$id"],
        first["$id"],
    ]


def test_create_refuses_a_project_outside_the_named_workspace(admin: Api) -> None:
    project = make_board(admin)
    elsewhere = make_board(admin)
    # The caller sees both workspaces, but the project is not in the one named.
    body = {"name": "S", "workspaceId": project["workspaceId"], "projectId": elsewhere["$id"]}
    details = error(admin.post("/sprints", body), 400)["details"]
    assert (details["field"], details["reason"]) == ("projectId", "not_found")

    # A workspace the caller is not a member of does not exist for them.
    _, stranger = make_user(admin)
    body = {"name": "S", "workspaceId": project["workspaceId"], "projectId": project["$id"]}
    assert error(stranger.post("/sprints", body), 404)["code"] == "NOT_FOUND"
    assert admin.ok("GET", f"/sprints?workspaceId={project['workspaceId']}")["total"] == 0


# --- transitions ---------------------------------------------------------------------------


def test_start_then_complete(admin: Api) -> None:
    project = make_board(admin)
    sprint = make_sprint(admin, project)
    before = datetime.now(UTC) - timedelta(seconds=1)

    started = start(admin, sprint)
    assert started["status"] == "ACTIVE"
    assert before <= parse(started["startDate"]) <= datetime.now(UTC) + timedelta(seconds=1)
    assert started["completedAt"] is None
    assert started["$updatedAt"] >= sprint["$updatedAt"]

    completed = admin.ok("PATCH", f"/sprints/{sprint['$id']}", {"status": "COMPLETED"})
    assert completed["status"] == "COMPLETED"
    assert completed["startDate"] == started["startDate"]
    assert before <= parse(completed["completedAt"]) <= datetime.now(UTC) + timedelta(seconds=1)
    assert completed["movedItemCount"] == 0
    assert sprint_of(admin, sprint["$id"])["status"] == "COMPLETED"


def test_start_keeps_a_start_date_already_set(admin: Api) -> None:
    project = make_board(admin)
    sprint = make_sprint(admin, project, startDate="2030-01-05")
    assert start(admin, sprint)["startDate"] == "2030-01-05T00:00:00.000Z"


def test_setting_the_current_status_again_changes_nothing(admin: Api) -> None:
    project = make_board(admin)
    planned, active, completed = (make_sprint(admin, project) for _ in range(3))
    make_task(admin, project, sprintId=completed["$id"])
    start(admin, completed)
    complete(admin, completed)
    start(admin, active)
    make_task(admin, project)  # joins `active`

    for sprint, status in ((planned, "PLANNED"), (active, "ACTIVE"), (completed, "COMPLETED")):
        before = admin.get(f"/sprints/{sprint['$id']}")
        response = admin.patch(f"/sprints/{sprint['$id']}", {"status": status})
        assert response.status_code == 200, response.text
        again = response.json()["data"]
        assert (again["status"], again["movedItemCount"]) == (status, 0)
        assert again["$updatedAt"] == before.json()["data"]["$updatedAt"]
        assert response.headers["ETag"] == before.headers["ETag"]
        assert admin.get(f"/sprints/{sprint['$id']}").json() == before.json()

    # Completing a completed sprint again is the same no-op.
    before = admin.get(f"/sprints/{completed['$id']}").json()
    assert complete(admin, completed)["movedItemCount"] == 0
    assert admin.get(f"/sprints/{completed['$id']}").json() == before


def test_every_other_move_is_an_invalid_transition(admin: Api) -> None:
    project = make_board(admin)
    planned, completed, active = (make_sprint(admin, project) for _ in range(3))
    start(admin, completed)
    complete(admin, completed)
    start(admin, active)
    snapshots = {s["$id"]: sprint_of(admin, s["$id"]) for s in (planned, active, completed)}

    for sprint, wanted in (
        (planned, "COMPLETED"),
        (completed, "ACTIVE"),
        (completed, "PLANNED"),
        (active, "PLANNED"),
    ):
        current = snapshots[sprint["$id"]]["status"]
        body = error(admin.patch(f"/sprints/{sprint['$id']}", {"status": wanted}), 409)
        assert body["code"] == "CONFLICT"
        assert body["details"] == {"reason": "invalid_transition", "from": current, "to": wanted}

    body = error(admin.post(f"/sprints/{planned['$id']}/complete"), 409)
    assert body["details"] == {"reason": "invalid_transition", "from": "PLANNED", "to": "COMPLETED"}
    assert {s: sprint_of(admin, s) for s in snapshots} == snapshots


def test_a_project_has_at_most_one_active_sprint(admin: Api) -> None:
    project = make_board(admin)
    first, second = make_sprint(admin, project), make_sprint(admin, project)
    other_project = make_project(admin, project["workspaceId"])
    start(admin, make_sprint(admin, other_project))  # another project's does not block

    start(admin, first)
    body = error(admin.patch(f"/sprints/{second['$id']}", {"status": "ACTIVE"}), 409)
    assert body["details"]["reason"] == "active_sprint_exists"
    assert sprint_of(admin, second["$id"])["status"] == "PLANNED"
    assert sprint_of(admin, second["$id"])["startDate"] is None

    complete(admin, first)
    assert start(admin, second)["status"] == "ACTIVE"


def test_patch_updates_fields_and_checks_dates(admin: Api) -> None:
    project = make_board(admin)
    sprint = make_sprint(admin, project, startDate="2026-12-01", endDate="2026-12-14")
    updated = admin.ok(
        "PATCH",
        f"/sprints/{sprint['$id']}",
        {"name": "Renamed", "goal": "New goal", "endDate": "2026-12-15", "position": 7.5},
    )
    assert (updated["name"], updated["goal"], updated["position"]) == ("Renamed", "New goal", 7.5)
    assert updated["endDate"] == "2026-12-15T00:00:00.000Z"
    assert updated["$updatedAt"] >= sprint["$updatedAt"]
    same = {"name": "Renamed", "goal": "New goal", "endDate": "2026-12-15T00:00:00Z"}
    assert admin.ok("PATCH", f"/sprints/{sprint['$id']}", same) == updated

    details = error(admin.patch(f"/sprints/{sprint['$id']}", {"endDate": "2026-11-30"}), 400)[
        "details"
    ]
    assert (details["field"], details["reason"]) == ("endDate", "invalid_value")
    for field, reason in (("projectId", "immutable"), ("completedAt", "read_only")):
        details = error(admin.patch(f"/sprints/{sprint['$id']}", {field: "x"}), 400)["details"]
        assert (details["field"], details["reason"]) == (field, reason)
    details = error(admin.patch(f"/sprints/{sprint['$id']}", {"startDate": "2026-12-16"}), 400)[
        "details"
    ]
    assert (details["field"], details["reason"]) == ("startDate", "invalid_value")
    cleared = admin.ok("PATCH", f"/sprints/{sprint['$id']}", {"goal": None, "startDate": None})
    assert (cleared["goal"], cleared["startDate"]) == (None, None)
    assert sprint_of(admin, sprint["$id"])["name"] == "Renamed"


def test_a_sprint_started_after_its_end_date_stays_editable(admin: Api) -> None:
    """Starting sets the start date to now, which may be after the planned end: a PATCH that
    sends no date is not refused for it; one that sends a date is checked."""
    sprint = make_sprint(admin, make_board(admin), endDate="2026-01-01")
    started = start(admin, sprint)
    assert parse(started["startDate"]) > parse(started["endDate"])
    assert admin.ok("PATCH", f"/sprints/{sprint['$id']}", {"name": "Late"})["name"] == "Late"
    details = error(admin.patch(f"/sprints/{sprint['$id']}", {"endDate": "2026-01-02"}), 400)[
        "details"
    ]
    assert (details["field"], details["reason"]) == ("endDate", "invalid_value")
    later = (datetime.now(UTC) + timedelta(days=14)).strftime("%Y-%m-%d")
    assert admin.ok("PATCH", f"/sprints/{sprint['$id']}", {"endDate": later})["endDate"].startswith(
        later
    )


# --- lists, the detail view and the three figures --------------------------------------------


def test_lists_need_a_workspace_or_project_and_filter_by_status(admin: Api) -> None:
    project = make_board(admin)
    other = make_project(admin, project["workspaceId"])
    planned = make_sprint(admin, project)
    active = make_sprint(admin, project)
    start(admin, active)
    elsewhere = make_sprint(admin, other)

    details = error(admin.get("/sprints"), 400)["details"]
    assert (details["field"], details["reason"]) == ("workspaceId", "required")
    assert error(admin.get("/sprints?projectId=nope"), 404)["code"] == "NOT_FOUND"

    def ids(query: str) -> list[str]:
        page = admin.ok("GET", f"/sprints?{query}")
        assert page["total"] == len(page["documents"])
        return [s["$id"] for s in page["documents"]]

    assert ids(f"projectId={project['$id']}") == [planned["$id"], active["$id"]]
    assert ids(f"projectId={project['$id']}&status=ACTIVE") == [active["$id"]]
    assert ids(f"projectId={project['$id']}&status=COMPLETED") == []
    assert set(ids(f"workspaceId={project['workspaceId']}")) == {
        planned["$id"],
        active["$id"],
        elsewhere["$id"],
    }
    assert set(ids(f"workspaceId={project['workspaceId']}&status=PLANNED,ACTIVE")) == {
        planned["$id"],
        active["$id"],
        elsewhere["$id"],
    }
    details = error(admin.get(f"/sprints?projectId={project['$id']}&status=DONE"), 400)["details"]
    assert (details["field"], details["reason"]) == ("status", "invalid_value")


def test_the_three_figures_follow_the_items(admin: Api) -> None:
    project = make_board(admin)
    sprint = make_sprint(admin, project)
    start(admin, sprint)
    three = make_task(admin, project, storyPoints=3)  # joins the ACTIVE sprint
    five = make_task(admin, project, storyPoints=5, status="IN_PROGRESS")
    make_task(admin, project)  # no points: counted, adds nothing
    make_task(admin, project, storyPoints=2, status="DONE")
    make_task(admin, project, storyPoints=40, sprintId=None)  # the backlog's, not the sprint's

    def now() -> tuple[int, float, float]:
        listed = admin.ok("GET", f"/sprints?projectId={project['$id']}")["documents"]
        (row,) = listed
        detail = sprint_of(admin, sprint["$id"])
        assert figures(row) == figures(detail)
        assert detail["workItemCount"] == len(detail["workItems"])
        return figures(detail)

    assert now() == (4, 10, 2)
    admin.ok("PATCH", f"/tasks/{five['$id']}", {"status": "DONE"})
    assert now() == (4, 10, 7)
    admin.ok("PATCH", f"/tasks/{three['$id']}", {"storyPoints": 8})
    assert now() == (4, 15, 7)
    admin.ok("PATCH", f"/tasks/{five['$id']}", {"storyPoints": 0.5})
    assert now() == (4, 10.5, 2.5)
    admin.ok("PATCH", f"/tasks/{five['$id']}", {"status": "IN_REVIEW"})
    assert now() == (4, 10.5, 2)
    make_task(admin, project, storyPoints=1, status="DONE")
    assert now() == (5, 11.5, 3)
    tenth = make_task(admin, project, storyPoints=0.1, status="DONE")
    fifth = make_task(admin, project, storyPoints=0.2, status="DONE")
    assert now() == (7, 11.8, 3.3)  # as written, not 3.3000000000000003
    admin.ok("DELETE", f"/tasks/{tenth['$id']}")
    admin.ok("DELETE", f"/tasks/{fifth['$id']}")
    admin.ok("PATCH", f"/tasks/{three['$id']}", {"sprintId": None})
    assert now() == (4, 3.5, 3)
    admin.ok("DELETE", f"/tasks/{five['$id']}")
    assert now() == (3, 3, 3)
    admin.ok("PATCH", f"/tasks/{three['$id']}", {"sprintId": sprint["$id"]})
    assert now() == (4, 11, 3)


def test_detail_lists_items_in_order_with_their_assignees(admin: Api) -> None:
    project = make_board(admin)
    user, _ = make_user(admin)
    add_member(admin, project["workspaceId"], user["$id"], "MEMBER")
    sprint = make_sprint(admin, project)
    later = make_task(
        admin, project, sprintId=sprint["$id"], position=20, assigneeIds=[user["$id"]]
    )
    sooner = make_task(admin, project, sprintId=sprint["$id"], position=10)
    make_task(admin, project)  # the backlog's

    detail = sprint_of(admin, sprint["$id"])
    assert [i["$id"] for i in detail["workItems"]] == [sooner["$id"], later["$id"]]
    first, second = detail["workItems"]
    assert first["assignees"] == []
    assert second["assignees"] == [
        {"$id": user["$id"], "name": user["name"], "email": user["email"]}
    ]
    assert second["title"] == later["title"]
    assert second["sprintId"] == sprint["$id"]


def test_sprints_of_a_workspace_the_caller_is_not_in_are_not_found(admin: Api) -> None:
    project = make_board(admin)
    sprint = make_sprint(admin, project)
    _, stranger = make_user(admin)
    mine = make_workspace(stranger)
    assert error(stranger.get(f"/sprints/{sprint['$id']}"), 404)["code"] == "NOT_FOUND"
    assert error(stranger.get(f"/sprints?workspaceId={project['workspaceId']}"), 404)
    assert error(stranger.get(f"/sprints?projectId={project['$id']}"), 404)
    query = f"/sprints?projectId={project['$id']}&workspaceId={mine['$id']}"
    assert error(stranger.get(query), 404)
    assert error(stranger.patch(f"/sprints/{sprint['$id']}", {"status": "ACTIVE"}), 404)
    assert error(stranger.delete(f"/sprints/{sprint['$id']}"), 404)
    assert sprint_of(admin, sprint["$id"])["status"] == "PLANNED"
