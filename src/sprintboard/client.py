"""A synchronous Python client of the sprintboard API.

Import, export and the MCP server talk to the service only through this client, so every
rule and permission of the API applies to them as to any script. It raises one exception
type, `ApiError`, carrying the envelope's code, reason and field; it waits and retries when
the service answers 429 or 503 with `Retry-After`; and it sends an `Idempotency-Key` with
every create, so a create retried after a lost answer is not made twice.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx

from sprintboard import __version__

Json = dict[str, Any]

RETRIED_STATUSES = frozenset({429, 503})
LONGEST_WAIT = 60.0


class ApiError(Exception):
    """An error answer of the API (or no answer at all, as code `UNREACHABLE`)."""

    def __init__(self, status: int, code: str, message: str, details: Mapping[str, Any]):
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details: dict[str, Any] = dict(details)

    @property
    def reason(self) -> str | None:
        reason = self.details.get("reason")
        return reason if isinstance(reason, str) else None

    @property
    def field(self) -> str | None:
        field = self.details.get("field")
        return field if isinstance(field, str) else None

    def __str__(self) -> str:
        where = f" ({self.field}: {self.reason})" if self.field and self.reason else ""
        return f"{self.status} {self.code}: {self.message}{where}"


class Client:
    """One API key at one service. Use as a context manager, or call `close()`."""

    def __init__(
        self,
        url: str,
        api_key: str,
        *,
        timeout: float = 30.0,
        retries: int = 5,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._http = httpx.Client(
            base_url=url.rstrip("/") + "/api/v1",
            headers={
                "Authorization": f"Bearer {api_key}",
                "User-Agent": f"sprintboard-client/{__version__}",
            },
            timeout=timeout,
            transport=transport,
            follow_redirects=False,
        )
        self._retries = retries
        self._sleep = sleep

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Client:
        """The client that `SPRINTBOARD_URL` and `SPRINTBOARD_API_KEY` describe."""
        missing = [n for n in ("SPRINTBOARD_URL", "SPRINTBOARD_API_KEY") if not environ.get(n)]
        if missing:
            raise ValueError(f"{' and '.join(missing)} must be set")
        return cls(environ["SPRINTBOARD_URL"], environ["SPRINTBOARD_API_KEY"])

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # The one way a request is made.

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        if_match: str | None = None,
    ) -> Any:
        """Send one request and return the envelope's `data`, or raise `ApiError`."""
        headers: dict[str, str] = {}
        if method == "POST":
            headers["Idempotency-Key"] = uuid.uuid4().hex
        if if_match is not None:
            headers["If-Match"] = if_match
        query = {k: _param(v) for k, v in (params or {}).items() if v is not None}
        for attempt in range(self._retries + 1):
            try:
                response = self._http.request(
                    method, path, json=body, params=query, headers=headers
                )
            except httpx.TransportError as exc:
                if attempt == self._retries or method not in ("GET", "POST"):
                    raise ApiError(0, "UNREACHABLE", str(exc) or type(exc).__name__, {}) from exc
                self._sleep(min(2.0**attempt * 0.25, LONGEST_WAIT))
                continue
            if response.status_code in RETRIED_STATUSES and attempt < self._retries:
                self._sleep(_retry_after(response))
                continue
            return _data(response)
        raise AssertionError("unreachable")  # pragma: no cover

    def pages(self, path: str, params: Mapping[str, Any] | None = None) -> Iterator[Json]:
        """Every record of a list, page after page (500 at a time unless `params` says a
        `limit`), each page from the last one's `nextCursor`: records created or deleted
        meanwhile never make one repeat or be skipped."""
        query = {"limit": 500, **(params or {})}
        while True:
            page = self.request("GET", path, params=query)
            yield from page["documents"]
            if page.get("nextCursor") is None:
                return
            query["cursor"] = page["nextCursor"]

    # Identity and structure.

    def me(self) -> Json:
        return self._one("GET", "/me")

    def workspaces(self) -> list[Json]:
        return list(self.pages("/workspaces"))

    def workspace(self, workspace_id: str) -> Json:
        return self._one("GET", f"/workspaces/{workspace_id}")

    def create_workspace(self, name: str, description: str | None = None) -> Json:
        return self._one("POST", "/workspaces", {"name": name, "description": description})

    def members(self, workspace_id: str) -> list[Json]:
        return list(self.pages(f"/workspaces/{workspace_id}/members"))

    def add_member(self, workspace_id: str, user_id: str, role: str) -> Json:
        body = {"userId": user_id, "role": role}
        return self._one("POST", f"/workspaces/{workspace_id}/members", body)

    def projects(self, workspace_id: str) -> list[Json]:
        return list(self.pages(f"/workspaces/{workspace_id}/projects"))

    def project(self, project_id: str) -> Json:
        return self._one("GET", f"/projects/{project_id}")

    def create_project(self, workspace_id: str, **fields: Any) -> Json:
        return self._one("POST", f"/workspaces/{workspace_id}/projects", fields)

    def statuses(self, project_id: str) -> list[Json]:
        """In position order, all at once (a project has at most 30)."""
        documents: list[Json] = self.request("GET", f"/projects/{project_id}/statuses")["documents"]
        return documents

    def create_status(self, project_id: str, **fields: Any) -> Json:
        return self._one("POST", f"/projects/{project_id}/statuses", fields)

    def work_item_types(self, workspace_id: str) -> list[Json]:
        """The workspace's custom types (TASK, BUG, STORY and EPIC always exist besides)."""
        return list(self.pages(f"/workspaces/{workspace_id}/work-item-types"))

    def create_work_item_type(self, workspace_id: str, name: str) -> Json:
        return self._one("POST", f"/workspaces/{workspace_id}/work-item-types", {"name": name})

    def fields(self, workspace_id: str) -> list[Json]:
        """The workspace's custom fields, all at once (a workspace has at most 50)."""
        documents: list[Json] = self.request("GET", f"/workspaces/{workspace_id}/fields")[
            "documents"
        ]
        return documents

    def create_field(self, workspace_id: str, **fields: Any) -> Json:
        return self._one("POST", f"/workspaces/{workspace_id}/fields", fields)

    # Work items.

    def tasks(self, workspace_id: str, **filters: Any) -> Iterator[Json]:
        return self.pages("/tasks", {"workspaceId": workspace_id, **filters})

    def task(self, task: str) -> Json:
        return self._one("GET", f"/tasks/{task}")

    def create_task(self, **fields: Any) -> Json:
        return self._one("POST", "/tasks", fields)

    def bulk_create_tasks(self, tasks: list[Json]) -> list[Json]:
        return self._list("POST", "/tasks/bulk-create", {"tasks": tasks})

    def update_task(self, task: str, if_match: str | None = None, **fields: Any) -> Json:
        data: Json = self.request("PATCH", f"/tasks/{task}", body=fields, if_match=if_match)
        return data

    def bulk_update_tasks(self, tasks: list[Json]) -> list[Json]:
        return self._list("POST", "/tasks/bulk-update", {"tasks": tasks})

    def delete_task(self, task: str) -> Json:
        return self._one("DELETE", f"/tasks/{task}")

    def comments(self, task: str) -> list[Json]:
        return list(self.pages(f"/tasks/{task}/comments"))

    def add_comment(self, task: str, body: str) -> Json:
        return self._one("POST", f"/tasks/{task}/comments", {"body": body})

    def time_logs(self, task: str) -> list[Json]:
        return list(self.pages(f"/tasks/{task}/time-logs"))

    def log_time(self, task: str, **fields: Any) -> Json:
        return self._one("POST", f"/tasks/{task}/time-logs", fields)

    def relations(self, task: str) -> list[Json]:
        return list(self.pages(f"/tasks/{task}/relations"))

    def relate(self, task: str, type: str, target: str) -> Json:
        body = {"type": type, "targetId": target}
        return self._one("POST", f"/tasks/{task}/relations", body)

    # Sprints.

    def sprints(self, *, project_id: str, status: str | None = None) -> list[Json]:
        return list(self.pages("/sprints", {"projectId": project_id, "status": status}))

    def sprint(self, sprint_id: str) -> Json:
        return self._one("GET", f"/sprints/{sprint_id}")

    def create_sprint(self, **fields: Any) -> Json:
        return self._one("POST", "/sprints", fields)

    def update_sprint(self, sprint_id: str, **fields: Any) -> Json:
        return self._one("PATCH", f"/sprints/{sprint_id}", fields)

    def complete_sprint(self, sprint_id: str, move_to: str | None = None) -> Json:
        body = {"unfinishedDetails": {"moveTo": {"sprintId": move_to}}} if move_to else {}
        return self._one("POST", f"/sprints/{sprint_id}/complete", body)

    def sprint_report(self, sprint_id: str) -> Json:
        return self._one("GET", f"/sprints/{sprint_id}/report")

    def _one(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Json:
        data: Json = self.request(method, path, body=body)
        return data

    def _list(self, method: str, path: str, body: Mapping[str, Any]) -> list[Json]:
        documents: list[Json] = self.request(method, path, body=body)["documents"]
        return documents


def _param(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _retry_after(response: httpx.Response) -> float:
    try:
        seconds = float(response.headers.get("Retry-After", "1"))
    except ValueError:
        seconds = 1.0
    return min(max(seconds, 0.0), LONGEST_WAIT)


def _data(response: httpx.Response) -> Any:
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if response.is_success and isinstance(payload, dict) and "data" in payload:
        return payload["data"]
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        details = error.get("details")
        return _raise(
            response.status_code,
            str(error.get("code", "UNKNOWN")),
            str(error.get("message", "")),
            details if isinstance(details, dict) else {},
        )
    return _raise(response.status_code, "UNEXPECTED", response.text[:200], {})


def _raise(status: int, code: str, message: str, details: Mapping[str, Any]) -> Any:
    raise ApiError(status, code, message, details)
