"""No existence leaks across workspaces: every route the app registers, called by someone who
is not a member of the workspace that owns the objects, answers 404.

The walker reads the routes from `app.routes`, so a new route is covered (or fails loudly)
without anyone remembering this file. To cover a new route, extend one of:
  PATH_PARAMS   a new `{param}` in a path: which object of workspace A it names;
  BODIES        a POST/PATCH route: a body valid in shape, so validation does not answer first;
  QUERIES       a route scoped by query string (`GET /tasks?workspaceId=`);
  EXEMPT        a route that is not workspace-scoped at all (say why).
"""

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from starlette.routing import BaseRoute

from tests.factories import API, Api, add_member, make_project, make_user, make_workspace

EXEMPT: dict[str, str] = {
    "/healthz": "process probe, unauthenticated",
    "/readyz": "database probe, unauthenticated",
    "/docs": "documentation",
    "/docs/oauth2-redirect": "documentation",
    "/docs/assets/{name}": "documentation (Swagger UI's scripts and styles)",
    f"{API}/openapi.json": "documentation",
    f"{API}/me": "the caller themselves",
    f"{API}/me/password": "the caller's own password",
    f"{API}/password-resets": "by email, unauthenticated, always 202 (test_password_resets)",
    f"{API}/password-resets/confirm": "by token, unauthenticated (test_password_resets)",
    f"{API}/invitations/accept": "by token: whoever holds it joins (test_invitations)",
    f"{API}/audit": "organization admins only, not workspace-scoped (test_audit)",
    f"{API}/audit/verify": "organization admins only, not workspace-scoped (test_audit)",
    f"{API}/keys": "the caller's own keys",
    f"{API}/keys/{{keyId}}": "the caller's own keys (tested in test_identity)",
    f"{API}/users": "organization admin panel, not workspace-scoped",
    f"{API}/users/{{userId}}": "organization admin panel, not workspace-scoped",
    f"{API}/users/{{userId}}/keys": "organization admin panel, not workspace-scoped",
    f"{API}/workspaces": "lists only the caller's own; creating needs no membership",
    f"{API}/notifications": "the caller's own inbox",
    f"{API}/notifications/read-all": "the caller's own inbox",
    f"{API}/notifications/{{id}}/read": "the caller's own inbox",
    f"{API}/sessions": "exchanges the caller's own key for a browser session",
    f"{API}/sessions/current": "the caller's own browser session",
    f"{API}/events/stream": "an endless stream; its 404 for non-members is in test_stream",
    "/mcp": "the MCP endpoint: each tool is an API call with the caller's key (test_mcp)",
    f"{API}/meta/work-items": "the registry of work item fields: the same for every caller",
    f"{API}/integrations/{{id}}/hooks": "the forge's, signed not keyed: 404/401 (test_hooks)",
}

# What a path parameter names, by (path prefix, parameter); prefix "" matches any path.
PATH_PARAMS: dict[tuple[str, str], str] = {
    (f"{API}/workspaces/", "id"): "workspace",
    (f"{API}/projects/", "id"): "project",
    (f"{API}/projects/", "projectId"): "project",
    (f"{API}/workspaces/", "name"): "type",
    (f"{API}/projects/", "name"): "status",
    (f"{API}/webhooks/", "id"): "webhook",
    (f"{API}/fields/", "id"): "field",
    (f"{API}/invitations/", "invitationId"): "invitation",
    (f"{API}/integrations/", "id"): "integration",
    ("", "userId"): "member",
    ("", "taskId"): "task",
    ("", "sprintId"): "sprint",
    ("", "commentId"): "comment",
    ("", "deliveryId"): "delivery",
    ("", "relationId"): "relation",
    ("", "viewId"): "view",
}

