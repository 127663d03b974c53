"""Small factories. Each test makes its own data through the HTTP API."""

import itertools
from typing import Any

import httpx
from starlette.testclient import TestClient

from sprintboard.db import Database
from sprintboard.identity import service

API = "/api/v1"
TEST_SECRET_KEY = "test-server-key-0123456789abcdef-0123456789"
"""The server key (`SPRINTBOARD_SECRET_KEY`) of the tests' apps, workers and commands."""
_counter = itertools.count(1)


def unique(prefix: str) -> str:
    return f"{prefix}{next(_counter)}"


class Api:
    """A test client that prefixes `/api/v1` and sends one API key."""

    def __init__(self, client: TestClient, key: str | None = None) -> None:
        self.client = client
        self.key = key

    def as_(self, key: str | None) -> "Api":
        return Api(self.client, key)

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", None) or {})
        if self.key is not None:
            headers.setdefault("Authorization", f"Bearer {self.key}")
        url = path if path.startswith("/api/") or not path.startswith("/") else API + path
        return self.client.request(method, url, headers=headers, **kwargs)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, json: Any = None, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, json=json, **kwargs)

    def patch(self, path: str, json: Any = None, **kwargs: Any) -> httpx.Response:
        return self.request("PATCH", path, json=json, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)

    def ok(self, method: str, path: str, json: Any = None, status: int | None = None) -> Any:
        """The `data` of a successful call; fails the test on any other status."""
        response = self.request(method, path, json=json)
        expected = status or (201 if method == "POST" else 200)
        assert response.status_code == expected, response.text
        return response.json()["data"]


def make_org_admin(database: Database) -> str:
    """An organization admin, made like `sprintboard create-admin` makes one; returns the key."""
    with database.transaction() as session:
        user = service.create_user(
            session, name="Org Admin", email=f"{unique('admin')}@example.com", is_org_admin=True
        )
        _, secret = service.create_key(
            session,
            caller=None,
            owner=user,
            name="test",
            permissions=None,
            workspace_id=None,
            expires_at=None,
        )
    return secret


def make_user(admin: Api, name: str | None = None, **key_fields: Any) -> tuple[dict[str, Any], Api]:
    """A new user and a client holding a fresh key of theirs."""
    name = name or unique("user")
    user = admin.ok("POST", "/users", {"name": name, "email": f"{name}@example.com"})
    key = admin.ok("POST", f"/users/{user['$id']}/keys", {"name": "test", **key_fields})
    return user, admin.as_(key["key"])


def make_workspace(api: Api, **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = api.ok("POST", "/workspaces", {"name": unique("ws"), **fields})
    return data


def make_project(api: Api, workspace_id: str, **fields: Any) -> dict[str, Any]:
    body = {"name": unique("Project "), **fields}
    data: dict[str, Any] = api.ok("POST", f"/workspaces/{workspace_id}/projects", body)
    return data


def add_member(admin_api: Api, workspace_id: str, user_id: str, role: str) -> dict[str, Any]:
    data: dict[str, Any] = admin_api.ok(
        "POST", f"/workspaces/{workspace_id}/members", {"userId": user_id, "role": role}
    )
    return data
