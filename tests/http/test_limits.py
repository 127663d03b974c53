"""Rate limits (per API key, shared through Redis across instances) and size limits."""

import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from starlette.testclient import TestClient

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.db import Database
from sprintboard.http.guards import MAX_BODY_BYTES
from tests.factories import Api, make_org_admin, make_workspace
from tests.servers import free_port

REDIS_URL = "redis://127.0.0.1:6379/0"


def client_of(settings: Settings, database: Database, **overrides: Any) -> TestClient:
    app = create_app(settings.model_copy(update=overrides), database=database)
    return TestClient(app, base_url="http://testserver")


@pytest.fixture
def limited(settings: Settings, database: Database) -> Iterator[Api]:
    """A client of an app allowing 3 requests per key per minute, holding an admin key."""
    with client_of(settings, database, rate_limit="3/minute") as client:
        yield Api(client, make_org_admin(database))


def test_every_authenticated_response_carries_the_budget(admin: Api) -> None:
    first = admin.get("/me")
    second = admin.get("/workspaces/nope")
    assert first.status_code == 200
    assert second.status_code == 404
    assert first.headers["RateLimit-Limit"] == "600"
    assert int(first.headers["RateLimit-Remaining"]) == 599
    assert int(second.headers["RateLimit-Remaining"]) == 598
    assert 0 < int(first.headers["RateLimit-Reset"]) <= 60


def test_over_the_limit_is_429_with_retry_after(limited: Api) -> None:
    statuses = [limited.get("/me").status_code for _ in range(3)]
    refused = limited.get("/me")
    assert statuses == [200, 200, 200]
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "RATE_LIMITED"
    retry_after = int(refused.headers["Retry-After"])
    assert 0 < retry_after <= 60
    assert error["details"]["retryAfter"] == retry_after
    assert refused.headers["RateLimit-Remaining"] == "0"
    assert refused.headers["X-Request-Id"]


def test_each_key_has_its_own_budget(limited: Api, database: Database) -> None:
    for _ in range(3):
        limited.get("/me")
    assert limited.get("/me").status_code == 429
    other = limited.as_(make_org_admin(database))
    assert other.get("/me").status_code == 200


def test_one_users_keys_share_one_budget(limited: Api) -> None:
    """The budget is the user's: a second key of theirs draws on the same one, so minting
    keys buys no more requests (the audit found each key had a budget of its own)."""
    minted = limited.post("/keys", json={"name": "second"})
    assert minted.status_code == 201
    assert minted.headers["RateLimit-Remaining"] == "2"
    second = limited.as_(minted.json()["data"]["key"])
    assert second.get("/me").headers["RateLimit-Remaining"] == "1"
    assert limited.get("/me").headers["RateLimit-Remaining"] == "0"
    refused = second.get("/me")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "RATE_LIMITED"


def test_public_routes_are_not_limited(limited: Api) -> None:
    for _ in range(5):
        assert limited.client.get("/healthz").status_code == 200
        assert limited.client.get("/api/v1/openapi.json").status_code == 200


def test_public_routes_show_the_address_budget(settings: Settings, database: Database) -> None:
    """Every response carries the rate-limit headers: on routes that need no key, those of
    the address's budget of failed authentications, which they do not spend."""
    with client_of(settings, database, auth_failure_limit="5/minute") as client:
        assert Api(client).get("/me").status_code == 401
        for path in ("/healthz", "/readyz", "/api/v1/openapi.json", "/docs", "/nowhere"):
            response = client.get(path)
            assert response.headers["RateLimit-Limit"] == "5", path
            assert response.headers["RateLimit-Remaining"] == "4", path
            assert 0 < int(response.headers["RateLimit-Reset"]) <= 60


def test_a_request_without_a_key_shows_its_address_budget(
    settings: Settings, database: Database
) -> None:
    with client_of(settings, database, auth_failure_limit="5/minute") as client:
        first = Api(client).get("/me")
        second = Api(client).get("/workspaces")
    assert first.status_code == second.status_code == 401
    assert first.headers["RateLimit-Limit"] == "5"
    assert first.headers["RateLimit-Remaining"] == "4"  # (this failure counted)
    assert second.headers["RateLimit-Remaining"] == "3"


def test_a_key_that_fails_to_authenticate_shows_the_address_budget(
    settings: Settings, database: Database
) -> None:
    """Its 401 counts against the address, and shows that budget: the one that will answer
    429, not the budget of a key that does not exist."""
    with client_of(settings, database, auth_failure_limit="2/minute") as client:
        bad = Api(client).as_("sb_" + "x" * 43)
        answers = [bad.get("/me") for _ in range(3)]
    assert [a.status_code for a in answers] == [401, 401, 429]
    assert [a.headers["RateLimit-Limit"] for a in answers] == ["2", "2", "2"]
    assert [a.headers["RateLimit-Remaining"] for a in answers] == ["1", "0", "0"]


def test_failed_authentications_are_limited_per_address(
    settings: Settings, database: Database
) -> None:
    with client_of(settings, database, auth_failure_limit="3/minute") as client:
        api = Api(client)
        bad = "sb_" + "x" * 43
        assert [api.as_(bad).get("/me").status_code for _ in range(2)] == [401, 401]
        assert api.get("/me").status_code == 401  # no key at all counts too
        refused = api.as_(bad).get("/me")
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "RATE_LIMITED"
        assert int(refused.headers["Retry-After"]) > 0
        assert api.get("/me").status_code == 429  # no key at all: refused before any work
        # A valid key from the same address still works: only failures are held back.
        assert api.as_(make_org_admin(database)).get("/me").status_code == 200
        assert api.as_(bad).get("/me").status_code == 429