# Request bodies, by (method, path template); `{workspace}` etc. name objects of workspace A.
BODIES: dict[tuple[str, str], Any] = {
    ("PATCH", f"{API}/workspaces/{{id}}"): {"name": "Hijacked"},
    ("POST", f"{API}/workspaces/{{id}}/members"): {"userId": "{outsider}", "role": "ADMIN"},
    ("PATCH", f"{API}/workspaces/{{id}}/members/{{userId}}"): {"role": "VIEWER"},
    ("POST", f"{API}/workspaces/{{id}}/invitations"): {"email": "hijack@example.com"},
    ("POST", f"{API}/workspaces/{{id}}/work-item-types"): {"name": "HIJACK"},
    ("POST", f"{API}/workspaces/{{id}}/views"): {"name": "Hijack", "query": ""},
    ("PATCH", f"{API}/views/{{viewId}}"): {"name": "Hijacked"},
    ("POST", f"{API}/workspaces/{{id}}/projects"): {"name": "Hijack"},
    ("POST", f"{API}/workspaces/{{id}}/webhooks"): {
        "url": "https://example.com/hook",
        "events": ["task.created"],
    },
    ("PATCH", f"{API}/webhooks/{{id}}"): {"url": "https://example.com/hijacked"},
    ("POST", f"{API}/workspaces/{{id}}/integrations"): {"provider": "github"},
    ("PATCH", f"{API}/integrations/{{id}}"): {"name": "Hijacked"},
    ("POST", f"{API}/webhooks/{{id}}/test"): {},
    ("POST", f"{API}/webhooks/{{id}}/deliveries/{{deliveryId}}/redeliver"): {},
    ("PATCH", f"{API}/projects/{{id}}"): {"name": "Hijacked"},
    ("POST", f"{API}/workspaces/{{id}}/fields"): {"key": "hijack", "name": "H", "type": "text"},
    ("PATCH", f"{API}/fields/{{id}}"): {"name": "Hijacked"},
    ("POST", f"{API}/projects/{{id}}/statuses"): {"name": "HIJACK", "category": "TODO"},
    ("PATCH", f"{API}/projects/{{id}}/statuses/{{name}}"): {"label": "Hijacked"},
    ("PUT", f"{API}/projects/{{id}}/workflow"): {"transitions": None},
    ("POST", f"{API}/tasks"): {
        "name": "Hijack",
        "workspaceId": "{workspace}",
        "projectId": "{project}",
    },
    ("POST", f"{API}/tasks/bulk-update"): {"tasks": [{"$id": "{task}", "status": "DONE"}]},
    ("POST", f"{API}/tasks/bulk-create"): {
        "tasks": [{"name": "Hijack", "workspaceId": "{workspace}", "projectId": "{project}"}]
    },
    ("POST", f"{API}/tasks/{{taskId}}/relations"): {"type": "relates_to", "targetId": "{task}"},
    ("PATCH", f"{API}/tasks/{{taskId}}"): {"title": "Hijacked"},
    ("POST", f"{API}/tasks/{{taskId}}/comments"): {"body": "Hijack"},
    ("PATCH", f"{API}/comments/{{commentId}}"): {"body": "Hijacked"},
    ("POST", f"{API}/tasks/{{taskId}}/time-logs"): {"hours": 1, "date": "2026-01-02"},
    ("POST", f"{API}/sprints"): {
        "name": "Hijack",
        "workspaceId": "{workspace}",
        "projectId": "{project}",
    },
    ("POST", f"{API}/sprints/reorder"): {"sprints": [{"$id": "{sprint}", "position": 1}]},
    ("PATCH", f"{API}/sprints/{{sprintId}}"): {"name": "Hijacked"},
    ("POST", f"{API}/sprints/{{sprintId}}/complete"): {},
}

# Query strings of routes scoped by query (each is tried), by (method, path template).
QUERIES: dict[tuple[str, str], list[str]] = {
    ("GET", f"{API}/tasks"): [
        "workspaceId={workspace}",
        "workspaceId={workspace}&projectId={project}",
    ],
    ("GET", f"{API}/sprints"): ["workspaceId={workspace}", "projectId={project}"],
    ("GET", f"{API}/events"): ["workspaceId={workspace}"],
}

BODYLESS_POSTS = frozenset({("POST", f"{API}/sprints/{{sprintId}}/complete")})


def registered_routes(app: FastAPI) -> Iterator[tuple[str, str]]:
    """(method, full path template) of every route, HEAD aside.

    FastAPI keeps included routers as nested entries of `app.routes`; each exposes its
    routes' effective (prefixed) paths.
    """

    def walk(routes: list[BaseRoute]) -> Iterator[tuple[str, set[str]]]:
        for route in routes:
            contexts: Callable[[], list[Any]] | None = getattr(
                route, "effective_route_contexts", None
            )
            if contexts is not None:
                for context in contexts():
                    yield context.path, set(context.original_route.methods or ())
            else:
                yield getattr(route, "path", repr(route)), set(getattr(route, "methods", ()))

    for path, methods in walk(list(app.routes)):
        for method in sorted(methods - {"HEAD"}):
            yield method, path


