"""Webhooks, manageable (contract §16): read one, change it, re-enable it, ping it, redeliver;
and fair delivery (§14): a slow receiver holds up only its own webhook."""

import asyncio
import threading
from datetime import timedelta
from typing import Any

from standardwebhooks import Webhook as Verifier

from sprintboard.db import Database
from sprintboard.events.delivery import DeliveryOptions, deliver_due
from tests.events.test_delivery import WorkerThread, wait_for
from tests.events.test_events import make_task
from tests.events.test_webhook_targets import strict as strict  # the fixture
from tests.events.test_webhooks import LOOPBACK, Receiver, deliver_until, make_webhook
from tests.factories import Api, add_member, make_project, make_user, make_workspace


def _deliveries(api: Api, webhook_id: str) -> list[dict[str, Any]]:
    documents: list[dict[str, Any]] = api.ok("GET", f"/webhooks/{webhook_id}/deliveries")[
        "documents"
    ]
    return documents


def test_a_webhook_is_read_and_changed(admin: Api) -> None:
    workspace = make_workspace(admin)
    created = make_webhook(admin, workspace["$id"], "https://example.com/a", ["task.created"])
    created.pop("secret")
    assert admin.ok("GET", f"/webhooks/{created['$id']}") == created

    changed = admin.ok(
        "PATCH",
        f"/webhooks/{created['$id']}",
        {"url": "https://example.com/b", "events": ["task.updated", "sprint.started"]},
    )
    assert changed["url"] == "https://example.com/b"
    assert changed["events"] == ["task.updated", "sprint.started"]
    assert changed["enabled"] is True
    assert admin.ok("GET", f"/webhooks/{created['$id']}") == changed
    paused = admin.ok("PATCH", f"/webhooks/{created['$id']}", {"enabled": False})
    assert paused["enabled"] is False

    for body, field, reason in [
        ({"url": "ftp://example.com/h"}, "url", "invalid_format"),
        ({"url": "https://u:p@example.com/h"}, "url", "invalid_value"),
        ({"events": []}, "events", "too_short"),
        ({"enabled": None}, "enabled", None),
        ({"secret": "mine"}, "secret", "read_only"),
    ]:
        response = admin.patch(f"/webhooks/{created['$id']}", json=body)
        assert response.status_code == 400, body
        details = response.json()["error"]["details"]
        assert details["field"] == field
        assert reason is None or details["reason"] == reason

    stale = admin.patch(
        f"/webhooks/{created['$id']}", json={"enabled": True}, headers={"If-Match": '"x.1"'}
    )
    assert stale.status_code == 412

    viewer, viewer_api = make_user(admin)
    add_member(admin, workspace["$id"], viewer["$id"], "VIEWER")
    assert viewer_api.ok("GET", f"/webhooks/{created['$id']}")["$id"] == created["$id"]
    member, member_api = make_user(admin)
    add_member(admin, workspace["$id"], member["$id"], "MEMBER")
    _, outsider = make_user(admin)
    for path, body in [
        (f"/webhooks/{created['$id']}", {"enabled": True}),
        (f"/webhooks/{created['$id']}/test", None),
    ]:
        method = "PATCH" if body else "POST"
        refused = member_api.request(method, path, json=body)
        assert refused.status_code == 403
        assert refused.json()["error"]["details"] == {"permission": "WORKSPACE_MANAGE"}
        assert outsider.request(method, path, json=body).status_code == 404
    assert outsider.get(f"/webhooks/{created['$id']}").status_code == 404


def test_the_address_rule_applies_to_a_changed_url(strict: Api) -> None:
    workspace = make_workspace(strict)
    hook = make_webhook(strict, workspace["$id"], "https://example.com/a", ["task.created"])
    response = strict.patch(f"/webhooks/{hook['$id']}", json={"url": "http://127.1:8080/"})
    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"field": "url", "reason": "invalid_value"}
    assert strict.ok("GET", f"/webhooks/{hook['$id']}")["url"] == "https://example.com/a"


def test_a_disabled_webhook_is_re_enabled(admin: Api, database: Database) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    failing = DeliveryOptions(timeout=0.5, give_up_after=timedelta(0), **LOOPBACK)
    with Receiver(statuses=[500]) as receiver:
        hook = make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
        make_task(admin, project)
        assert asyncio.run(deliver_due(database, limit=50, options=failing)) == 1
        disabled = admin.ok("GET", f"/webhooks/{hook['$id']}")
        assert disabled["enabled"] is False
        assert disabled["disabledReason"] is not None

        enabled = admin.ok("PATCH", f"/webhooks/{hook['$id']}", {"enabled": True})
        assert (enabled["enabled"], enabled["disabledReason"], enabled["failingSince"]) == (
            True,
            None,
            None,
        )
        make_task(admin, project)
        deliver_until(database, lambda: len(receiver.requests) == 2)
    newest = _deliveries(admin, hook["$id"])[0]
    assert (newest["status"], newest["responseStatus"]) == ("DELIVERED", 200)


