"""`RouteIndex` finds, for every path the API serves, the route the router itself would find;
a direct route reads its body as FastAPI's handler would.
"""

import asyncio
import re
from typing import Any

import orjson
import pytest
from fastapi.middleware.asyncexitstack import AsyncExitStackMiddleware
from fastapi.routing import request_response
from sqlalchemy import func, select
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.testclient import TestClient

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.db import Database
from sprintboard.http.deps import SessionDep, TransactionalRoute, api_router
from sprintboard.http.routing import RouteIndex, fixed_routes
from sprintboard.models import Workspace
from tests.factories import Api, make_org_admin, make_project, make_workspace


def _linear_match(routes: list[Route], scope: dict[str, object]) -> Route | None:
    for route in routes:
        if route.matches(scope)[0] is Match.FULL:
            return route
    return None


def test_index_finds_what_the_router_finds() -> None:
    """Every route and method, with parameters filled in ways that look like another route's
    literal segment, plus paths no route serves.
    """
    app = create_app(Settings(database_url="sqlite://"))
    index = app.router.middleware_stack
    assert isinstance(index, RouteIndex)
    routes = [route for route in app.router.routes if isinstance(route, Route)]
    assert len(routes) == len(app.router.routes)
    indexed = [route for placed in index.by_depth.values() for _, route in placed]
    assert sorted(map(id, indexed)) == sorted(map(id, routes))

    paths = {"/api/v1/tasks/bulk-update/x", "/api/v1", "/api/v1/", "/api/v1/tasks/", "/x"}
    for route in routes:
        for filler in ("abc123", "bulk-update", "me", "members"):
            paths.add(re.sub(r"\{[^}]+\}", filler, route.path))
    methods = {method for route in routes for method in route.methods or ()}
    checked = 0
    for path in sorted(paths):
        fixed = fixed_routes(routes, path)
        for method in sorted(methods):
            scope = {"type": "http", "method": method, "path": path, "root_path": ""}
            expected = _linear_match(fixed or routes, scope)
            if fixed and expected is None:
                with pytest.raises(HTTPException) as refused:
                    index.find(scope)
                assert refused.value.status_code == 405
                continue
            found = index.find(scope)
            assert (found[0] if found else None) is expected, (method, path)
            checked += expected is not None
    assert checked > len(routes)


def test_a_fixed_path_is_served_by_its_own_routes_alone(admin: Api) -> None:
    """`/tasks/bulk-update` is not a work item called "bulk-update": other methods are 405,
    and `Allow` names only what the path itself serves.
    """
    for method, path, allowed in (
        ("GET", "/tasks/bulk-update", "POST"),
        ("DELETE", "/tasks/bulk-update", "POST"),
        ("GET", "/sprints/reorder", "POST"),
        ("OPTIONS", "/sprints/reorder", "POST"),
        ("PUT", "/tasks", "GET, POST"),
        ("PUT", "/tasks/some-id", "GET, PATCH, DELETE"),
    ):
        response = admin.request(method, path)
        assert response.status_code == 405, (method, path, response.text)
        assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
        assert response.headers["Allow"] == allowed, (method, path)
    assert admin.get("/tasks/some-id").status_code == 404


BAD_BODIES: list[bytes] = [
    b"",
    b"null",
    b"[]",
    b'"text"',
    b"{",
    b'{"name": }',
    b"\xff\xfe{}",
    b"[" * 5000 + b"]" * 5000,
    b"{}",
    b'{"name": 5}',
    b'{"name": "x", "workspaceId": "nope", "projectId": "nope", "priority": "SOON"}',
    b'{"name": "x", "workspaceId": "w", "projectId": "p", "$id": "mine", "colour": 1}',
    b'{"title": null, "storyPoints": -1, "labels": "a", "dueDate": "tomorrow"}',
    b'{"status": null}',
    b'{"projectId": "other"}',
    b'{"description": "' + b"d" * 70_000 + b'"}',
]


