"""Factories for the sprint tests: a project to plan in, sprints, work items, a read-back."""

from typing import Any

from tests.factories import Api, make_project, make_workspace, unique


def make_board(api: Api) -> dict[str, Any]:
    """A fresh workspace with one project; returns the project."""
    workspace = make_workspace(api)
    return make_project(api, workspace["$id"])


def make_sprint(api: Api, project: dict[str, Any], **fields: Any) -> dict[str, Any]:
    body = {
        "name": unique("Sprint "),
        "workspaceId": project["workspaceId"],
        "projectId": project["$id"],
        **fields,
    }
    data: dict[str, Any] = api.ok("POST", "/sprints", body)
    return data


def make_task(api: Api, project: dict[str, Any], **fields: Any) -> dict[str, Any]:
    body = {
        "name": unique("Task "),
        "workspaceId": project["workspaceId"],
        "projectId": project["$id"],
        **fields,
    }
    data: dict[str, Any] = api.ok("POST", "/tasks", body)
    return data


def start(api: Api, sprint: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = api.ok("PATCH", f"/sprints/{sprint['$id']}", {"status": "ACTIVE"})
    return data


def complete(api: Api, sprint: dict[str, Any], body: Any = None) -> dict[str, Any]:
    """`POST /sprints/{id}/complete`: an action, not a create, so 200."""
    data: dict[str, Any] = api.ok("POST", f"/sprints/{sprint['$id']}/complete", body, 200)
    return data


def sprint_of(api: Api, sprint_id: str) -> dict[str, Any]:
    """The sprint as `GET /sprints/{id}` shows it now."""
    data: dict[str, Any] = api.ok("GET", f"/sprints/{sprint_id}")
    return data


def task_of(api: Api, task_id: str) -> dict[str, Any]:
    data: dict[str, Any] = api.ok("GET", f"/tasks/{task_id}")
    return data


def figures(sprint: dict[str, Any]) -> tuple[int, float, float]:
    return sprint["workItemCount"], sprint["totalPoints"], sprint["completedPoints"]


def error(response: Any, status: int) -> dict[str, Any]:
    """The error body of a response that must have failed with `status`."""
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()["error"]
    return body
