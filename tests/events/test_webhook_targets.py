"""Hardening of webhooks (contract §14): where they may send, how their secrets are kept, and
how many a workspace may have."""

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update
from starlette.testclient import TestClient

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.db import Database
from sprintboard.events.delivery import DeliveryOptions, deliver_due
from sprintboard.models import IdempotentRequest, Webhook
from tests.events.test_events import make_task
from tests.events.test_webhooks import BOX, FAST, Receiver, make_webhook
from tests.factories import Api, make_org_admin, make_project, make_workspace
from tests.ops.test_cli import run

# The audit's reproductions: addresses of this machine, its private network and its cloud's
# metadata service, in the spellings a URL parser, `inet_aton` or a resolver accepts.
REFUSED_TARGETS = [
    "http://127.0.0.1/hook",
    "http://127.0.0.1:6379/",
    "http://[::1]/hook",
    "http://localhost/hook",
    "http://LOCALHOST./hook",
    "http://api.localhost/hook",
    "http://127.1/hook",
    "http://2130706433/hook",
    "http://0x7f000001/hook",
    "http://0177.0.0.1/hook",
    "http://0/hook",
    "http://0.0.0.0/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://[::]/hook",
    "http://10.0.0.1/hook",
    "http://172.16.0.1/hook",
    "http://192.168.1.1/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/hook",
    "http://[fd00::1]/hook",
    "http://[fe80::1]/hook",
    "http://224.0.0.1/hook",
    "http://240.0.0.1/hook",
]
PUBLIC_TARGETS = [
    "https://8.8.8.8/hook",
    "http://[2606:4700:4700::1111]/hook",
    # Does not resolve here (no DNS): let through, as delivery checks it again.
    "https://hooks.example.com/h",
]


@pytest.fixture
def strict(settings: Settings, database: Database) -> Iterator[Api]:
    """An organization admin's client of an app with the default address rule."""
    default_rule = settings.model_copy(update={"webhook_allow_private": False})
    app = create_app(default_rule, database=database)
    with TestClient(app, base_url="http://testserver") as client:
        yield Api(client, make_org_admin(database))


def _refusal(api: Api, workspace_id: str, url: str) -> dict[str, Any] | None:
    response = api.post(
        f"/workspaces/{workspace_id}/webhooks", json={"url": url, "events": ["task.created"]}
    )
    if response.status_code == 201:
        return None
    assert response.status_code == 400, (url, response.text)
    error: dict[str, Any] = response.json()["error"]
    return error


def test_by_default_no_spelling_of_a_non_public_address_is_a_target(strict: Api) -> None:
    workspace = make_workspace(strict)
    accepted = [url for url in REFUSED_TARGETS if _refusal(strict, workspace["$id"], url) is None]
    assert accepted == [], f"{len(accepted)} of {len(REFUSED_TARGETS)} accepted"
    error = _refusal(strict, workspace["$id"], "http://127.1/hook")
    assert error is not None
    assert error["code"] == "INVALID_REQUEST"
    assert error["details"] == {"field": "url", "reason": "invalid_value"}
    for url in PUBLIC_TARGETS:
        assert _refusal(strict, workspace["$id"], url) is None, url


def test_credentials_in_a_url_are_refused(admin: Api) -> None:
    """With the address rule lifted too: a receiver that needs a secret checks the signature."""
    workspace = make_workspace(admin)
    for url in ("https://user:pass@example.com/h", "https://token@example.com/h"):
        error = _refusal(admin, workspace["$id"], url)
        assert error is not None, url
        assert error["details"] == {"field": "url", "reason": "invalid_value"}


def test_port_zero_is_refused(admin: Api) -> None:
    """With the address rule lifted too: no receiver listens on port 0 (issue 26)."""
    workspace = make_workspace(admin)
    for url in ("http://example.com:0/h", "https://203.0.113.9:0/"):
        error = _refusal(admin, workspace["$id"], url)
        assert error is not None, url
        assert error["details"] == {"field": "url", "reason": "invalid_value"}
    assert _refusal(admin, workspace["$id"], "http://example.com:8080/h") is None


def test_a_target_is_checked_again_when_delivering(admin: Api, database: Database) -> None:
    """A name may resolve elsewhere by the time of delivery: `localhost` (made while the rule
    was lifted) stands for a name now resolving to a private address. Nothing is sent."""
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    strict_options = DeliveryOptions(timeout=2.0, backoff_base=60, box=BOX)
    with Receiver() as receiver:
        port = receiver.url.split(":")[2].split("/")[0]
        hooks = [
            make_webhook(admin, workspace["$id"], url, ["task.created"])
            for url in (receiver.url, f"http://localhost:{port}/hook")
        ]
        make_task(admin, project)
        assert asyncio.run(deliver_due(database, limit=50, options=strict_options)) == 2
        assert receiver.requests == []
    for hook in hooks:
        delivery = admin.ok("GET", f"/webhooks/{hook['$id']}/deliveries")["documents"][0]
        assert delivery["status"] == "PENDING"
        assert delivery["responseStatus"] is None
        assert delivery["error"].startswith("ConnectError: refused: "), delivery["error"]
        assert "not a public address" in delivery["error"]


