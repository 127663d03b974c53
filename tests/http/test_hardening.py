"""Media types, CORS, security headers and structured logs."""

import gc
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from starlette.middleware.gzip import GZipMiddleware
from starlette.testclient import TestClient

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.db import Database
from sprintboard.logs import JsonFormatter
from tests.factories import TEST_SECRET_KEY, Api, make_org_admin


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml", None]
)
def test_a_body_that_is_not_json_is_415(admin: Api, content_type: str | None) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    response = admin.post("/workspaces", content=b'{"name": "A"}', headers=headers)
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
    assert admin.ok("GET", "/workspaces")["total"] == 0


def test_a_patch_that_is_not_json_is_415(admin: Api) -> None:
    workspace = admin.ok("POST", "/workspaces", {"name": "A"})
    response = admin.patch(
        f"/workspaces/{workspace['$id']}", content=b"name=B", headers={"Content-Type": "text/plain"}
    )
    assert response.status_code == 415


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "Application/JSON", "application/json;"]
)
def test_json_with_parameters_is_accepted(admin: Api, content_type: str) -> None:
    response = admin.post(
        "/workspaces", content=b'{"name": "A"}', headers={"Content-Type": content_type}
    )
    assert response.status_code == 201, response.text


def test_an_empty_body_needs_no_content_type(admin: Api) -> None:
    response = admin.request("POST", "/notifications/read-all")
    assert response.status_code == 200, response.text


