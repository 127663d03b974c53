"""Webhooks: subscriptions over HTTP, and signed deliveries to a real receiver on 127.0.0.1."""

import asyncio
import base64
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
import pytest
from standardwebhooks import Webhook as Verifier

from sprintboard.db import Database
from sprintboard.events.delivery import DeliveryOptions, deliver_due
from sprintboard.serverkey import SecretBox
from tests.events.test_events import make_task
from tests.factories import (
    TEST_SECRET_KEY,
    Api,
    add_member,
    make_project,
    make_user,
    make_workspace,
)

BOX = SecretBox(TEST_SECRET_KEY)
LOOPBACK = {"box": BOX, "allow_private": True}
"""What the delivery options of tests need: the tests' server key, and receivers on loopback."""
FAST = DeliveryOptions(
    timeout=2.0, backoff_base=0.01, backoff_max=0.05, poll_interval=0.02, **LOOPBACK
)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default 5 would make concurrent deliveries wait on SYN retries


class Receiver:
    """A webhook receiver on 127.0.0.1: records every request, answers from a script."""

    def __init__(self, statuses: list[int] | None = None, delay: float = 0.0) -> None:
        self.statuses = list(statuses or [])
        self.delay = delay
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.in_flight: set[str] = set()
        self.overlaps: list[str] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                headers = {k.lower(): v for k, v in self.headers.items()}
                webhook_id = headers.get("webhook-id", "")
                with receiver.lock:
                    if webhook_id in receiver.in_flight:
                        receiver.overlaps.append(webhook_id)
                    receiver.in_flight.add(webhook_id)
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                time.sleep(receiver.delay)
                with receiver.lock:
                    receiver.requests.append((headers, body))
                    receiver.in_flight.discard(webhook_id)
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "Receiver":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def ids(self) -> list[str]:
        with self.lock:
            return [headers["webhook-id"] for headers, _ in self.requests]

    def bodies(self) -> list[dict[str, Any]]:
        with self.lock:
            return [orjson.loads(body) for _, body in self.requests]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


def deliver_until(
    database: Database,
    done: Callable[[], bool],
    options: DeliveryOptions = FAST,
    timeout: float = 10.0,
) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "deliveries did not arrive in time"
        if asyncio.run(deliver_due(database, limit=50, options=options)) == 0:
            time.sleep(0.01)


def make_webhook(api: Api, workspace_id: str, url: str, events: list[str]) -> dict[str, Any]:
    data: dict[str, Any] = api.ok(
        "POST", f"/workspaces/{workspace_id}/webhooks", {"url": url, "events": events}
    )
    return data


def test_webhook_subscriptions(admin: Api) -> None:
    workspace = make_workspace(admin)
    path = f"/workspaces/{workspace['$id']}/webhooks"
    created = make_webhook(admin, workspace["$id"], "https://example.com/h", ["task.created"])
    secret = created.pop("secret")
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    assert created["enabled"] is True
    assert created["disabledReason"] is None
    assert created["events"] == ["task.created"]
    assert admin.ok("GET", path) == {"documents": [created], "total": 1, "nextCursor": None}

    for body, field, reason in [
        ({"url": "ftp://example.com/h", "events": ["task.created"]}, "url", "invalid_format"),
        ({"url": "https:///nohost", "events": ["task.created"]}, "url", "invalid_format"),
        ({"url": "https://example.com", "events": ["task.exploded"]}, "events", "invalid_value"),
        ({"url": "https://example.com", "events": []}, "events", "too_short"),
        ({"url": "https://example.com"}, "events", "required"),
        ({"url": "https://x.com", "events": ["task.created"], "secret": "s"}, "secret", None),
    ]:
        response = admin.post(path, json=body)
        assert response.status_code == 400, body
        details = response.json()["error"]["details"]
        assert details["field"] == field
        assert reason is None or details["reason"] == reason

    member, member_api = make_user(admin)
    add_member(admin, workspace["$id"], member["$id"], "MEMBER")
    for response in [
        member_api.post(path, json={"url": "https://example.com", "events": ["task.created"]}),
        member_api.delete(f"/webhooks/{created['$id']}"),
    ]:
        assert response.status_code == 403
        assert response.json()["error"]["details"] == {"permission": "WORKSPACE_MANAGE"}
    # Reading needs membership only (contract §3), a VIEWER's included; the secret never shows.
    viewer, viewer_api = make_user(admin)
    add_member(admin, workspace["$id"], viewer["$id"], "VIEWER")
    for reader in (member_api, viewer_api):
        listed = reader.ok("GET", path)
        assert [hook["$id"] for hook in listed["documents"]] == [created["$id"]]
        assert "secret" not in listed["documents"][0]
        assert reader.ok("GET", f"/webhooks/{created['$id']}/deliveries")["total"] >= 0
    _, outsider = make_user(admin)
    assert outsider.get(path).status_code == 404
    assert outsider.delete(f"/webhooks/{created['$id']}").status_code == 404

    assert admin.ok("DELETE", f"/webhooks/{created['$id']}") == {
        "$id": created["$id"],
        "deleted": True,
    }
    assert admin.get(f"/webhooks/{created['$id']}/deliveries").status_code == 404
    assert admin.ok("GET", path)["total"] == 0


