"""Each sprint permission: its holder may, a role without it and a key narrowed below it may
not (403 with `details.permission`), and a refused call changes nothing.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from tests.factories import Api, add_member, make_project, make_user, make_workspace
from tests.sprint_factories import error, make_sprint, make_task, sprint_of, start

EVERY_PERMISSION = [
    "SPRINT_CREATE",
    "SPRINT_START",
    "SPRINT_COMPLETE",
    "SPRINT_DELETE",
    "WORK_ITEM_WRITE",
    "PROJECT_MANAGE",
    "WORKSPACE_MANAGE",
]


@dataclass(frozen=True)
class Board:
    project: dict[str, Any]
    planned: dict[str, Any]
    active: dict[str, Any]
    item: dict[str, Any]


Call = Callable[[Api, Board], httpx.Response]


def _create(api: Api, board: Board) -> httpx.Response:
    project = board.project
    body = {"name": "S", "workspaceId": project["workspaceId"], "projectId": project["$id"]}
    return api.post("/sprints", body)


def _patch(body: dict[str, Any], which: str = "planned") -> Call:
    return lambda api, board: api.patch(f"/sprints/{getattr(board, which)['$id']}", body)


def _complete(api: Api, board: Board) -> httpx.Response:
    return api.post(f"/sprints/{board.active['$id']}/complete", {"unfinishedDetails": {}})


def _delete(api: Api, board: Board) -> httpx.Response:
    return api.delete(f"/sprints/{board.planned['$id']}")


def _reorder(api: Api, board: Board) -> httpx.Response:
    entries = [{"$id": board.planned["$id"], "position": 99}]
    return api.post("/sprints/reorder", {"sprints": entries})


CASES: dict[str, tuple[str, Call, int]] = {
    # route: (the permission it needs, the call, the holder's status)
    "POST /sprints": ("SPRINT_CREATE", _create, 201),
    "PATCH name": ("SPRINT_CREATE", _patch({"name": "Renamed"}), 200),
    "PATCH goal": ("SPRINT_CREATE", _patch({"goal": "A goal"}), 200),
    "PATCH dates": ("SPRINT_CREATE", _patch({"startDate": "2027-01-01", "endDate": None}), 200),
    "PATCH position": ("SPRINT_CREATE", _patch({"position": 42}), 200),
    "PATCH status ACTIVE": ("SPRINT_START", _patch({"status": "ACTIVE"}, "planned"), 200),
    "PATCH status COMPLETED": ("SPRINT_COMPLETE", _patch({"status": "COMPLETED"}, "active"), 200),
    "POST /sprints/{id}/complete": ("SPRINT_COMPLETE", _complete, 200),
    "DELETE /sprints/{id}": ("SPRINT_DELETE", _delete, 200),
    "POST /sprints/reorder": ("SPRINT_CREATE", _reorder, 200),
}


def _snapshot(admin: Api, board: Board) -> dict[str, Any]:
    return {
        "sprints": admin.ok("GET", f"/sprints?workspaceId={board.project['workspaceId']}"),
        "item": admin.ok("GET", f"/tasks/{board.item['$id']}"),
    }


def _board(admin: Api, workspace_id: str) -> Board:
    project = make_project(admin, workspace_id)
    planned = make_sprint(admin, project)
    active = make_sprint(admin, make_project(admin, workspace_id))  # `planned` may start
    start(admin, active)
    item = make_task(admin, project, sprintId=planned["$id"])
    return Board(project, planned, active, item)


def test_sprint_permissions(admin: Api) -> None:
    workspace_id = make_workspace(admin)["$id"]

    def member(role: str, **key_fields: Any) -> Api:
        user, api = make_user(admin, **key_fields)
        add_member(admin, workspace_id, user["$id"], role)
        return api

    roles = {role: member(role) for role in ("ADMIN", "MEMBER", "VIEWER")}
    # An ADMIN whose key leaves out just that one permission.
    narrowed = {
        permission: member("ADMIN", permissions=[p for p in EVERY_PERMISSION if p != permission])
        for permission in {permission for permission, _, _ in CASES.values()}
    }

    for route, (permission, call, holder_status) in CASES.items():
        board = _board(admin, workspace_id)
        # The role without it: VIEWER, or MEMBER for SPRINT_DELETE (an ADMIN's alone).
        lacking, holding = (
            ("MEMBER", "ADMIN") if permission == "SPRINT_DELETE" else ("VIEWER", "MEMBER")
        )
        before = _snapshot(admin, board)
        for refused in (roles[lacking], narrowed[permission]):
            body = error(call(refused, board), 403)
            assert body["code"] == "FORBIDDEN", route
            assert body["details"]["permission"] == permission, route
        assert _snapshot(admin, board) == before, route
        # Reading needs membership only.
        assert sprint_of(roles["VIEWER"], board.planned["$id"])["$id"] == board.planned["$id"]

        response = call(roles[holding], board)
        assert response.status_code == holder_status, (route, response.text)
        assert _snapshot(admin, board) != before, route


def test_sending_a_planned_sprint_its_status_needs_planning_not_starting(admin: Api) -> None:
    """PLANNED is no transition's target: sent to a PLANNED sprint it is a no-op, which asks
    for SPRINT_CREATE (planning), not SPRINT_START."""
    workspace_id = make_workspace(admin)["$id"]
    planned = make_sprint(admin, make_project(admin, workspace_id))
    planner, planner_api = make_user(admin, permissions=["SPRINT_CREATE"])
    add_member(admin, workspace_id, planner["$id"], "MEMBER")
    viewer, viewer_api = make_user(admin)
    add_member(admin, workspace_id, viewer["$id"], "VIEWER")
    body = {"status": "PLANNED", "name": "Renamed"}
    renamed = planner_api.ok("PATCH", f"/sprints/{planned['$id']}", body)
    assert (renamed["status"], renamed["name"]) == ("PLANNED", "Renamed")
    refused = error(viewer_api.patch(f"/sprints/{planned['$id']}", {"status": "PLANNED"}), 403)
    assert refused["details"]["permission"] == "SPRINT_CREATE"