def _answers(api: Api, requests: list[tuple[str, str, bytes, dict[str, str]]]) -> list[Any]:
    answers = []
    for method, path, body, headers in requests:
        response = api.request(
            method, path, content=body, headers={"Content-Type": "application/json", **headers}
        )
        payload = response.json()
        payload.get("error", {}).get("details", {}).pop("requestId", None)
        answers.append((response.status_code, payload))
    return answers


def test_direct_routes_answer_bodies_as_fastapi_does(
    admin: Api, app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A direct route reads its JSON body and `If-Match` itself: for good and bad bodies alike
    it answers what FastAPI's own request handler answers for the same endpoint.
    """
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"], key="RT")
    fields = {"workspaceId": workspace["$id"], "projectId": project["$id"]}
    task = admin.ok("POST", "/tasks", {"name": "t", **fields})
    requests: list[tuple[str, str, bytes, dict[str, str]]] = []
    for body in BAD_BODIES:
        requests.append(("POST", "/tasks", body, {}))
        requests.append(("PATCH", f"/tasks/{task['$id']}", body, {}))
    for tag in ('"stale"', "*, W/nothing"):
        requests.append(("PATCH", f"/tasks/{task['$id']}", b'{"title": "t2"}', {"If-Match": tag}))
    requests.append(("POST", f"/workspaces/{workspace['$id']}/projects", b'{"key": 1}', {}))
    requests.append(("POST", "/tasks", orjson.dumps({"name": "ok", **fields}), {}))
    names = {"create_task", "update_task", "create_project"}
    routes = [r for r in app.routes if isinstance(r, TransactionalRoute) and r.name in names]
    assert len(routes) == len(names)
    assert all(r.direct_endpoint for r in routes)

    direct = _answers(admin, requests)
    for route in routes:  # the same routes, through FastAPI's request handler
        monkeypatch.setattr(route, "direct_endpoint", None)
        handler = request_response(route.get_route_handler())
        monkeypatch.setattr(route, "app", AsyncExitStackMiddleware(handler))
    through_fastapi = _answers(admin, requests)

    for request, ours, theirs in zip(requests, direct, through_fastapi, strict=True):
        if request[2].startswith(b'{"name":"ok"'):
            assert [ours[1]["data"]["key"], theirs[1]["data"]["key"]] == ["RT-2", "RT-3"]
            ours[1]["data"], theirs[1]["data"] = {}, {}
        assert ours == theirs, request[:3]
    assert {status for status, _ in direct} >= {201, 400, 412}


def test_behind_a_root_path_the_same_rules_hold(settings: Settings, database: Database) -> None:
    """Mounted under a prefix (`--root-path`), paths are read less the prefix: fixed routes
    still answer 405, and the rate limit still counts.
    """
    limited = settings.model_copy(update={"rate_limit": "3/minute"})
    key = make_org_admin(database)
    with TestClient(create_app(limited, database=database), root_path="/sb") as client:
        headers = {"Authorization": f"Bearer {key}"}
        refused = client.get("/sb/api/v1/tasks/bulk-update", headers=headers)
        assert refused.status_code == 405, refused.text
        assert refused.headers["Allow"] == "POST"
        statuses = [client.get("/sb/api/v1/me", headers=headers).status_code for _ in range(3)]
        assert statuses == [200, 200, 429]


def test_a_handler_that_suspends_is_an_error_not_a_hang(
    settings: Settings, database: Database
) -> None:
    """Requests run as one synchronous call (in a thread on PostgreSQL), which holds only
    while handlers never suspend: one that does is refused with the 500 envelope, and its
    transaction is rolled back."""
    router = api_router()

    @router.post("/suspending")
    async def suspending(session: SessionDep) -> Response:
        session.add(Workspace(name="never"))
        session.flush()
        await asyncio.sleep(0)
        return Response(status_code=204)

    app = create_app(settings, database=database)
    app.router.routes.extend(router.routes)
    key = make_org_admin(database)
    with TestClient(app, raise_server_exceptions=False) as client:
        answer = client.post(
            "/api/v1/suspending", json={}, headers={"Authorization": f"Bearer {key}"}
        )
    assert answer.status_code == 500
    assert answer.json()["error"]["code"] == "INTERNAL"
    with database.transaction() as session:
        assert session.scalar(select(func.count()).select_from(Workspace)) == 0
