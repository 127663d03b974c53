"""The contract's permission table, one row at a time: the holder may, a non-holder gets 403
with `details.permission` (a role without it, or a key whose own list lacks it).
"""

from collections.abc import Callable
from typing import Any

import pytest

from tests.factories import Api, add_member, make_project, make_user, make_workspace

ALL_BUT = {
    p: sorted(
        {
            "SPRINT_CREATE",
            "SPRINT_START",
            "SPRINT_COMPLETE",
            "SPRINT_DELETE",
            "WORK_ITEM_WRITE",
            "PROJECT_MANAGE",
            "WORKSPACE_MANAGE",
            "ORG_ADMIN",
        }
        - {p}
    )
    for p in (
        "SPRINT_CREATE",
        "SPRINT_START",
        "SPRINT_COMPLETE",
        "SPRINT_DELETE",
        "WORK_ITEM_WRITE",
        "PROJECT_MANAGE",
        "WORKSPACE_MANAGE",
        "ORG_ADMIN",
    )
}


class World:
    """A workspace owned by `owner` (ADMIN), with one project, sprint and task."""

    def __init__(self, admin: Api) -> None:
        self.admin = admin
        self.owner_user, self.owner = make_user(admin)
        self.workspace = make_workspace(self.owner)
        self.project = make_project(self.owner, self.workspace["$id"])
        self.sprint = self.new_sprint()
        self.task = self.owner.ok(
            "POST",
            "/tasks",
            {
                "name": "T",
                "workspaceId": self.workspace["$id"],
                "projectId": self.project["$id"],
            },
        )

    def new_sprint(self) -> dict[str, Any]:
        data: dict[str, Any] = self.owner.ok(
            "POST",
            "/sprints",
            {
                "name": "S",
                "workspaceId": self.workspace["$id"],
                "projectId": self.project["$id"],
            },
        )
        return data

    def caller(self, role: str) -> Api:
        """A caller with `role` in the workspace ("ADMIN-narrow:<P>": ADMIN, key lacking P)."""
        if role.startswith("ADMIN-narrow:"):
            permission = role.split(":")[1]
            user, client = make_user(self.admin)
            add_member(self.owner, self.workspace["$id"], user["$id"], "ADMIN")
            key = client.ok("POST", "/keys", {"name": "narrow", "permissions": ALL_BUT[permission]})
            return self.admin.as_(key["key"])
        user, client = make_user(self.admin)
        add_member(self.owner, self.workspace["$id"], user["$id"], role)
        return client


Action = Callable[[World, Api], Any]


def _create_project(w: World, c: Api) -> Any:
    return c.post(f"/workspaces/{w.workspace['$id']}/projects", {"name": "New"})


def _update_project(w: World, c: Api) -> Any:
    return c.patch(f"/projects/{w.project['$id']}", {"name": "Renamed"})


def _delete_project(w: World, c: Api) -> Any:
    return c.delete(f"/projects/{make_project(w.owner, w.workspace['$id'])['$id']}")


def _create_type(w: World, c: Api) -> Any:
    return c.post(f"/workspaces/{w.workspace['$id']}/work-item-types", {"name": "SPIKE"})


def _update_workspace(w: World, c: Api) -> Any:
    return c.patch(f"/workspaces/{w.workspace['$id']}", {"name": "Renamed"})


def _delete_workspace(w: World, c: Api) -> Any:
    return c.delete(f"/workspaces/{w.workspace['$id']}")


def _add_member(w: World, c: Api) -> Any:
    user, _ = make_user(w.admin)
    return c.post(f"/workspaces/{w.workspace['$id']}/members", {"userId": user["$id"]})


def _change_member(w: World, c: Api) -> Any:
    user, _ = make_user(w.admin)
    add_member(w.owner, w.workspace["$id"], user["$id"], "VIEWER")
    return c.patch(f"/workspaces/{w.workspace['$id']}/members/{user['$id']}", {"role": "MEMBER"})


def _remove_member(w: World, c: Api) -> Any:
    user, _ = make_user(w.admin)
    add_member(w.owner, w.workspace["$id"], user["$id"], "VIEWER")
    return c.delete(f"/workspaces/{w.workspace['$id']}/members/{user['$id']}")


def _create_webhook(w: World, c: Api) -> Any:
    body = {"url": "https://example.com/h", "events": ["task.created"]}
    return c.post(f"/workspaces/{w.workspace['$id']}/webhooks", body)


def _create_sprint(w: World, c: Api) -> Any:
    body = {"name": "S2", "workspaceId": w.workspace["$id"], "projectId": w.project["$id"]}
    return c.post("/sprints", body)


def _rename_sprint(w: World, c: Api) -> Any:
    return c.patch(f"/sprints/{w.sprint['$id']}", {"name": "Renamed"})


def _start_sprint(w: World, c: Api) -> Any:
    return c.patch(f"/sprints/{w.sprint['$id']}", {"status": "ACTIVE"})


def _complete_sprint(w: World, c: Api) -> Any:
    w.owner.ok("PATCH", f"/sprints/{w.sprint['$id']}", {"status": "ACTIVE"})
    return c.post(f"/sprints/{w.sprint['$id']}/complete", {})


