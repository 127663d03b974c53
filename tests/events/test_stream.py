"""The live change feed (contract §12), read through `httpx-sse` from real `sprintboard serve`
processes (a stream through an in-process test client is not a stream).

Every wait is bounded: a client's read timeout (shorter than the keep-alive interval, so a
stream that neither sends nor ends fails the test) or an explicit deadline.
"""

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from httpx_sse import EventSource, ServerSentEvent, connect_sse
from redis import Redis

from sprintboard.db import Database
from tests.events.test_delivery import wait_for
from tests.factories import API, make_org_admin, unique
from tests.http.test_limits import REDIS_URL
from tests.servers import Server, running_server

READ_TIMEOUT = 8.0
"""Seconds without a byte before a read fails: shorter than the default keep-alive (10 s)."""


class Client:
    """An API client of a running server, holding one key."""

    def __init__(self, server: Server, key: str | None) -> None:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.http = httpx.Client(
            base_url=server.base_url + API,
            headers=headers,
            timeout=httpx.Timeout(10, read=READ_TIMEOUT),
        )

    def ok(self, method: str, path: str, json: Any = None) -> Any:
        response = self.http.request(method, path, json=json)
        assert response.is_success, response.text
        return response.json()["data"]

    @contextmanager
    def stream(self, workspace_id: str, **headers: str) -> Iterator[EventSource]:
        params = {"workspaceId": workspace_id}
        if "after" in headers:
            params["after"] = headers.pop("after")
        with connect_sse(
            self.http, "GET", "/events/stream", params=params, headers=headers
        ) as source:
            yield source

    def close(self) -> None:
        self.http.close()


@pytest.fixture
def server(database_url: str) -> Iterator[Server]:
    with running_server(database_url) as running:
        yield running


@pytest.fixture
def admin_client(server: Server, database: Database) -> Iterator[Client]:
    client = Client(server, make_org_admin(database))
    yield client
    client.close()


def _new_user(admin: Client, server: Server) -> tuple[dict[str, Any], Client, dict[str, Any]]:
    name = unique("streamer")
    user = admin.ok("POST", "/users", {"name": name, "email": f"{name}@example.com"})
    key = admin.ok("POST", f"/users/{user['$id']}/keys", {"name": "stream"})
    return user, Client(server, key["key"]), key


def _board(admin: Client) -> tuple[str, str]:
    workspace = admin.ok("POST", "/workspaces", {"name": unique("ws")})
    project = admin.ok("POST", f"/workspaces/{workspace['$id']}/projects", {"name": "Live"})
    return workspace["$id"], project["$id"]


def _task(client: Client, workspace_id: str, project_id: str) -> Any:
    return client.ok(
        "POST",
        "/tasks",
        {"name": unique("t"), "workspaceId": workspace_id, "projectId": project_id},
    )


def _feed(client: Client, workspace_id: str) -> list[dict[str, Any]]:
    documents: list[dict[str, Any]] = client.ok(
        "GET", f"/events?workspaceId={workspace_id}&limit=500"
    )["documents"]
    return documents


def _next(events: Iterator[ServerSentEvent]) -> ServerSentEvent:
    return next(events)  # (bounded by the read timeout)


def _ends_within(events: Iterator[ServerSentEvent], seconds: float) -> bool:
    """Whether the server ends the stream within `seconds` (events meanwhile are skipped).
    `events` is the stream's one iterator (a response's lines can be read only once)."""
    ended = threading.Event()

    def read_to_the_end() -> None:
        for _ in events:
            pass
        ended.set()

    reader = threading.Thread(target=read_to_the_end, daemon=True)
    reader.start()
    if not ended.wait(seconds):
        return False
    reader.join()
    return True


def test_a_stream_replays_what_was_missed_then_goes_on_live(
    server: Server, admin_client: Client
) -> None:
    workspace_id, project_id = _board(admin_client)
    _task(admin_client, workspace_id, project_id)
    _task(admin_client, workspace_id, project_id)
    first, second = _feed(admin_client, workspace_id)
    with admin_client.stream(workspace_id, **{"Last-Event-ID": first["$id"]}) as source:
        assert source.response.headers["content-type"].startswith("text/event-stream")
        events = source.iter_sse()
        replayed = _next(events)
        assert (replayed.id, replayed.event) == (second["$id"], "task.created")
        assert replayed.json() == second  # exactly as GET /events gives it
        live = _task(admin_client, workspace_id, project_id)
        event = _next(events)
        assert event.event == "task.created"
        assert event.json()["subjectId"] == live["$id"]
        assert event.json() == _feed(admin_client, workspace_id)[-1]
        admin_client.ok("PATCH", f"/tasks/{live['$id']}", {"status": "DONE"})
        updated = _next(events)
        assert updated.event == "task.updated"
        assert updated.json()["payload"]["changes"]["status"] == {"from": "BACKLOG", "to": "DONE"}
    # `after` replays too; the header wins over it (a reconnecting browser sends the header
    # while its URL keeps the `after` it started with).
    with admin_client.stream(workspace_id, after=first["$id"]) as source:
        assert _next(source.iter_sse()).id == second["$id"]
    with admin_client.stream(
        workspace_id, after=first["$id"], **{"Last-Event-ID": second["$id"]}
    ) as source:
        assert _next(source.iter_sse()).json()["subjectId"] == live["$id"]