def test_a_ping_is_queued_signed_and_delivered(admin: Api, database: Database) -> None:
    workspace = make_workspace(admin)
    with Receiver() as receiver:
        hook = make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
        ping = admin.ok("POST", f"/webhooks/{hook['$id']}/test")
        assert (ping["eventType"], ping["status"], ping["attempts"]) == ("ping", "PENDING", 0)
        deliver_until(database, lambda: len(receiver.requests) == 1)
    headers, body = receiver.requests[0]
    payload = Verifier(hook["secret"]).verify(body, headers)
    assert payload["type"] == "ping"
    assert payload["data"] == {"webhookId": hook["$id"], "workspaceId": workspace["$id"]}
    assert headers["webhook-id"] == ping["$id"]
    (delivered,) = _deliveries(admin, hook["$id"])
    assert (delivered["$id"], delivered["status"]) == (ping["$id"], "DELIVERED")
    # (A ping is not a change: the workspace's feed has no event for it.)
    assert admin.ok("GET", f"/events?workspaceId={workspace['$id']}")["total"] == 0


def test_a_delivery_is_sent_again_with_the_same_id(admin: Api, database: Database) -> None:
    workspace = make_workspace(admin)
    with Receiver() as receiver:
        hook = make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
        make_task(admin, make_project(admin, workspace["$id"]))
        deliver_until(database, lambda: len(receiver.requests) == 1)
        (delivery,) = _deliveries(admin, hook["$id"])
        assert delivery["status"] == "DELIVERED"

        path = f"/webhooks/{hook['$id']}/deliveries/{delivery['$id']}/redeliver"
        again = admin.ok("POST", path, status=200)  # (not a create)
        assert (again["$id"], again["status"], again["deliveredAt"]) == (
            delivery["$id"],
            "PENDING",
            None,
        )
        deliver_until(database, lambda: len(receiver.requests) == 2)
    assert receiver.ids() == [delivery["$id"], delivery["$id"]]
    assert receiver.bodies()[0] == receiver.bodies()[1]
    (redelivered,) = _deliveries(admin, hook["$id"])
    assert (redelivered["status"], redelivered["attempts"]) == ("DELIVERED", 2)

    other = make_webhook(admin, workspace["$id"], "https://example.com/o", ["task.created"])
    for path in (
        f"/webhooks/{other['$id']}/deliveries/{delivery['$id']}/redeliver",
        f"/webhooks/{hook['$id']}/deliveries/nope/redeliver",
    ):
        response = admin.post(path)
        assert response.status_code == 404, path


def _unsettled(api: Api, webhook_id: str) -> bool:
    """Whether the webhook's one delivery is claimed and still waiting for its answer."""
    (delivery,) = _deliveries(api, webhook_id)
    return bool(delivery["attempts"] == 1 and delivery["error"] is None)


def test_a_delivery_answered_is_recorded_while_a_slow_one_waits(
    admin: Api, database: Database
) -> None:
    """In one round, the fast receiver's 2xx is recorded as it arrives, not when the
    round's slowest send (a receiver that never answers in time) has ended."""
    slow_ws, fast_ws = make_workspace(admin), make_workspace(admin)
    options = DeliveryOptions(timeout=6.0, backoff_base=60, **LOOPBACK)
    with Receiver(delay=8.0) as tarpit, Receiver() as fast:
        slow_hook = make_webhook(admin, slow_ws["$id"], tarpit.url, ["task.created"])
        fast_hook = make_webhook(admin, fast_ws["$id"], fast.url, ["task.created"])
        make_task(admin, make_project(admin, slow_ws["$id"]))
        make_task(admin, make_project(admin, fast_ws["$id"]))
        round_ = threading.Thread(
            target=lambda: asyncio.run(deliver_due(database, limit=50, options=options))
        )
        round_.start()
        try:
            wait_for(lambda: _deliveries(admin, fast_hook["$id"])[0]["status"] == "DELIVERED")
            assert _unsettled(admin, slow_hook["$id"]), "recorded only when the round ended"
        finally:
            round_.join(20)
    assert _deliveries(admin, slow_hook["$id"])[0]["error"] == "timed out after 6 s"


def test_a_tarpit_receiver_holds_up_only_its_own_webhook(admin: Api, database_url: str) -> None:
    """A worker goes on delivering to other webhooks while one webhook's send hangs."""
    slow_ws, fast_ws = make_workspace(admin), make_workspace(admin)
    fast_project = make_project(admin, fast_ws["$id"])
    options = DeliveryOptions(timeout=6.0, backoff_base=60, poll_interval=0.05, **LOOPBACK)
    with Receiver(delay=8.0) as tarpit, Receiver() as fast:
        slow_hook = make_webhook(admin, slow_ws["$id"], tarpit.url, ["task.created"])
        make_webhook(admin, fast_ws["$id"], fast.url, ["task.created"])
        make_task(admin, make_project(admin, slow_ws["$id"]))
        with WorkerThread(database_url, options):
            wait_for(lambda: len(tarpit.in_flight) == 1)
            for n in (1, 2, 3):
                make_task(admin, fast_project)
                wait_for(lambda n=n: len(fast.requests) == n)  # type: ignore[misc]
            assert _unsettled(admin, slow_hook["$id"]), "waited for the tarpit"