def test_malformed_json_is_400_invalid_json(admin: Api) -> None:
    response = admin.post(
        "/workspaces", content=b'{"name": ', headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error"]["details"]["reason"] == "invalid_json"


def test_security_headers_and_request_id_on_every_response(admin: Api) -> None:
    responses = [
        admin.get("/me"),
        admin.get("/workspaces/missing"),
        admin.client.get("/healthz"),
        admin.client.get("/nowhere"),
        admin.as_(None).get("/me"),
    ]
    request_ids = set()
    for response in responses:
        assert response.headers["Cache-Control"] == "no-store"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        request_ids.add(response.headers["X-Request-Id"])
    assert len(request_ids) == len(responses)


def test_405_names_the_allowed_methods(admin: Api) -> None:
    response = admin.request("PUT", "/workspaces")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
    assert set(response.headers["Allow"].split(", ")) == {"GET", "POST"}


def test_cors_is_off_by_default(admin: Api) -> None:
    preflight = admin.client.options(
        "/api/v1/workspaces",
        headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
    )
    simple = admin.get("/me", headers={"Origin": "https://app.example"})
    assert "access-control-allow-origin" not in preflight.headers
    assert "access-control-allow-origin" not in simple.headers


@pytest.fixture
def cors_api(settings: Settings, database: Database) -> Iterator[Api]:
    configured = settings.model_copy(update={"cors_origins": ["https://app.example"]})
    with TestClient(create_app(configured, database=database)) as client:
        yield Api(client, make_org_admin(database))


def test_cors_allows_the_configured_origins(cors_api: Api) -> None:
    preflight = cors_api.client.options(
        "/api/v1/workspaces",
        headers={
            "Origin": "https://app.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "Authorization, Content-Type, Idempotency-Key",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://app.example"
    response = cors_api.get("/me", headers={"Origin": "https://app.example"})
    assert response.headers["access-control-allow-origin"] == "https://app.example"
    exposed = response.headers["access-control-expose-headers"].lower()
    assert "ratelimit-remaining" in exposed
    assert "x-request-id" in exposed
    other = cors_api.get("/me", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers


def test_cors_origins_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPRINTBOARD_CORS_ORIGINS", "https://a.example, https://b.example")
    assert Settings().cors_origins == ["https://a.example", "https://b.example"]
    monkeypatch.setenv("SPRINTBOARD_CORS_ORIGINS", '["https://c.example"]')
    assert Settings().cors_origins == ["https://c.example"]


def json_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    formatter = JsonFormatter()
    return [json.loads(formatter.format(record)) for record in caplog.records]


def test_one_json_access_line_per_request_without_secrets(
    admin: Api, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, "sprintboard.access"):
        response = admin.get("/workspaces?limit=5", headers={"X-Secret": "s3cr3t"})
    lines = [line for line in json_lines(caplog) if line["logger"] == "sprintboard.access"]
    assert len(lines) == 1
    line = lines[0]
    assert line["method"] == "GET"
    assert line["path"] == "/api/v1/workspaces"
    assert line["status"] == 200
    assert line["request_id"] == response.headers["X-Request-Id"]
    assert isinstance(line["duration_ms"], float)
    assert line["level"] == "INFO"
    text = caplog.text + json.dumps(lines)
    assert admin.key is not None
    assert admin.key not in text
    assert admin.key[3:13] not in text
    assert "s3cr3t" not in text


def test_a_500_is_logged_with_its_request_id_and_no_trace_in_the_response(
    settings: Settings, database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(settings, database=database)

    @app.get("/api/v1/boom")
    async def boom() -> None:
        raise RuntimeError("kaboom")

    with (
        caplog.at_level(logging.INFO),
        TestClient(app, raise_server_exceptions=False) as client,
    ):
        response = client.get("/api/v1/boom")
    assert response.status_code == 500
    request_id = response.headers["X-Request-Id"]
    assert response.json()["error"]["details"] == {"requestId": request_id}
    assert "kaboom" not in response.text
    access = [line for line in json_lines(caplog) if line["logger"] == "sprintboard.access"]
    assert access[-1]["status"] == 500
    assert access[-1]["request_id"] == request_id
    # The route's own failure, logged with the request id (a route added after `create_app`
    # is served like any other).
    errors = [line for line in json_lines(caplog) if line["level"] == "ERROR"]
    assert errors[-1]["request_id"] == request_id
    assert "RuntimeError: kaboom" in errors[-1]["exception"]


def test_middleware_goes_into_the_app_s_own_stack(settings: Settings, database: Database) -> None:
    """`app.add_middleware` would be silently left out of the stack `create_app` builds."""
    app = create_app(settings, database=database)
    app.add_middleware(GZipMiddleware)
    with pytest.raises(RuntimeError, match="middleware_stack"), TestClient(app):
        pass


def test_the_log_level_comes_from_settings(settings: Settings, database: Database) -> None:
    create_app(settings.model_copy(update={"log_level": "WARNING"}), database=database)
    try:
        assert logging.getLogger().level == logging.WARNING
    finally:
        logging.getLogger().setLevel(logging.INFO)


def test_a_started_app_freezes_its_start_up_objects(database: Database) -> None:
    """`gc_freeze` (on by default): once started, the collector leaves start-up's objects be."""
    gc.unfreeze()
    on = Settings(database_url=database.url, deliver_events=False, secret_key=TEST_SECRET_KEY)
    app = create_app(on, database=database)
    try:
        assert gc.get_freeze_count() == 0
        with TestClient(app):
            assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    off = on.model_copy(update={"gc_freeze": False})
    with TestClient(create_app(off, database=database)):
        assert gc.get_freeze_count() == 0


class _RecordingTracerProvider(trace.TracerProvider):
    """A configured provider (neither a proxy nor a no-op one) that counts its tracers."""

    def __init__(self) -> None:
        self.tracers = 0

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        self.tracers += 1
        return trace.NoOpTracer()


@pytest.mark.parametrize("enabled", [True, False])
def test_opentelemetry_follows_the_setting(
    settings: Settings, database: Database, monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    """`SPRINTBOARD_OPENTELEMETRY`: FastAPI's telemetry uses a configured provider only when on."""
    provider = _RecordingTracerProvider()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    app = create_app(settings.model_copy(update={"opentelemetry": enabled}), database=database)
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
    assert (provider.tracers > 0) is enabled
