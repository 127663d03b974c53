"""The forges' own published example payloads (tests/data/forges/SOURCES.md), each delivered
three times and out of order: one link per pull request or commit, one status change, made
by the integration's own user with its event, notifications and link events (contract §20).

The tests write an item's key into each example (its title, source branch or commit
message; a merge is the published example with its merged state) and sign it as the forge
would; every other field is as published.
"""

import copy
from typing import Any

import pytest

from tests.factories import Api, add_member, make_user
from tests.integrations.forge_factories import (
    PULL_REQUEST,
    PUSH,
    deliver,
    example,
    make_integration,
)
from tests.workitem_factories import Board, make_board

PROVIDERS = ("github", "gitlab", "gitea")


def pull_request_pair(provider: str, key: str) -> tuple[Any, Any]:
    """The example of a pull request opened, and of the same pull request merged, naming
    `key`. (Gitea documents its `pull_request` payload as GitHub's shape, which it sends.)"""
    if provider == "gitlab":
        opened = example("gitlab-merge_request-open.json")
        attributes = opened["object_attributes"]
        attributes["source_branch"] = f"feature/{key}-{attributes['source_branch']}"
        merged = copy.deepcopy(opened)
        merged["object_attributes"].update(
            action="merge", state="merged", updated_at="2013-12-03T17:40:00Z"
        )
        return opened, merged
    opened = example("github-pull_request-opened.json")
    opened["pull_request"]["title"] = f"{key}: {opened['pull_request']['title']}"
    merged = example("github-pull_request-closed.json")
    merged["pull_request"]["title"] = opened["pull_request"]["title"]
    pr = merged["pull_request"]
    pr.update(merged=True, merged_at=pr["closed_at"])
    return opened, merged


