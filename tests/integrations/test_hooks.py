"""The forge-facing hook (contract §20): signed per forge, or 401 and nothing recorded; an
unknown integration 404; at most 5 MiB; a delivery id acts once; events it does not use 202;
a malformed body 400 and nothing half-recorded."""

import json
from typing import Any

import pytest
from sqlalchemy import text

from sprintboard.db import Database
from tests.factories import Api
from tests.integrations.forge_factories import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    PULL_REQUEST,
    deliver,
    example,
    make_integration,
    signature_headers,
)
from tests.workitem_factories import Board, make_board

PROVIDERS = ("github", "gitlab", "gitea")


def opened(provider: str, key: str) -> Any:
    """The forge's published pull request example, naming `key` in its title."""
    if provider == "gitlab":
        payload = example("gitlab-merge_request-open.json")
        payload["object_attributes"]["title"] = f"{key} {payload['object_attributes']['title']}"
    else:
        payload = example("github-pull_request-opened.json")
        payload["pull_request"]["title"] = f"{key}: {payload['pull_request']['title']}"
    return payload


def counts(database: Database) -> dict[str, int]:
    with database.engine.connect() as connection:
        return {
            table: connection.execute(text(f"SELECT count(*) FROM {table}")).scalar() or 0
            for table in ("work_item_links", "integration_deliveries", "events")
        }


def setup(admin: Api, provider: str, **fields: Any) -> tuple[Board, dict[str, Any], str]:
    board = make_board(admin, key="WEB")
    integration = make_integration(admin, board.workspace_id, provider, **fields)
    item = board.task()
    return board, integration, item["key"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_unsigned_or_wrongly_signed_delivery_is_401_and_records_nothing(
    admin: Api, database: Database, provider: str
) -> None:
    _, integration, key = setup(admin, provider, onOpen="IN_PROGRESS")
    payload = opened(provider, key)
    body = json.dumps(payload).encode()
    before = counts(database)
    unsigned = admin.as_(None).request(
        "POST",
        integration["url"],
        content=body,
        headers={
            "Content-Type": "application/json",
            EVENT_HEADER[provider]: PULL_REQUEST[provider],
            DELIVERY_HEADER[provider]: "d-1",
        },
    )
    assert unsigned.status_code == 401
    assert unsigned.json()["error"]["code"] == "UNAUTHENTICATED"
    wrong = deliver(admin, integration, PULL_REQUEST[provider], payload, secret="not-the-secret")
    assert wrong.status_code == 401
    other = make_integration(admin, integration["workspaceId"], provider)
    crossed = deliver(admin, integration, PULL_REQUEST[provider], payload, secret=other["secret"])
    assert crossed.status_code == 401
    if provider != "gitlab":  # (GitLab's token signs no body: nothing to tamper with)
        tampered = admin.as_(None).request(
            "POST",
            integration["url"],
            content=body,
            headers={
                "Content-Type": "application/json",
                EVENT_HEADER[provider]: PULL_REQUEST[provider],
                **signature_headers(provider, integration["secret"], b"{}"),
            },
        )
        assert tampered.status_code == 401
    assert counts(database) == before
    assert admin.ok("GET", f"/tasks/{key}")["status"] == "BACKLOG"


def test_an_unknown_or_deleted_integration_is_404(admin: Api) -> None:
    _, integration, key = setup(admin, "github")
    missing = {**integration, "url": integration["url"].replace(integration["$id"], "nope")}
    assert deliver(admin, missing, "pull_request", opened("github", key)).status_code == 404
    admin.ok("DELETE", f"/integrations/{integration['$id']}")
    gone = deliver(admin, integration, "pull_request", opened("github", key))
    assert gone.status_code == 404
    assert gone.json()["error"]["code"] == "NOT_FOUND"


def test_bodies_up_to_5_mib_are_read_and_larger_ones_are_413(admin: Api) -> None:
    _, integration, key = setup(admin, "github")
    payload = opened("github", key)
    payload["pull_request"]["body"] = ""
    base = len(json.dumps(payload).encode())
    payload["pull_request"]["body"] = "x" * (5 * 1024 * 1024 - base)
    largest = json.dumps(payload).encode()
    assert len(largest) == 5 * 1024 * 1024
    assert deliver(admin, integration, "pull_request", None, body=largest).status_code == 200
    too_large = largest + b" "
    refused = deliver(admin, integration, "pull_request", None, body=too_large)
    assert refused.status_code == 413
    assert refused.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    # (Every other route keeps its 1 MiB.)
    big = {"name": "x", "description": "y" * (1024 * 1024)}
    assert admin.post("/workspaces", json=big).status_code == 413


@pytest.mark.parametrize("provider", PROVIDERS)
def test_events_it_does_not_use_are_202(admin: Api, database: Database, provider: str) -> None:
    _, integration, _ = setup(admin, provider)
    event = {"github": "issues", "gitea": "issues", "gitlab": "Issue Hook"}[provider]
    before = counts(database)
    answered = deliver(admin, integration, event, {"action": "opened"})
    assert answered.status_code == 202
    assert answered.json()["data"]["used"] is False
    assert deliver(admin, integration, "ping", {"zen": "Keep it simple."}).status_code == 202
    assert counts(database) == before


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_malformed_delivery_is_400_and_nothing_half_recorded(
    admin: Api, database: Database, provider: str
) -> None:
    _, integration, _ = setup(admin, provider)
    before = counts(database)
    for body in (b"{not json", b"[]", b'{"action": "opened"}', b'{"pull_request": 7}'):
        answered = deliver(admin, integration, PULL_REQUEST[provider], None, body=body)
        assert answered.status_code == 400, body
        assert answered.json()["error"]["details"]["reason"] == "invalid_json"
    assert counts(database) == before


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_delivery_id_acts_once(admin: Api, database: Database, provider: str) -> None:
    _, integration, key = setup(admin, provider, onOpen="IN_PROGRESS")
    payload = opened(provider, key)
    first = deliver(admin, integration, PULL_REQUEST[provider], payload, delivery_id="same")
    assert first.status_code == 200
    assert first.json()["data"] == {"received": True, "used": True, "duplicate": False}
    after_first = counts(database)
    again = deliver(admin, integration, PULL_REQUEST[provider], payload, delivery_id="same")
    assert again.status_code == 200
    assert again.json()["data"]["duplicate"] is True
    assert counts(database) == after_first
    assert admin.ok("GET", f"/tasks/{key}")["status"] == "IN_PROGRESS"
    assert len(admin.ok("GET", f"/tasks/{key}/links")["documents"]) == 1