def test_a_redis_outage_counts_in_the_process(
    settings: Settings, database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis out: no error reaches the client, the instance counts on its own (headers and
    all), and the outage is logged once."""
    nowhere = f"redis://127.0.0.1:{free_port()}/0"
    with (
        caplog.at_level(logging.WARNING, "sprintboard.ratelimit"),
        client_of(settings, database, redis_url=nowhere, rate_limit="2/minute") as client,
    ):
        api = Api(client, make_org_admin(database))
        responses = [api.get("/me") for _ in range(3)]
    assert [r.status_code for r in responses] == [200, 200, 429]
    assert [r.headers["RateLimit-Remaining"] for r in responses] == ["1", "0", "0"]
    assert responses[0].headers["RateLimit-Limit"] == "2"
    warnings = [r for r in caplog.records if r.name == "sprintboard.ratelimit"]
    assert len(warnings) == 1, "an outage is logged once, not once per request"


@pytest.mark.redis
def test_instances_share_one_redis_budget(settings: Settings, database: Database) -> None:
    redis.Redis.from_url(REDIS_URL).ping()  # Redis down is a failure, not a skip
    shared = {
        "redis_url": REDIS_URL,
        "rate_limit": "10/minute",
        "rate_limit_prefix": f"sbtest-{uuid.uuid4().hex}",
    }
    with (
        client_of(settings, database, **shared) as one,
        client_of(settings, database, **shared) as two,
    ):
        key = make_org_admin(database)
        apis = [Api(one, key), Api(two, key)]
        statuses = [apis[i % 2].get("/me").status_code for i in range(16)]
        other_key = Api(two, make_org_admin(database)).get("/me")
    assert statuses.count(200) == 10
    assert statuses.count(429) == 6
    assert statuses[:10] == [200] * 10
    assert other_key.status_code == 200
    assert other_key.headers["RateLimit-Remaining"] == "9"


@pytest.mark.redis
def test_redis_counts_failed_authentications_across_instances(
    settings: Settings, database: Database
) -> None:
    redis.Redis.from_url(REDIS_URL).ping()
    shared = {
        "redis_url": REDIS_URL,
        "auth_failure_limit": "4/minute",
        "rate_limit_prefix": f"sbtest-{uuid.uuid4().hex}",
    }
    with (
        client_of(settings, database, **shared) as one,
        client_of(settings, database, **shared) as two,
    ):
        statuses = [Api(c).get("/me").status_code for c in (one, two, one, two, one, two)]
    assert statuses == [401, 401, 401, 401, 429, 429]


def test_a_body_over_1_mib_is_413_unread(admin: Api) -> None:
    body = json.dumps({"name": "x", "description": "y" * MAX_BODY_BYTES}).encode()
    response = admin.post("/workspaces", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert admin.ok("GET", "/workspaces")["total"] == 0


def test_a_chunked_body_over_1_mib_is_413(admin: Api) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"name": "x", "description": "'
        for _ in range(20):
            yield b"y" * 65_536
        yield b'"}'

    response = admin.post(
        "/workspaces", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"


def test_a_chunked_body_within_the_limit_is_read(admin: Api) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"name": "chunked",'
        yield b' "description": "ok"}'

    response = admin.post(
        "/workspaces", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 201, response.text
    assert response.json()["data"]["name"] == "chunked"


def test_a_body_just_under_the_limit_is_accepted_as_far_as_size_goes(admin: Api) -> None:
    padding = MAX_BODY_BYTES - len(b'{"name": "x", "description": ""}')
    body = json.dumps({"name": "x", "description": "y" * padding}).encode()
    assert len(body) == MAX_BODY_BYTES
    response = admin.post("/workspaces", content=body, headers={"Content-Type": "application/json"})
    # Past the size check, the field limit (65,536 characters) answers.
    assert response.status_code == 400
    assert response.json()["error"]["details"]["reason"] == "too_long"


def test_deeply_nested_json_is_400_not_500(admin: Api) -> None:
    body = b"[" * 200_000 + b"]" * 200_000
    response = admin.post("/workspaces", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "INVALID_REQUEST"


def test_a_long_array_where_an_object_belongs_is_400(admin: Api) -> None:
    response = admin.post("/workspaces", json=list(range(100_000)))
    assert response.status_code == 400


@pytest.mark.parametrize("limit", [501, 0, -1])
def test_page_size_outside_1_to_500_is_400(admin: Api, limit: int) -> None:
    response = admin.get("/workspaces", params={"limit": limit})
    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"field": "limit", "reason": "out_of_range"}


def test_page_size_500_is_accepted(admin: Api) -> None:
    make_workspace(admin)
    assert admin.ok("GET", "/workspaces?limit=500")["total"] == 1


def test_a_nul_character_is_400_on_both_databases(admin: Api) -> None:
    response = admin.post("/workspaces", {"name": "a\u0000b"})
    assert response.status_code == 400
    assert response.json()["error"]["details"]["reason"] == "invalid_value"
    assert admin.ok("GET", "/workspaces")["total"] == 0


def test_a_nul_character_in_a_query_parameter_is_400_and_in_a_path_not_found(
    admin: Api,
) -> None:
    assert admin.get("/events?workspaceId=a%00b").status_code == 400
    for method, path in (("GET", "/workspaces/a%00b"), ("DELETE", "/keys/%00")):
        response = admin.request(method, path)
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "NOT_FOUND"
    assert admin.as_(None).get("/workspaces/a%00b").status_code == 401
