"""The HTTP envelope: errors for unknown routes, wrong methods, bad JSON, 500s and failed
commits; request ids; health probes; the OpenAPI document.
"""

import os
import re
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session

from sprintboard.http.middleware import new_request_id
from sprintboard.workspaces import service as workspace_service
from tests.factories import API, Api, make_workspace


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The error body's `details`, after checking the envelope's exact shape."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str)
    assert body["error"]["message"]
    details: dict[str, Any] = body["error"]["details"]
    return details


def test_unknown_path_is_a_404_envelope(admin: Api) -> None:
    assert_error(admin.get("/no-such-thing"), 404, "NOT_FOUND")
    assert_error(admin.client.get("/nowhere"), 404, "NOT_FOUND")


def test_unknown_path_needs_no_key(api: Api) -> None:
    assert_error(api.get("/no-such-thing"), 404, "NOT_FOUND")


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/workspaces", {"GET", "POST"}),
        ("DELETE", "/workspaces", {"GET", "POST"}),
        ("PUT", "/workspaces/some-id", {"GET", "PATCH", "DELETE"}),
        ("POST", "/projects/some-id", {"GET", "PATCH", "DELETE"}),
        ("DELETE", "/me", {"GET", "PATCH"}),
        ("PUT", "/keys/some-id", {"DELETE"}),
    ],
)
def test_wrong_method_is_405_with_every_allowed_method(
    admin: Api, method: str, path: str, allowed: set[str]
) -> None:
    response = admin.request(method, path)
    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    listed = {m.strip() for m in response.headers["allow"].split(",")}
    assert listed == allowed


def test_malformed_json_is_invalid_json(admin: Api) -> None:
    response = admin.post(
        "/workspaces", content=b'{"name": "x",', headers={"Content-Type": "application/json"}
    )
    details = assert_error(response, 400, "INVALID_REQUEST")
    assert details["reason"] == "invalid_json"
    assert details["field"] == "body"


def test_body_that_is_not_an_object_is_invalid_type(admin: Api) -> None:
    details = assert_error(admin.post("/workspaces", json=["name"]), 400, "INVALID_REQUEST")
    assert details == {"field": "body", "reason": "invalid_type"}


def test_missing_body_is_required(admin: Api) -> None:
    details = assert_error(admin.post("/workspaces"), 400, "INVALID_REQUEST")
    assert details == {"field": "body", "reason": "required"}


def test_unknown_body_field_is_rejected(admin: Api) -> None:
    response = admin.post("/workspaces", {"name": "Team", "colour": "red"})
    details = assert_error(response, 400, "INVALID_REQUEST")
    assert details == {"field": "colour", "reason": "unknown_field"}
    assert admin.ok("GET", "/workspaces")["total"] == 0


@pytest.mark.parametrize("field", ["$id", "$createdAt", "$updatedAt"])
def test_server_owned_field_is_read_only(admin: Api, field: str) -> None:
    response = admin.post("/workspaces", {"name": "Team", field: "x"})
    details = assert_error(response, 400, "INVALID_REQUEST")
    assert details == {"field": field, "reason": "read_only"}


@pytest.mark.parametrize("path", ["/healthz", "/readyz", f"{API}/openapi.json", f"{API}/nope"])
def test_every_response_has_a_request_id(api: Api, path: str) -> None:
    first = api.client.get(path).headers["x-request-id"]
    second = api.client.get(path).headers["x-request-id"]
    assert first
    assert first != second


def test_request_id_on_api_success_and_errors(admin: Api, api: Api) -> None:
    responses = [
        admin.get("/workspaces"),
        admin.post("/workspaces", {"name": "ok"}),
        api.get("/workspaces"),
        admin.request("PUT", "/workspaces"),
        admin.post("/workspaces", {}),
    ]
    assert [r.status_code for r in responses] == [200, 201, 401, 405, 400]
    ids = [r.headers.get("x-request-id") for r in responses]
    assert all(ids)
    assert len(set(ids)) == len(ids)


def test_a_forked_process_draws_its_own_request_ids() -> None:
    """Ids are a per-process random half and a counter: a child forked after import (as a
    pre-forking server makes its workers) must not repeat its parent's ids."""
    parent = new_request_id()
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child reports through the pipe)
        try:
            os.write(writer, new_request_id().encode())
        finally:
            os._exit(0)
    os.close(writer)
    os.waitpid(child, 0)
    child_id = os.read(reader, 64).decode()
    os.close(reader)
    assert len(child_id) == len(parent) == 32
    assert child_id[:16] != parent[:16]
    assert new_request_id()[:16] == parent[:16]


def test_health_probes_need_no_key(api: Api) -> None:
    health = api.client.get("/healthz")
    assert health.status_code == 200
    assert health.json() == {"status": "ok"}
    ready = api.client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok"}