def test_a_redirect_is_a_failed_attempt_not_followed(admin: Api, database: Database) -> None:
    workspace = make_workspace(admin)
    with Receiver(statuses=[307]) as receiver:
        hook = make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
        make_task(admin, make_project(admin, workspace["$id"]))
        assert asyncio.run(deliver_due(database, limit=50, options=FAST)) == 1
        assert len(receiver.requests) == 1
    delivery = admin.ok("GET", f"/webhooks/{hook['$id']}/deliveries")["documents"][0]
    assert (delivery["status"], delivery["error"]) == ("PENDING", "HTTP 307")


def test_a_workspace_has_at_most_twenty_webhooks(admin: Api) -> None:
    workspace = make_workspace(admin)
    for n in range(20):
        make_webhook(admin, workspace["$id"], f"https://example.com/{n}", ["task.created"])
    response = admin.post(
        f"/workspaces/{workspace['$id']}/webhooks",
        json={"url": "https://example.com/21", "events": ["task.created"]},
    )
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "CONFLICT"
    assert error["details"]["reason"] == "webhook_limit"
    assert admin.ok("GET", f"/workspaces/{workspace['$id']}/webhooks")["total"] == 20
    other = make_workspace(admin)  # (the limit is per workspace)
    make_webhook(admin, other["$id"], "https://example.com/other", ["task.created"])


def test_a_secret_is_stored_encrypted_shown_once_and_never_logged(
    admin: Api, database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    workspace = make_workspace(admin)
    path = f"/workspaces/{workspace['$id']}/webhooks"
    with Receiver() as receiver:
        body = {"url": receiver.url, "events": ["task.created"]}
        first = admin.post(path, json=body, headers={"Idempotency-Key": "hook-1"})
        replay = admin.post(path, json=body, headers={"Idempotency-Key": "hook-1"})
        make_task(admin, make_project(admin, workspace["$id"]))
        assert asyncio.run(deliver_due(database, limit=50, options=FAST)) == 1
        assert len(receiver.requests) == 1
    assert first.status_code == replay.status_code == 201
    created = first.json()["data"]
    secret = created["secret"]
    assert secret.startswith("whsec_")
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json()["data"] == {**created, "secret": None}
    assert admin.ok("GET", f"/webhooks/{created['$id']}").get("secret") is None

    with database.transaction() as session:
        row = session.get(Webhook, created["$id"])
        assert row is not None
        assert row.legacy_secret is None
        assert row.secret_encrypted is not None
        assert secret not in row.secret_encrypted
        assert BOX.open(row.secret_encrypted) == secret
        stored = session.scalars(select(IdempotentRequest.response_body)).all()
        assert stored
        assert all(secret.encode() not in (body or b"") for body in stored)
    assert caplog.records
    assert secret not in caplog.text
    assert secret.removeprefix("whsec_") not in caplog.text


def test_a_secret_stored_in_plain_text_is_encrypted_by_the_next_command(
    admin: Api, database: Database, database_url: str
) -> None:
    """Secrets written before migration 0005 (plain `secret` column): `migrate` (which every
    command runs first) encrypts them."""
    workspace = make_workspace(admin)
    hook = make_webhook(admin, workspace["$id"], "https://example.com/h", ["task.created"])
    plain = "whsec_" + "QUJD" * 10 + "QUI="
    with database.transaction() as session:
        session.execute(
            update(Webhook)
            .where(Webhook.id == hook["$id"])
            .values(legacy_secret=plain, secret_encrypted=None)
        )
    result = run(database_url, "migrate")
    assert result.returncode == 0, result.stderr
    assert plain not in result.stderr
    with database.transaction() as session:
        row = session.get(Webhook, hook["$id"])
        assert row is not None
        assert row.legacy_secret is None
        assert row.secret_encrypted is not None
        assert BOX.open(row.secret_encrypted) == plain


@pytest.mark.postgresql_only
def test_on_postgresql_commands_refuse_to_start_without_the_server_key(
    database_url: str,
) -> None:
    """Instances must share the key, so none may make up its own: one line, exit 2."""
    for command in (["serve", "--port", "0"], ["worker"], ["migrate"], ["create-admin"]):
        result = run(database_url, *command, SPRINTBOARD_SECRET_KEY="")
        assert result.returncode == 2, (command, result.stderr)
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("sprintboard: SPRINTBOARD_SECRET_KEY is required"), line


def test_on_sqlite_a_server_key_is_generated_once_beside_the_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'board.db'}"
    key_file = tmp_path / "board.db.secret-key"
    first = run(url, "migrate", SPRINTBOARD_SECRET_KEY="")
    assert first.returncode == 0, first.stderr
    key = key_file.read_text().strip()
    assert len(key) >= 32
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert str(key_file) in first.stderr
    assert key not in first.stderr

    second = run(url, "create-admin", SPRINTBOARD_SECRET_KEY="")
    assert second.returncode == 0, second.stderr
    assert "secret-key" not in second.stderr  # (said once, when it was made)
    assert key_file.read_text().strip() == key

    short = run(url, "migrate", SPRINTBOARD_SECRET_KEY="too short")
    assert short.returncode == 2
    assert short.stderr.startswith("sprintboard: SPRINTBOARD_SECRET_KEY: "), short.stderr