def test_only_members_get_a_stream(server: Server, admin_client: Client) -> None:
    workspace_id, _ = _board(admin_client)
    _, outsider, _ = _new_user(admin_client, server)
    try:
        refused = outsider.http.get("/events/stream", params={"workspaceId": workspace_id})
        assert refused.status_code == 404
        assert refused.json()["error"]["code"] == "NOT_FOUND"
        unknown = admin_client.http.get(
            "/events/stream", params={"workspaceId": workspace_id, "after": "nope"}
        )
        assert unknown.status_code == 400
        assert unknown.json()["error"]["details"] == {"field": "after", "reason": "not_found"}
        anonymous = httpx.get(f"{server.base_url}{API}/events/stream?workspaceId={workspace_id}")
        assert anonymous.status_code == 401
    finally:
        outsider.close()


def test_a_stream_ends_when_its_key_is_revoked_or_its_member_removed(
    server: Server, admin_client: Client
) -> None:
    workspace_id, project_id = _board(admin_client)
    user, member, key = _new_user(admin_client, server)
    try:
        admin_client.ok(
            "POST", f"/workspaces/{workspace_id}/members", {"userId": user["$id"], "role": "MEMBER"}
        )
        with member.stream(workspace_id) as source:
            events = source.iter_sse()
            _task(admin_client, workspace_id, project_id)
            assert _next(events).event == "task.created"
            admin_client.ok("DELETE", f"/keys/{key['$id']}")
            assert _ends_within(events, 10), "the stream outlived its key"
        second = admin_client.ok("POST", f"/users/{user['$id']}/keys", {"name": "again"})
        member.http.headers["Authorization"] = f"Bearer {second['key']}"
        with member.stream(workspace_id) as source:
            admin_client.ok("DELETE", f"/workspaces/{workspace_id}/members/{user['$id']}")
            assert _ends_within(source.iter_sse(), 10), "the stream outlived the membership"
    finally:
        member.close()


def test_a_browser_session_streams_with_its_cookie(server: Server, admin_client: Client) -> None:
    workspace_id, project_id = _board(admin_client)
    user, member, key = _new_user(admin_client, server)
    admin_client.ok(
        "POST", f"/workspaces/{workspace_id}/members", {"userId": user["$id"], "role": "VIEWER"}
    )
    browser = Client(server, None)
    try:
        signed_in = browser.http.post("/sessions", json={"key": key["key"]})
        assert signed_in.status_code == 201, signed_in.text
        with browser.stream(workspace_id) as source:
            events = source.iter_sse()
            created = _task(admin_client, workspace_id, project_id)
            assert _next(events).json()["subjectId"] == created["$id"]
            signed_out = browser.http.delete(
                "/sessions/current", headers={"Origin": server.base_url}
            )
            assert signed_out.status_code == 200, signed_out.text
            assert _ends_within(events, 10), "the stream outlived its session"
    finally:
        browser.close()
        member.close()


@pytest.mark.sqlite_only
def test_an_idle_stream_sends_keep_alive_comments(database_url: str, database: Database) -> None:
    with running_server(database_url, env={"SPRINTBOARD_STREAM_KEEPALIVE": "0.5"}) as server:
        admin = Client(server, make_org_admin(database))
        try:
            workspace_id, _ = _board(admin)
            with admin.stream(workspace_id) as source:
                lines = source.response.iter_lines()
                comments = 0
                while comments < 3:  # (each within the read timeout)
                    if next(lines).startswith(": keep-alive"):
                        comments += 1
        finally:
            admin.close()


@pytest.mark.redis
def test_with_redis_a_change_on_one_instance_reaches_a_stream_on_another(
    database_url: str, database: Database
) -> None:
    prefix = f"sbtest-{uuid.uuid4().hex}"
    env = {"SPRINTBOARD_REDIS_URL": REDIS_URL, "SPRINTBOARD_RATE_LIMIT_PREFIX": prefix}
    channel = f"{prefix}:events-written"
    redis = Redis.from_url(REDIS_URL)
    key = make_org_admin(database)
    try:
        with (
            running_server(database_url, env=env) as one,
            running_server(database_url, env=env) as two,
        ):
            wait_for(lambda: dict(redis.pubsub_numsub(channel))[channel.encode()] == 2)
            writer, reader = Client(one, key), Client(two, key)
            try:
                workspace_id, project_id = _board(writer)
                with reader.stream(workspace_id) as source:
                    created = _task(writer, workspace_id, project_id)
                    # (Without the news from Redis the other instance would look in 5 s.)
                    reader.http.timeout = httpx.Timeout(10, read=3)
                    assert _next(source.iter_sse()).json()["subjectId"] == created["$id"]
            finally:
                writer.close()
                reader.close()
    finally:
        redis.close()