def activity(admin: Api, key: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = admin.ok("GET", f"/tasks/{key}/activity?limit=100")["documents"]
    return found


def watched_board(admin: Api) -> tuple[Board, Api, dict[str, Any]]:
    """A board with an item assigned to a member, who hears of its changes."""
    board = make_board(admin, key="WEB")
    member, member_api = make_user(admin)
    add_member(admin, board.workspace_id, member["$id"], "MEMBER")
    item = board.task(assigneeIds=[member["$id"]])
    return board, member_api, item


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_pull_request_delivered_three_times_out_of_order_links_once_and_moves_once(
    admin: Api, provider: str
) -> None:
    board, member_api, item = watched_board(admin)
    integration = make_integration(admin, board.workspace_id, provider, onOpen="IN_PROGRESS")
    opened, merged = pull_request_pair(provider, item["key"])
    deliveries = {"open": (opened, "delivery-open"), "merge": (merged, "delivery-merge")}
    for name in ("merge", "open", "merge", "open", "open", "merge"):
        payload, delivery_id = deliveries[name]
        answered = deliver(
            admin, integration, PULL_REQUEST[provider], payload, delivery_id=delivery_id
        )
        assert answered.status_code == 200, answered.text

    links = admin.ok("GET", f"/tasks/{item['key']}/links")
    assert links["total"] == 1
    link = links["documents"][0]
    if provider == "gitlab":
        attributes = opened["object_attributes"]
        expected = (attributes["url"], attributes["iid"], attributes["title"], "root")
    else:
        pr = opened["pull_request"]
        expected = (pr["html_url"], pr["number"], pr["title"], pr["user"]["login"])
    assert (link["url"], link["number"], link["title"], link["author"]) == expected
    assert link["provider"] == provider
    assert link["kind"] == "pull_request"
    assert link["state"] == "merged"
    assert link["sha"] is None
    shown = admin.ok("GET", f"/tasks/{item['key']}")
    assert shown["links"] == links["documents"]
    assert shown["status"] == "DONE"

    history = activity(admin, item["key"])
    moves = [e for e in history if e["type"] == "task.updated"]
    assert len(moves) == 1
    assert moves[0]["actorId"] == integration["userId"]
    assert moves[0]["changes"]["status"] == {"from": "BACKLOG", "to": "DONE"}
    assert moves[0]["actor"]["name"] == integration["name"]
    assert [e["type"] for e in history if e["type"].startswith("link.")] == ["link.created"]
    feed = admin.ok("GET", f"/events?workspaceId={board.workspace_id}")["documents"]
    created = [e for e in feed if e["type"] == "link.created"]
    assert len(created) == 1
    assert created[0]["subjectId"] == item["$id"]
    assert created[0]["payload"]["link"]["$id"] == link["$id"]
    inbox = member_api.ok("GET", "/notifications")["documents"]
    heard = [n for n in inbox if n["actorId"] == integration["userId"]]
    assert len(heard) == 1
    assert heard[0]["changes"]["status"]["to"] == "DONE"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_opened_then_merged_moves_twice_and_keeps_the_link_current(
    admin: Api, provider: str
) -> None:
    board, _, item = watched_board(admin)
    integration = make_integration(admin, board.workspace_id, provider, onOpen="IN_PROGRESS")
    opened, merged = pull_request_pair(provider, item["key"])
    for _ in range(3):
        deliver(admin, integration, PULL_REQUEST[provider], opened, delivery_id="o")
    assert admin.ok("GET", f"/tasks/{item['key']}")["status"] == "IN_PROGRESS"
    assert admin.ok("GET", f"/tasks/{item['key']}/links")["documents"][0]["state"] == "open"
    for _ in range(3):
        deliver(admin, integration, PULL_REQUEST[provider], merged, delivery_id="m")
    deliver(admin, integration, PULL_REQUEST[provider], opened, delivery_id="o-later")
    assert admin.ok("GET", f"/tasks/{item['key']}")["status"] == "DONE"
    links = admin.ok("GET", f"/tasks/{item['key']}/links")["documents"]
    assert [link["state"] for link in links] == ["merged"]
    history = activity(admin, item["key"])
    moves = [e["changes"]["status"]["to"] for e in history if e["type"] == "task.updated"]
    assert moves == ["IN_PROGRESS", "DONE"]
    kinds = [e["type"] for e in history if e["type"].startswith("link.")]
    assert kinds == ["link.created", "link.updated"]


def closing_push(provider: str, key: str, also: str) -> Any:
    """The forge's push example, its commit message closing `key` and naming `also`."""
    if provider == "github":
        payload = example("github-push.json")
        commit = payload["commits"][0]
        commit["message"] = f"{commit['message']}\n\nFixes {key}, see {also}"
    elif provider == "gitlab":
        payload = example("gitlab-push.json")
        commit = payload["commits"][1]  # (published as "fixed readme")
        commit["message"] = f"fixed {key} readme ({also})"
    else:
        payload = example("gitea-push.json")
        commit = payload["commits"][0]
        commit["message"] = f"{commit['message']} closes {key}, {also}"
    return payload


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_push_delivered_three_times_links_each_commit_once(admin: Api, provider: str) -> None:
    board = make_board(admin, key="WEB")
    integration = make_integration(admin, board.workspace_id, provider)
    closed, named = board.task(), board.task()
    payload = closing_push(provider, closed["key"], named["key"])
    for delivery_id in ("push-1", "push-1", "push-1"):
        answered = deliver(admin, integration, PUSH[provider], payload, delivery_id=delivery_id)
        assert answered.status_code == 200, answered.text
    redelivered = deliver(admin, integration, PUSH[provider], payload, delivery_id="push-2")
    assert redelivered.status_code == 200

    for item in (closed, named):
        links = admin.ok("GET", f"/tasks/{item['key']}/links")["documents"]
        assert len(links) == 1
        assert links[0]["kind"] == "commit"
        assert links[0]["state"] is None
        assert links[0]["number"] is None
        assert links[0]["sha"] in {c["id"] for c in payload["commits"]}
    # Gitea's example pushes to `develop`, not its default branch `main`: nothing closes.
    on_default = provider != "gitea"
    assert admin.ok("GET", f"/tasks/{closed['key']}")["status"] == (
        "DONE" if on_default else "BACKLOG"
    )
    assert admin.ok("GET", f"/tasks/{named['key']}")["status"] == "BACKLOG"
    moves = [e for e in activity(admin, closed["key"]) if e["type"] == "task.updated"]
    assert len(moves) == (1 if on_default else 0)


def test_the_published_examples_name_no_item_by_themselves(admin: Api) -> None:
    """`MS-Viewport` (GitLab's example title) is no key: a key ends in digits."""
    board = make_board(admin, key="MS")
    item = board.task()
    integration = make_integration(admin, board.workspace_id, "gitlab", onOpen="IN_PROGRESS")
    payload = example("gitlab-merge_request-open.json")
    assert deliver(admin, integration, "Merge Request Hook", payload).status_code == 200
    assert admin.ok("GET", f"/tasks/{item['key']}/links")["total"] == 0
    assert admin.ok("GET", f"/tasks/{item['key']}")["status"] == "BACKLOG"