def test_delivery_is_signed_and_carries_the_event(
    admin: Api, database: Database, receiver: Receiver
) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    webhook = make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
    task = make_task(admin, project)
    admin.ok("PATCH", f"/tasks/{task['$id']}", {"title": "Not subscribed to updates"})

    deliver_until(database, lambda: len(receiver.requests) == 1)
    headers, body = receiver.requests[0]
    payload = Verifier(webhook["secret"]).verify(body, headers)
    event = admin.ok("GET", f"/events?workspaceId={workspace['$id']}")["documents"][0]
    assert payload == {
        "type": "task.created",
        "timestamp": event["$createdAt"],
        "data": event["payload"],
    }
    assert payload["data"]["workItem"]["$id"] == task["$id"]
    assert headers["content-type"] == "application/json"
    assert abs(int(headers["webhook-timestamp"]) - time.time()) < 60
    with pytest.raises(Exception, match="signature"):
        Verifier(webhook["secret"]).verify(body.replace(b"task", b"tusk"), headers)

    deliveries = admin.ok("GET", f"/webhooks/{webhook['$id']}/deliveries")
    assert deliveries["total"] == 1
    (delivery,) = deliveries["documents"]
    assert delivery["$id"] == headers["webhook-id"]
    assert delivery["eventId"] == event["$id"]
    assert delivery["status"] == "DELIVERED"
    assert delivery["attempts"] == 1
    assert delivery["responseStatus"] == 200
    assert delivery["error"] is None
    assert asyncio.run(deliver_due(database, limit=50, options=FAST)) == 0


def test_failed_attempts_are_retried_with_the_same_id(admin: Api, database: Database) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    with Receiver(statuses=[500, 500, 200]) as receiver:
        webhook = make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
        make_task(admin, project)

        assert asyncio.run(deliver_due(database, limit=50, options=FAST)) == 1
        pending = admin.ok("GET", f"/webhooks/{webhook['$id']}/deliveries")["documents"][0]
        assert pending["status"] == "PENDING"
        assert pending["attempts"] == 1
        assert pending["responseStatus"] == 500
        assert pending["error"] == "HTTP 500"
        assert pending["nextAttemptAt"] is not None
        failing = admin.ok("GET", f"/workspaces/{workspace['$id']}/webhooks")["documents"][0]
        assert failing["failingSince"] is not None

        deliver_until(database, lambda: len(receiver.requests) == 3)
    assert len(set(receiver.ids())) == 1
    for headers, body in receiver.requests:
        Verifier(webhook["secret"]).verify(body, headers)
    delivered = admin.ok("GET", f"/webhooks/{webhook['$id']}/deliveries")["documents"][0]
    assert delivered["$id"] == receiver.ids()[0]
    assert (delivered["status"], delivered["attempts"], delivered["responseStatus"]) == (
        "DELIVERED",
        3,
        200,
    )
    healthy = admin.ok("GET", f"/workspaces/{workspace['$id']}/webhooks")["documents"][0]
    assert healthy["failingSince"] is None


def test_events_of_one_item_arrive_in_order(admin: Api, database: Database) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    with Receiver(statuses=[500]) as receiver:
        make_webhook(admin, workspace["$id"], receiver.url, ["task.created", "task.updated"])
        first = make_task(admin, project)
        admin.ok("PATCH", f"/tasks/{first['$id']}", {"title": "Second"})
        admin.ok("PATCH", f"/tasks/{first['$id']}", {"title": "Third"})
        other = make_task(admin, project)

        # Of the first item's three events only the oldest is due; the other item's is too.
        assert asyncio.run(deliver_due(database, limit=50, options=FAST)) == 2
        deliver_until(database, lambda: len(receiver.requests) == 5)
    order = {"A task": 0, "Second": 1, "Third": 2}
    per_item: dict[str, list[int]] = {first["$id"]: [], other["$id"]: []}
    for body in receiver.bodies():
        per_item[body["data"]["workItem"]["$id"]].append(order[body["data"]["workItem"]["title"]])
    # One of the first two requests got the 500 and was retried before anything newer.
    assert sorted(per_item.values(), key=len) in ([[0], [0, 0, 1, 2]], [[0, 0], [0, 1, 2]])
    assert all(seen == sorted(seen) for seen in per_item.values())


def test_a_webhook_failing_too_long_is_disabled(admin: Api, database: Database) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    options = DeliveryOptions(
        timeout=0.5, backoff_base=0.01, give_up_after=timedelta(0), **LOOPBACK
    )
    with Receiver() as receiver:
        closed_url = receiver.url
    webhook = make_webhook(admin, workspace["$id"], closed_url, ["task.created"])
    make_task(admin, project)

    assert asyncio.run(deliver_due(database, limit=50, options=options)) == 1
    disabled = admin.ok("GET", f"/workspaces/{workspace['$id']}/webhooks")["documents"][0]
    assert disabled["enabled"] is False
    assert "ConnectError" in disabled["disabledReason"]
    delivery = admin.ok("GET", f"/webhooks/{webhook['$id']}/deliveries")["documents"][0]
    assert delivery["status"] == "FAILED"
    assert delivery["responseStatus"] is None

    make_task(admin, project)  # a disabled webhook gets nothing new
    assert admin.ok("GET", f"/webhooks/{webhook['$id']}/deliveries")["total"] == 1
    assert asyncio.run(deliver_due(database, limit=50, options=options)) == 0


def test_a_slow_receiver_times_out(admin: Api, database: Database) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    options = DeliveryOptions(timeout=0.2, backoff_base=60, **LOOPBACK)
    # The receiver answers long after the 0.2 s timeout, so that the bound below also leaves
    # room for the rest of the round (claim, client set-up, settle), which on a loaded
    # machine took over 0.7 s.
    with Receiver(delay=5.0) as receiver:
        webhook = make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
        make_task(admin, project)
        started = time.monotonic()
        assert asyncio.run(deliver_due(database, limit=50, options=options)) == 1
        assert time.monotonic() - started < 4.0  # cut off by the timeout, not the receiver
    delivery = admin.ok("GET", f"/webhooks/{webhook['$id']}/deliveries")["documents"][0]
    assert delivery["status"] == "PENDING"
    assert delivery["error"] == "timed out after 0.2 s"
