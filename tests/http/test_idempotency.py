"""`Idempotency-Key`: a repeated POST replays the first response and creates nothing."""

import asyncio
from datetime import timedelta

import httpx
from sqlalchemy import func, select, update

from sprintboard.db import Database
from sprintboard.http.idempotency import ABANDONED_AFTER
from sprintboard.models import ApiKey, IdempotentRequest, Workspace, utcnow
from tests.factories import Api, make_org_admin


def count_workspaces(database: Database) -> int:
    with database.session(write=False) as session:
        return session.scalar(select(func.count()).select_from(Workspace)) or 0


def test_a_repeat_replays_the_first_response(admin: Api, database: Database) -> None:
    headers = {"Idempotency-Key": "create-ws-1"}
    first = admin.post("/workspaces", {"name": "Once"}, headers=headers)
    again = admin.post("/workspaces", {"name": "Once"}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["content-type"] == first.headers["content-type"]
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["X-Request-Id"] != first.headers["X-Request-Id"]
    assert count_workspaces(database) == 1


def test_the_same_key_with_another_body_is_409(admin: Api, database: Database) -> None:
    headers = {"Idempotency-Key": "k"}
    assert admin.post("/workspaces", {"name": "A"}, headers=headers).status_code == 201
    reused = admin.post("/workspaces", {"name": "B"}, headers=headers)
    assert reused.status_code == 409
    assert reused.json()["error"]["code"] == "CONFLICT"
    assert reused.json()["error"]["details"]["reason"] == "idempotency_key_reused"
    assert count_workspaces(database) == 1


def test_keys_are_per_api_key(admin: Api, database: Database) -> None:
    other = admin.as_(make_org_admin(database))
    headers = {"Idempotency-Key": "shared-name"}
    assert admin.post("/workspaces", {"name": "A"}, headers=headers).status_code == 201
    assert other.post("/workspaces", {"name": "A"}, headers=headers).status_code == 201
    assert count_workspaces(database) == 2


def test_a_failed_request_is_not_remembered(admin: Api, database: Database) -> None:
    headers = {"Idempotency-Key": "retry-me"}
    invalid = admin.post("/workspaces", {"name": ""}, headers=headers)
    assert invalid.status_code == 400
    fixed = admin.post("/workspaces", {"name": "Fixed"}, headers=headers)
    assert fixed.status_code == 201
    assert count_workspaces(database) == 1


def test_without_the_header_every_post_creates(admin: Api, database: Database) -> None:
    for _ in range(2):
        assert admin.post("/workspaces", {"name": "Twice"}).status_code == 201
    assert count_workspaces(database) == 2


def test_an_unusable_key_is_400(admin: Api) -> None:
    response = admin.post("/workspaces", {"name": "A"}, headers={"Idempotency-Key": "x" * 256})
    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"field": "Idempotency-Key", "reason": "too_long"}


def test_an_unauthenticated_post_is_401_and_claims_nothing(admin: Api, database: Database) -> None:
    anonymous = admin.as_(None)
    response = anonymous.post("/workspaces", {"name": "A"}, headers={"Idempotency-Key": "k"})
    assert response.status_code == 401
    assert admin.post("/workspaces", {"name": "A"}, headers={"Idempotency-Key": "k"}).is_success


def test_a_repeat_with_a_key_expired_since_is_401(admin: Api, database: Database) -> None:
    created = admin.ok("POST", "/keys", {"name": "short-lived"})
    short_lived = admin.as_(created["key"])
    headers = {"Idempotency-Key": "before-expiry"}
    assert short_lived.post("/workspaces", {"name": "A"}, headers=headers).status_code == 201
    with database.transaction() as session:
        session.execute(
            update(ApiKey)
            .where(ApiKey.id == created["$id"])
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    for body in ({"name": "A"}, {"name": "B"}):  # the replay, and the 409 it would have been
        again = short_lived.post("/workspaces", body, headers=headers)
        assert again.status_code == 401, again.text
        assert "Idempotent-Replayed" not in again.headers


def test_concurrent_duplicates_create_one_record(admin: Api, database: Database) -> None:
    app = admin.client.app
    key = admin.key

    async def burst() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await asyncio.gather(
                *(
                    client.post(
                        "/api/v1/workspaces",
                        json={"name": "Racing"},
                        headers={"Authorization": f"Bearer {key}", "Idempotency-Key": "race"},
                    )
                    for _ in range(8)
                )
            )

    responses = asyncio.run(burst())
    assert [r.status_code for r in responses] == [201] * 8, [r.text for r in responses]
    assert len({r.json()["data"]["$id"] for r in responses}) == 1
    assert count_workspaces(database) == 1


def test_a_claim_abandoned_by_a_dead_process_is_taken_over(admin: Api, database: Database) -> None:
    body = {"name": "After crash"}
    assert admin.post("/workspaces", body, headers={"Idempotency-Key": "crash"}).is_success
    with database.transaction() as session:  # as if the first request had died mid-way
        session.execute(
            update(IdempotentRequest).values(
                status_code=None,
                response_body=None,
                created_at=utcnow() - ABANDONED_AFTER - timedelta(seconds=1),
            )
        )
        session.execute(Workspace.__table__.delete())
    retried = admin.post("/workspaces", body, headers={"Idempotency-Key": "crash"})
    assert retried.status_code == 201
    assert "Idempotent-Replayed" not in retried.headers
    assert count_workspaces(database) == 1


def test_keys_expire_after_24_hours(admin: Api, database: Database) -> None:
    headers = {"Idempotency-Key": "old"}
    assert admin.post("/workspaces", {"name": "Old"}, headers=headers).is_success
    with database.transaction() as session:
        session.execute(
            update(IdempotentRequest).values(created_at=utcnow() - timedelta(hours=24, seconds=1))
        )
    assert admin.post("/workspaces", {"name": "New"}, headers=headers).status_code == 201
    assert count_workspaces(database) == 2


def test_a_replayed_create_of_a_key_is_the_same_key_without_its_secret(
    admin: Api, database: Database
) -> None:
    headers = {"Idempotency-Key": "key-create"}
    first = admin.post("/keys", {"name": "ci"}, headers=headers)
    again = admin.post("/keys", {"name": "ci"}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json()["data"]["$id"] == first.json()["data"]["$id"]
    assert first.json()["data"]["key"].startswith("sb_")
    assert again.json()["data"]["key"] is None, "the secret is stored only as a hash"
    with database.session(write=False) as session:
        stored = session.scalars(select(IdempotentRequest.response_body)).all()
    assert all(first.json()["data"]["key"].encode() not in body for body in stored if body)
    assert admin.ok("GET", "/keys")["total"] == 2  # the test's own key and this one