def _delete_sprint(w: World, c: Api) -> Any:
    return c.delete(f"/sprints/{w.new_sprint()['$id']}")


def _create_task(w: World, c: Api) -> Any:
    body = {"name": "T2", "workspaceId": w.workspace["$id"], "projectId": w.project["$id"]}
    return c.post("/tasks", body)


def _update_task(w: World, c: Api) -> Any:
    return c.patch(f"/tasks/{w.task['$id']}", {"title": "Renamed"})


def _comment(w: World, c: Api) -> Any:
    return c.post(f"/tasks/{w.task['$id']}/comments", {"body": "hi"})


# (permission, action, expected success status)
ROWS: list[tuple[str, Action, int]] = [
    ("PROJECT_MANAGE", _create_project, 201),
    ("PROJECT_MANAGE", _update_project, 200),
    ("PROJECT_MANAGE", _delete_project, 200),
    ("PROJECT_MANAGE", _create_type, 201),
    ("WORKSPACE_MANAGE", _update_workspace, 200),
    ("WORKSPACE_MANAGE", _delete_workspace, 200),
    ("WORKSPACE_MANAGE", _add_member, 201),
    ("WORKSPACE_MANAGE", _change_member, 200),
    ("WORKSPACE_MANAGE", _remove_member, 200),
    ("WORKSPACE_MANAGE", _create_webhook, 201),
    ("SPRINT_CREATE", _create_sprint, 201),
    ("SPRINT_CREATE", _rename_sprint, 200),
    ("SPRINT_START", _start_sprint, 200),
    ("SPRINT_COMPLETE", _complete_sprint, 200),
    ("SPRINT_DELETE", _delete_sprint, 200),
    ("WORK_ITEM_WRITE", _create_task, 201),
    ("WORK_ITEM_WRITE", _update_task, 200),
    ("WORK_ITEM_WRITE", _comment, 201),
]

HOLDERS = {
    "PROJECT_MANAGE": ["ADMIN"],
    "WORKSPACE_MANAGE": ["ADMIN"],
    "SPRINT_DELETE": ["ADMIN"],
    "SPRINT_CREATE": ["ADMIN", "MEMBER"],
    "SPRINT_START": ["ADMIN", "MEMBER"],
    "SPRINT_COMPLETE": ["ADMIN", "MEMBER"],
    "WORK_ITEM_WRITE": ["ADMIN", "MEMBER"],
}

CASES = [
    (permission, action, status, role)
    for permission, action, status in ROWS
    for role in [
        *HOLDERS[permission],
        *(r for r in ("MEMBER", "VIEWER") if r not in HOLDERS[permission]),
        f"ADMIN-narrow:{permission}",
    ]
]


@pytest.mark.parametrize(
    ("permission", "action", "status", "role"),
    CASES,
    ids=[f"{p}-{a.__name__.strip('_')}-{r.split(':')[0]}" for p, a, _, r in CASES],
)
def test_permission_row(
    admin: Api, permission: str, action: Action, status: int, role: str
) -> None:
    world = World(admin)
    caller = world.caller(role)
    response = action(world, caller)
    if role in HOLDERS[permission]:
        assert response.status_code == status, response.text
    else:
        assert response.status_code == 403, response.text
        error = response.json()["error"]
        assert error["code"] == "FORBIDDEN"
        assert error["details"] == {"permission": permission}


@pytest.mark.parametrize("role", ["ADMIN", "MEMBER", "VIEWER"])
def test_reading_needs_membership_only(admin: Api, role: str) -> None:
    world = World(admin)
    caller = world.caller(role)
    for path in (
        f"/workspaces/{world.workspace['$id']}",
        f"/workspaces/{world.workspace['$id']}/projects",
        f"/workspaces/{world.workspace['$id']}/members",
        f"/workspaces/{world.workspace['$id']}/work-item-types",
        f"/projects/{world.project['$id']}",
        f"/sprints/{world.sprint['$id']}",
        f"/tasks/{world.task['$id']}",
    ):
        assert caller.get(path).status_code == 200, path


def test_org_admin_row(admin: Api) -> None:
    user, client = make_user(admin)
    body = {"name": "U", "email": "u-perm@example.com"}
    for call in (
        lambda c: c.post("/users", body),
        lambda c: c.get("/users"),
        lambda c: c.post(f"/users/{user['$id']}/keys", {"name": "k"}),
    ):
        denied = call(client)
        assert denied.status_code == 403
        assert denied.json()["error"]["details"] == {"permission": "ORG_ADMIN"}
        narrow = admin.as_(
            admin.ok("POST", "/keys", {"name": "n", "permissions": ALL_BUT["ORG_ADMIN"]})["key"]
        )
        denied = call(narrow)
        assert denied.status_code == 403
        assert denied.json()["error"]["details"] == {"permission": "ORG_ADMIN"}
        assert call(admin).status_code in (200, 201)


def test_org_admin_is_no_workspace_admin(admin: Api) -> None:
    _, owner = make_user(admin)
    workspace = make_workspace(owner)
    assert admin.patch(f"/workspaces/{workspace['$id']}", {"name": "x"}).status_code == 404
