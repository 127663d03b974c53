"""Comments are part of the story (contract §16): edited by their author only, with events in
the feed, the item's activity and webhooks, and notifications for assignees and mentions."""

from typing import Any

import pytest

from tests.events.test_events import feed, make_task
from tests.events.test_notifications import Team, make_team
from tests.factories import Api, make_user


@pytest.fixture
def team(admin: Api) -> Team:
    return make_team(admin)


def comment(api: Api, task: dict[str, Any], body: str) -> dict[str, Any]:
    data: dict[str, Any] = api.ok("POST", f"/tasks/{task['$id']}/comments", {"body": body})
    return data


def types_of(notifications: dict[str, Any]) -> list[str]:
    return [n["type"] for n in notifications["documents"]]


def test_only_the_author_edits_a_comment(team: Team) -> None:
    ann, bob = team.apis["ann"], team.apis["bob"]
    task = make_task(ann, team.project)
    written = comment(ann, task, "first draft")
    path = f"/comments/{written['$id']}"

    refused = bob.patch(path, json={"body": "bob's version"})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "FORBIDDEN"
    assert refused.json()["error"]["details"]["reason"] == "not_author"
    # An ADMIN is no author either; a VIEWER lacks the permission to write at all.
    assert team.apis["admin"].patch(path, json={"body": "x"}).status_code == 403
    viewer = team.apis["vic"].patch(path, json={"body": "x"})
    assert viewer.json()["error"]["details"] == {"permission": "WORK_ITEM_WRITE"}
    _, outsider = make_user(team.apis["admin"])
    assert outsider.patch(path, json={"body": "x"}).status_code == 404
    assert ann.patch("/comments/nope", json={"body": "x"}).status_code == 404
    bad = ann.patch(path, json={"body": ""})
    assert bad.json()["error"]["details"]["reason"] == "too_short"

    edited = ann.ok("PATCH", path, {"body": "final words"})
    assert edited["body"] == "final words"
    assert (edited["$id"], edited["authorId"]) == (written["$id"], team.ids["ann"])
    assert edited["$updatedAt"] > written["$updatedAt"]
    # The same body again changes nothing.
    assert ann.ok("PATCH", path, {"body": "final words"}) == edited
    stale = ann.patch(path, json={"body": "again"}, headers={"If-Match": '"x.1"'})
    assert stale.status_code == 412
    assert ann.ok("GET", f"/tasks/{task['$id']}/comments")["documents"] == [edited]


def test_comment_events_in_the_feed_activity_and_webhooks(team: Team) -> None:
    admin, ann = team.apis["admin"], team.apis["ann"]
    workspace_id = team.workspace["$id"]
    hook = admin.ok(
        "POST",
        f"/workspaces/{workspace_id}/webhooks",
        {
            "url": "https://example.com/hook",
            "events": ["comment.created", "comment.updated", "comment.deleted"],
        },
    )
    task = make_task(ann, team.project)
    written = comment(ann, task, "hello")
    ann.ok("PATCH", f"/comments/{written['$id']}", {"body": "hello again"})
    ann.ok("PATCH", f"/comments/{written['$id']}", {"body": "hello again"})  # (no event)
    ann.ok("DELETE", f"/comments/{written['$id']}")

    events = feed(admin, workspace_id)["documents"][1:]
    assert [e["type"] for e in events] == ["comment.created", "comment.updated", "comment.deleted"]
    for event in events:
        assert event["subjectId"] == task["$id"]
        assert event["actorId"] == team.ids["ann"]
        assert event["payload"]["comment"]["$id"] == written["$id"]
        assert event["payload"]["workItem"]["key"] == task["key"]
    assert events[0]["payload"]["comment"]["body"] == "hello"
    assert events[1]["payload"]["changes"] == {"body": {"from": "hello", "to": "hello again"}}
    assert events[2]["payload"]["comment"]["body"] == "hello again"

    activity = admin.ok("GET", f"/tasks/{task['$id']}/activity")["documents"]
    assert [a["type"] for a in activity] == [
        "task.created",
        "comment.created",
        "comment.updated",
        "comment.deleted",
    ]
    deliveries = admin.ok("GET", f"/webhooks/{hook['$id']}/deliveries")["documents"]
    assert sorted(d["eventType"] for d in deliveries) == [
        "comment.created",
        "comment.deleted",
        "comment.updated",
    ]
    assert admin.ok("GET", f"/tasks/{task['$id']}")["commentCount"] == 0


def test_a_comment_notifies_assignees_and_mentioned_members_once(team: Team) -> None:
    admin, ann, ids = team.apis["admin"], team.apis["ann"], team.ids
    _, outsider = make_user(admin)
    outsider_email = outsider.ok("GET", "/me")["email"]
    emails = {name: api.ok("GET", "/me")["email"] for name, api in team.apis.items()}
    task = make_task(admin, team.project, assigneeIds=[ids["ann"], ids["bob"]])
    before = {name: types_of(team.inbox(name)) for name in team.apis}

    body = (
        f"@{emails['bob']} and (@{emails['cat'].upper()}), please look. "
        f"Also @{emails['cat']}, @{emails['ann']}. cc @{outsider_email}, @{emails['vic']}."
    )
    written = comment(ann, task, body)

    heard = {}
    for name in team.apis:
        now = types_of(team.inbox(name))
        heard[name] = now[: len(now) - len(before[name])]
    # Assignees (bob, not ann, the author) and mentioned members (cat, vic), once each; the
    # outsider is not a member; the admins are neither assigned nor mentioned.
    assert heard == {
        "admin": [],
        "boss": [],
        "ann": [],
        "bob": ["comment.created"],
        "cat": ["comment.created"],
        "vic": ["comment.created"],
    }
    note = team.inbox("cat")["documents"][0]
    assert note["workItemId"] == task["$id"]
    assert note["workItemKey"] == task["key"]
    assert note["actorId"] == ids["ann"]
    # Editing or deleting a comment notifies nobody.
    ann.ok("PATCH", f"/comments/{written['$id']}", {"body": f"now @{emails['boss']}"})
    ann.ok("DELETE", f"/comments/{written['$id']}")
    assert types_of(team.inbox("boss")) == before["boss"]
    assert len(types_of(team.inbox("bob"))) == len(before["bob"]) + 1
