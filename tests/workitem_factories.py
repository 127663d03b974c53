"""Factories for work-item tests: a workspace with a project, tasks and sprints via HTTP."""

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from tests.factories import Api, add_member, make_project, make_user, make_workspace


@dataclass(frozen=True)
class Board:
    """A workspace with one project, owned (ADMIN) by the client `api`."""

    api: Api
    workspace: dict[str, Any]
    project: dict[str, Any]

    @property
    def workspace_id(self) -> str:
        return str(self.workspace["$id"])

    @property
    def project_id(self) -> str:
        return str(self.project["$id"])

    def body(self, **fields: Any) -> dict[str, Any]:
        """A create body for this board's project; `fields` override or add."""
        title = {} if "title" in fields else {"name": "A task"}
        return {
            **title,
            "workspaceId": self.workspace_id,
            "projectId": self.project_id,
            **fields,
        }

    def task(self, **fields: Any) -> dict[str, Any]:
        data: dict[str, Any] = self.api.ok("POST", "/tasks", self.body(**fields))
        return data

    def sprint(self, *, project: dict[str, Any] | None = None, status: str = "PLANNED") -> Any:
        """A sprint of the project (or `project`), moved to `status` through its transitions."""
        project = project or self.project
        sprint = self.api.ok(
            "POST",
            "/sprints",
            {"name": "Sprint", "workspaceId": self.workspace_id, "projectId": project["$id"]},
        )
        if status in ("ACTIVE", "COMPLETED"):
            sprint = self.api.ok("PATCH", f"/sprints/{sprint['$id']}", {"status": "ACTIVE"})
        if status == "COMPLETED":
            sprint = self.api.ok("PATCH", f"/sprints/{sprint['$id']}", {"status": "COMPLETED"})
        return sprint

    def member(self, role: str, **key_fields: Any) -> tuple[dict[str, Any], Api]:
        """A new user with `role` in this workspace, and a client holding their key."""
        user, client = make_user(self.api, **key_fields)
        add_member(self.api, self.workspace_id, user["$id"], role)
        return user, client

    def list(self, **params: Any) -> dict[str, Any]:
        data: dict[str, Any] = self.api.ok(
            "GET", "/tasks?" + _query({"workspaceId": self.workspace_id, **params})
        )
        return data


def make_board(admin: Api, **project_fields: Any) -> Board:
    workspace = make_workspace(admin)
    return Board(admin, workspace, make_project(admin, workspace["$id"], **project_fields))


def _query(params: dict[str, Any]) -> str:
    return urlencode({k: str(v).lower() if isinstance(v, bool) else v for k, v in params.items()})