def test_readyz_reports_an_unreachable_database(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise OSError("connection refused")

    engine = api.client.app.state.database.engine  # type: ignore[attr-defined]
    monkeypatch.setattr(engine, "connect", refuse)
    assert api.client.get("/readyz").status_code == 503
    assert api.client.get("/healthz").status_code == 200


def _walk(node: Any) -> Any:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_openapi_document_is_3_1_without_422(api: Api) -> None:
    response = api.client.get(f"{API}/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.1")
    assert f"{API}/workspaces" in document["paths"]
    assert "post" in document["paths"][f"{API}/workspaces"]
    keys = set(_walk(document))
    assert "422" not in keys
    assert "HTTPValidationError" not in response.text
    for path_item in document["paths"].values():
        for operation in path_item.values():
            assert "422" not in operation.get("responses", {})


def test_openapi_documents_the_key_and_every_query_parameter(api: Api) -> None:
    """The bearer key and the query parameters that the route class, not FastAPI, reads."""
    document = api.client.get(f"{API}/openapi.json").json()
    schemes = document["components"]["securitySchemes"]
    assert schemes["HTTPBearer"]["scheme"] == "bearer"
    for path, path_item in document["paths"].items():
        for operation in path_item.values():
            expected = [{"HTTPBearer": []}] if path.startswith(f"{API}/") else None
            if path in {
                f"{API}/sessions",
                f"{API}/password-resets",
                f"{API}/password-resets/confirm",
                f"{API}/integrations/{{id}}/hooks",
            }:
                expected = []  # signing in, a reset, a forge's hook: the credential is the body's
                # (or its signature)
            if path == f"{API}/invitations/accept":
                expected = [{}, {"HTTPBearer": []}]  # a new account needs no key, one's own does
            assert operation.get("security") == expected, path
    for path, path_item in document["paths"].items():
        in_path = set(re.findall(r"\{(\w+)\}", path))
        for operation in path_item.values():
            documented = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
            assert documented == in_path, path
            assert all(p["required"] for p in operation.get("parameters", []) if p["in"] == "path")
    list_tasks = document["paths"][f"{API}/tasks"]["get"]
    parameters = {p["name"]: p for p in list_tasks["parameters"]}
    assert [p["name"] for p in list_tasks["parameters"]][-3:] == ["limit", "offset", "cursor"]
    assert set(parameters) == {
        "workspaceId", "projectId", "sprintId", "status", "statusCategory", "priority", "type",
        "assigneeId", "labels", "dueDate", "dueBefore", "dueAfter", "flagged", "search",
        "updatedSince", "parentId", "ancestorId", "q", "sort", "limit", "offset", "cursor",
    }  # fmt: skip
    assert all(p["in"] == "query" for p in parameters.values())
    # (`workspaceId` or `projectId`: a rule the description names, not a required parameter)
    assert [name for name, p in parameters.items() if p["required"]] == []
    assert "`workspaceId` or `projectId` is required" in list_tasks["description"]
    assert parameters["limit"]["schema"]["maximum"] == 500
    assert parameters["dueDate"]["schema"]["anyOf"][0]["format"] == "date"


def test_docs_page_is_served(api: Api) -> None:
    response = api.client.get("/docs")
    assert response.status_code == 200
    assert "text/html" in response.headers["content-type"]


def test_unexpected_error_is_a_500_envelope_without_traceback(
    admin: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(workspace_service, "list_workspaces", explode)
    response = admin.get("/workspaces")
    details = assert_error(response, 500, "INTERNAL")
    assert details == {"requestId": response.headers["x-request-id"]}
    assert "secret internal detail" not in response.text
    assert "Traceback" not in response.text
    assert "RuntimeError" not in response.text
    # Like every response, it shows the key's budget (one request spent).
    before = admin.get("/me").headers
    assert_error(admin.get("/workspaces"), 500, "INTERNAL")
    after = admin.get("/me").headers
    failed = admin.get("/workspaces").headers
    assert failed["ratelimit-limit"] == before["ratelimit-limit"]
    remaining = [int(h["ratelimit-remaining"]) for h in (before, after, failed)]
    assert (remaining[0] - remaining[1], remaining[1] - remaining[2]) == (2, 1)
    assert int(failed["ratelimit-reset"]) >= 1


def test_a_500_rolls_back_the_request(admin: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    original = workspace_service.create_workspace

    def create_then_fail(*args: Any, **kwargs: Any) -> Any:
        original(*args, **kwargs)
        raise RuntimeError("after the insert")

    monkeypatch.setattr(workspace_service, "create_workspace", create_then_fail)
    assert_error(admin.post("/workspaces", {"name": "Ghost"}), 500, "INTERNAL")
    monkeypatch.undo()
    assert admin.ok("GET", "/workspaces") == {"documents": [], "total": 0, "nextCursor": None}


def test_failing_commit_is_an_error_not_a_200(admin: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    original_commit = Session.commit
    failures = []

    def failing_commit(self: Session) -> None:
        if not failures:
            failures.append(True)
            raise RuntimeError("disk full")
        original_commit(self)

    monkeypatch.setattr(Session, "commit", failing_commit)
    response = admin.post("/workspaces", {"name": "Lost"})
    assert failures == [True]
    details = assert_error(response, 500, "INTERNAL")
    assert details["requestId"] == response.headers["x-request-id"]
    monkeypatch.undo()
    assert admin.ok("GET", "/workspaces") == {"documents": [], "total": 0, "nextCursor": None}


def test_security_headers_on_responses(admin: Api) -> None:
    response = admin.get("/workspaces")
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_timestamps_are_utc_with_milliseconds(admin: Api) -> None:
    workspace = make_workspace(admin)
    for field in ("$createdAt", "$updatedAt"):
        value = workspace[field]
        assert value.endswith("Z")
        assert len(value) == len("2026-11-22T09:30:00.000Z")
        assert value[19] == "."


def test_docs_load_their_scripts_and_styles_from_the_service_itself(api: Api) -> None:
    page = api.client.get("/docs").text
    sources = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", page)
    assert sources, page
    assert not [s for s in sources if "//" in s], sources  # no other host, no scheme
    assert not re.search(r"https?://", page.replace("http://testserver", ""))
    for source in sources:
        response = api.client.get(source)
        assert response.status_code == 200, source
        assert response.content
    assert api.client.get("/docs/assets/LICENSE").status_code == 404  # only the three files
    assert api.client.get("/docs/oauth2-redirect").status_code == 200