def _param_names(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{")]


def _object_for(path: str, param: str) -> str:
    for (prefix, name), what in PATH_PARAMS.items():
        if name == param and path.startswith(prefix):
            return what
    pytest.fail(
        f"{path}: path parameter {{{param}}} is unknown to the tenancy walker. Add it to "
        "PATH_PARAMS in tests/http/test_tenancy.py (which object of workspace A it names), and "
        "create such an object in `workspace_a`."
    )


def _fill(value: Any, objects: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**objects)
    if isinstance(value, list):
        return [_fill(v, objects) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, objects) for k, v in value.items()}
    return value


def requests_for(method: str, path: str, objects: dict[str, str]) -> list[tuple[str, Any]]:
    """The (url, body) pairs to try for one route against the objects of workspace A."""
    url = path
    for param in _param_names(path):
        url = url.replace(f"{{{param}}}", objects[_object_for(path, param)])
    body = None
    if method in ("POST", "PATCH", "PUT"):
        if (method, path) not in BODIES:
            pytest.fail(
                f"{method} {path}: no request body for the tenancy walker. Add a body of a "
                "valid shape to BODIES in tests/http/test_tenancy.py (else validation answers "
                "400 before access is checked)."
            )
        body = _fill(BODIES[(method, path)], objects)
    if (method, path) in QUERIES:
        return [(f"{url}?{_fill(q, objects)}", body) for q in QUERIES[(method, path)]]
    if not _param_names(path) and body is None:
        pytest.fail(
            f"{method} {path}: not scoped by path, and the tenancy walker has no query or "
            "body template for it. Add it to QUERIES (or to BODIES, if the body names the "
            "workspace), or to EXEMPT with a reason, in tests/http/test_tenancy.py."
        )
    urls = [url]
    if "{taskId}" in path:  # a work item is addressable by its key too
        urls.append(path.replace("{taskId}", objects["task_key"]))
        urls = [u for u in urls if "{" not in u]
    return [(u, body) for u in urls]


def _scoped_by_body(method: str, path: str) -> bool:
    return (method, path) in BODIES and not _param_names(path) and (method, path) not in QUERIES


@pytest.fixture
def workspace_a(admin: Api) -> tuple[Api, dict[str, str]]:
    """Workspace A with one object of each kind, and a client of its ADMIN (the owner)."""
    owner_user, owner = make_user(admin)
    workspace = make_workspace(owner)
    project = make_project(owner, workspace["$id"])
    member, _ = make_user(admin)
    add_member(owner, workspace["$id"], member["$id"], "MEMBER")
    sprint = owner.ok(
        "POST",
        "/sprints",
        {"name": "S1", "workspaceId": workspace["$id"], "projectId": project["$id"]},
    )
    owner.ok("PATCH", f"/sprints/{sprint['$id']}", {"status": "ACTIVE"})  # (it has a report)
    owner.ok("POST", f"/workspaces/{workspace['$id']}/work-item-types", {"name": "SPIKE"})
    task = owner.ok(
        "POST",
        "/tasks",
        {"name": "T1", "workspaceId": workspace["$id"], "projectId": project["$id"]},
    )
    comment = owner.ok("POST", f"/tasks/{task['$id']}/comments", {"body": "hello"})
    other = owner.ok(
        "POST",
        "/tasks",
        {"name": "T2", "workspaceId": workspace["$id"], "projectId": project["$id"]},
    )
    relation = owner.ok(
        "POST", f"/tasks/{task['$id']}/relations", {"type": "blocks", "targetId": other["$id"]}
    )
    webhook = owner.ok(
        "POST",
        f"/workspaces/{workspace['$id']}/webhooks",
        {"url": "https://example.com/a", "events": ["task.created"]},
    )
    ping = owner.ok("POST", f"/webhooks/{webhook['$id']}/test")
    invitation = owner.ok(
        "POST", f"/workspaces/{workspace['$id']}/invitations", {"email": "a@example.com"}
    )
    integration = owner.ok(
        "POST", f"/workspaces/{workspace['$id']}/integrations", {"provider": "gitlab"}
    )
    view = owner.ok(
        "POST", f"/workspaces/{workspace['$id']}/views", {"name": "V", "query": "", "shared": True}
    )
    field = owner.ok(
        "POST", f"/workspaces/{workspace['$id']}/fields", {"key": "k", "name": "K", "type": "text"}
    )
    objects = {
        "view": view["$id"],
        "workspace": workspace["$id"],
        "project": project["$id"],
        "member": member["$id"],
        "owner": owner_user["$id"],
        "sprint": sprint["$id"],
        "task": task["$id"],
        "task_key": task["key"],
        "comment": comment["$id"],
        "relation": relation["$id"],
        "webhook": webhook["$id"],
        "delivery": ping["$id"],
        "invitation": invitation["$id"],
        "integration": integration["$id"],
        "field": field["$id"],
        "type": "SPIKE",
        "status": "IN_REVIEW",
    }
    return owner, objects


def _snapshot(owner: Api, objects: dict[str, str]) -> dict[str, Any]:
    workspace = objects["workspace"]
    return {
        "workspace": owner.ok("GET", f"/workspaces/{workspace}"),
        "members": owner.ok("GET", f"/workspaces/{workspace}/members"),
        "types": owner.ok("GET", f"/workspaces/{workspace}/work-item-types"),
        "projects": owner.ok("GET", f"/workspaces/{workspace}/projects"),
        "webhooks": owner.ok("GET", f"/workspaces/{workspace}/webhooks"),
        "fields": owner.ok("GET", f"/workspaces/{workspace}/fields"),
        "invitations": owner.ok("GET", f"/workspaces/{workspace}/invitations"),
        "integrations": owner.ok("GET", f"/workspaces/{workspace}/integrations"),
        "views": owner.ok("GET", f"/workspaces/{workspace}/views"),
        "deliveries": owner.ok("GET", f"/webhooks/{objects['webhook']}/deliveries"),
        "sprint": owner.ok("GET", f"/sprints/{objects['sprint']}"),
        "task": owner.ok("GET", f"/tasks/{objects['task']}"),
        "tasks": owner.ok("GET", f"/tasks?workspaceId={workspace}"),
    }


def _outsider(kind: str, admin: Api, owner: Api, objects: dict[str, str]) -> tuple[Api, str]:
    """A caller who must not see workspace A, and their user id."""
    if kind == "org-admin":
        return admin, admin.ok("GET", "/me")["$id"]
    user, client = make_user(admin)
    own = make_workspace(client)
    make_project(client, own["$id"])
    if kind == "stranger":
        return client, user["$id"]
    # A member (even ADMIN) of A, calling with a key restricted to another workspace.
    add_member(owner, objects["workspace"], user["$id"], "ADMIN")
    key = client.ok("POST", "/keys", {"name": "other-ws", "workspaceId": own["$id"]})["key"]
    return admin.as_(key), user["$id"]


@pytest.mark.parametrize("kind", ["stranger", "org-admin", "restricted-key"])
def test_every_route_hides_other_workspaces(
    admin: Api, app: FastAPI, workspace_a: tuple[Api, dict[str, str]], kind: str
) -> None:
    owner, objects = workspace_a
    outsider, outsider_id = _outsider(kind, admin, owner, objects)
    objects = {**objects, "outsider": outsider_id}
    before = _snapshot(owner, objects)

    walked = 0
    leaks: list[str] = []
    for method, path in registered_routes(app):
        if path in EXEMPT:
            continue
        for url, body in requests_for(method, path, objects):
            response = outsider.request(method, url, json=body)
            walked += 1
            if response.status_code != 404:
                leaks.append(f"{method} {url} -> {response.status_code} {response.text[:200]}")
                continue
            error = response.json()["error"]
            if error["code"] != "NOT_FOUND":
                leaks.append(f"{method} {url} -> 404 with code {error['code']}")
    assert not leaks, "\n".join(leaks)
    assert walked >= 30
    assert _snapshot(owner, objects) == before


def test_walker_sees_every_documented_operation(app: FastAPI, api: Api) -> None:
    """`registered_routes` reads FastAPI's route tree; check it against the OpenAPI document,
    so that a change in that tree cannot make the walker silently skip routes.
    """
    walked = set(registered_routes(app))
    documented = {
        (method.upper(), path)
        for path, item in api.client.get(f"{API}/openapi.json").json()["paths"].items()
        for method in item
    }
    assert documented
    assert documented <= walked, documented - walked


def test_every_route_is_known_to_the_walker(app: FastAPI) -> None:
    """Fails with instructions when a route appears that the walker cannot call."""
    objects: dict[str, str] = {
        name: f"<{name}>"
        for name in [*set(PATH_PARAMS.values()), "workspace", "task_key", "outsider", "owner"]
    }
    for method, path in registered_routes(app):
        if path in EXEMPT:
            continue
        assert requests_for(method, path, objects)
        if _scoped_by_body(method, path):
            body = BODIES[(method, path)]
            assert "{workspace}" in str(body) or "{task}" in str(body) or "{sprint}" in str(body)


def test_exempt_routes_exist(app: FastAPI) -> None:
    """A stale exemption would hide nothing, but also mean this file is out of date."""
    paths = {path for _, path in registered_routes(app)}
    assert set(EXEMPT) <= paths, set(EXEMPT) - paths


def test_the_walkers_urls_reach_the_objects(
    admin: Api, app: FastAPI, workspace_a: tuple[Api, dict[str, str]]
) -> None:
    """Control: the owner reads every object through the same URLs (so the 404s above come
    from access rules, not from URLs that name nothing).
    """
    owner, objects = workspace_a
    objects = {**objects, "outsider": objects["owner"]}
    misses = []
    for method, path in registered_routes(app):
        if method != "GET" or path in EXEMPT:
            continue
        for url, _ in requests_for(method, path, objects):
            response = owner.get(url)
            if response.status_code != 200:
                misses.append(f"GET {url} -> {response.status_code} {response.text[:200]}")
    assert not misses, "\n".join(misses)
