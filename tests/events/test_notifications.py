"""The in-app inbox: who is notified of a work item update, and reading notifications."""

from dataclasses import dataclass
from typing import Any

import pytest

from sprintboard.db import Database
from sprintboard.events import service as events
from tests.events.test_events import make_task
from tests.factories import Api, add_member, make_project, make_user, make_workspace


@dataclass
class Team:
    """A workspace made by `admin` (its ADMIN), with `boss` (ADMIN), `ann`, `bob`, `cat`
    (MEMBERs) and `vic` (VIEWER)."""

    workspace: dict[str, Any]
    project: dict[str, Any]
    apis: dict[str, Api]
    ids: dict[str, str]

    def inbox(self, who: str, query: str = "") -> dict[str, Any]:
        data: dict[str, Any] = self.apis[who].ok("GET", f"/notifications{query}")
        return data


@pytest.fixture
def team(admin: Api) -> Team:
    return make_team(admin)


def make_team(admin: Api) -> Team:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    me = admin.ok("GET", "/me")
    apis, ids = {"admin": admin}, {"admin": me["$id"]}
    for name, role in [("boss", "ADMIN"), ("ann", "MEMBER"), ("bob", "MEMBER"), ("cat", "MEMBER")]:
        user, api = make_user(admin)
        add_member(admin, workspace["$id"], user["$id"], role)
        apis[name], ids[name] = api, user["$id"]
    user, api = make_user(admin)
    add_member(admin, workspace["$id"], user["$id"], "VIEWER")
    apis["vic"], ids["vic"] = api, user["$id"]
    return Team(workspace, project, apis, ids)


# (what the row shows, actor, assignees before, the change, who is notified)
RECIPIENT_RULE: list[tuple[str, str, list[str], dict[str, Any], set[str]]] = [
    ("assignees hear of any change", "cat", ["ann"], {"title": "New"}, {"ann"}),
    ("admins do not follow descriptions", "cat", ["ann"], {"description": "x"}, {"ann"}),
    ("an unassigned item's labels: nobody", "cat", [], {"labels": ["ui"]}, set()),
    ("admins follow status", "cat", ["ann"], {"status": "DONE"}, {"ann", "admin", "boss"}),
    ("admins follow priority", "cat", [], {"priority": "HIGH"}, {"admin", "boss"}),
    ("admins follow flagged", "cat", [], {"flagged": True}, {"admin", "boss"}),
    (
        "old and new assignees, and admins, hear of assignees",
        "cat",
        ["ann"],
        {"assigneeIds": ["bob"]},
        {"ann", "bob", "admin", "boss"},
    ),
    ("never the actor", "ann", ["ann", "bob"], {"title": "Mine"}, {"bob"}),
    ("never the acting admin", "boss", ["ann"], {"status": "DONE"}, {"ann", "admin"}),
    ("an admin who is assignee hears once", "cat", ["boss"], {"status": "DONE"}, {"boss", "admin"}),
    ("nothing when nothing changed", "cat", ["ann"], {"assigneeIds": ["ann"]}, set()),
]


def test_recipient_rule(team: Team) -> None:
    """Row by row, each on an item of its own; every inbox is checked for every row."""
    rows = []
    for what, actor, assignees, change, notified in RECIPIENT_RULE:
        task = make_task(
            team.apis["admin"], team.project, assigneeIds=[team.ids[a] for a in assignees]
        )
        if "assigneeIds" in change:
            change = {"assigneeIds": [team.ids[a] for a in change["assigneeIds"]]}
        team.apis[actor].ok("PATCH", f"/tasks/{task['$id']}", change)
        rows.append((what, task["$id"], notified))

    inboxes = {who: team.inbox(who, "?limit=500")["documents"] for who in team.apis}
    for what, task_id, notified in rows:
        got = {
            who: sum(n["workItemId"] == task_id for n in inbox) for who, inbox in inboxes.items()
        }
        assert got == {who: int(who in notified) for who in team.apis}, what
    assert sum(len(inbox) for inbox in inboxes.values()) == sum(len(r[2]) for r in rows)


def test_sprint_moves_notify_assignees_and_admins(team: Team, database: Database) -> None:
    """A sprint change (as a sprint completion writes it, through `record_many`)."""
    task = make_task(team.apis["admin"], team.project, assigneeIds=[team.ids["ann"]])
    item = {**task, "sprintId": None}
    with database.transaction() as session:
        events.record_many(
            session,
            [
                {
                    "workspace_id": team.workspace["$id"],
                    "type": "task.updated",
                    "subject_id": task["$id"],
                    "actor_id": team.ids["cat"],
                    "payload": {
                        "workItem": item,
                        "changes": {"sprintId": {"from": "s1", "to": None}},
                    },
                }
            ],
        )
    counts = {who: team.inbox(who)["total"] for who in team.apis}
    assert counts == {"admin": 1, "boss": 1, "ann": 1, "bob": 0, "cat": 0, "vic": 0}


def test_notification_fields_and_reading(team: Team) -> None:
    admin = team.apis["admin"]
    task = make_task(admin, team.project, name="Fix login", assigneeIds=[team.ids["ann"]])
    admin.ok("PATCH", f"/tasks/{task['$id']}", {"priority": "HIGH"})
    admin.ok("PATCH", f"/tasks/{task['$id']}", {"title": "Fix the login"})

    inbox = team.inbox("ann")
    assert inbox["total"] == 2
    newest, oldest = inbox["documents"]
    assert newest["changes"] == {"title": {"from": "Fix login", "to": "Fix the login"}}
    assert oldest == {
        "$id": oldest["$id"],
        "type": "task.updated",
        "workspaceId": team.workspace["$id"],
        "eventId": oldest["eventId"],
        "workItemId": task["$id"],
        "workItemKey": task["key"],
        "workItemTitle": "Fix login",
        "actorId": team.ids["admin"],
        "changes": {"priority": {"from": "MEDIUM", "to": "HIGH"}},
        "read": False,
        "$createdAt": oldest["$createdAt"],
        "$updatedAt": oldest["$updatedAt"],
    }

    ann = team.apis["ann"]
    read = ann.ok("POST", f"/notifications/{oldest['$id']}/read", status=200)
    assert read["read"] is True
    assert ann.ok("POST", f"/notifications/{oldest['$id']}/read", status=200)["read"] is True
    unread = team.inbox("ann", "?unread=true")
    assert [n["$id"] for n in unread["documents"]] == [newest["$id"]]
    assert unread["total"] == 1

    # Someone else's notification does not exist, as far as others can tell.
    response = team.apis["boss"].post(f"/notifications/{newest['$id']}/read")
    assert response.status_code == 404
    assert team.apis["boss"].post("/notifications/nope/read").status_code == 404

    # These actions take no fields: a body, if sent, is `{}`.
    for path in ("/notifications/read-all", f"/notifications/{newest['$id']}/read"):
        refused = ann.post(path, json={"bogus": 1})
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["details"] == {"field": "bogus", "reason": "unknown_field"}
    assert team.inbox("ann", "?unread=true")["total"] == 1
    assert ann.ok("POST", "/notifications/read-all", {}, status=200) == {"updated": 1}
    assert ann.ok("POST", "/notifications/read-all", status=200) == {"updated": 0}
    assert team.inbox("ann", "?unread=true") == {"documents": [], "total": 0, "nextCursor": None}
    assert team.inbox("ann")["total"] == 2
    # Boss's own inbox (an ADMIN, notified of the priority change) is untouched.
    assert team.inbox("boss", "?unread=true")["total"] == 1


def test_bulk_updates_notify(team: Team) -> None:
    admin = team.apis["admin"]
    tasks = [make_task(admin, team.project, assigneeIds=[team.ids["ann"]]) for _ in range(6)]
    team.apis["cat"].ok(
        "POST",
        "/tasks/bulk-update",
        {"tasks": [{"$id": t["$id"], "status": "DONE"} for t in tasks]},
        status=200,
    )
    assert team.inbox("ann")["total"] == 6
    assert team.inbox("boss")["total"] == 6
    assert team.inbox("cat")["total"] == 0
    # Made in one millisecond, listed newest first all the same: in the bulk's order, reversed.
    newest_first = [n["workItemId"] for n in team.inbox("ann")["documents"]]
    assert newest_first == [t["$id"] for t in reversed(tasks)]


def test_one_batch_of_different_changes_notifies_each_as_its_own(team: Team) -> None:
    """One bulk update whose items share assignees but not their change: each is notified
    as the rule says (the batch works out an audience once for those that share one)."""
    admin, ids = team.apis["admin"], team.ids
    ann = [ids["ann"]]
    tasks = [make_task(admin, team.project, assigneeIds=ann if n < 4 else []) for n in range(5)]
    changes = [
        ({"title": "New"}, {"ann"}),
        ({"assigneeIds": [ids["bob"]]}, {"ann", "bob", "admin", "boss"}),
        ({"status": "DONE"}, {"ann", "admin", "boss"}),
        ({"assigneeIds": [ids["ann"], ids["cat"]]}, {"ann", "admin", "boss"}),
        ({"assigneeIds": ann}, {"ann", "admin", "boss"}),
    ]
    entries = [
        {"$id": task["$id"], **change} for task, (change, _) in zip(tasks, changes, strict=True)
    ]
    team.apis["cat"].ok("POST", "/tasks/bulk-update", {"tasks": entries}, status=200)
    inboxes = {who: team.inbox(who, "?limit=500")["documents"] for who in team.apis}
    for task, (change, notified) in zip(tasks, changes, strict=True):
        got = {
            who
            for who, inbox in inboxes.items()
            if any(n["workItemId"] == task["$id"] for n in inbox)
        }
        assert got == notified, change


def test_a_key_restricted_to_a_workspace_sees_only_its_notifications(
    admin: Api, team: Team
) -> None:
    other = make_workspace(admin)
    add_member(admin, other["$id"], team.ids["ann"], "MEMBER")
    other_task = make_task(admin, make_project(admin, other["$id"]), assigneeIds=[team.ids["ann"]])
    admin.ok("PATCH", f"/tasks/{other_task['$id']}", {"title": "Elsewhere"})
    task = make_task(admin, team.project, assigneeIds=[team.ids["ann"]])
    admin.ok("PATCH", f"/tasks/{task['$id']}", {"title": "Here"})

    assert team.inbox("ann")["total"] == 2
    narrow = admin.ok(
        "POST", f"/users/{team.ids['ann']}/keys", {"name": "narrow", "workspaceId": other["$id"]}
    )
    narrow_api = admin.as_(narrow["key"])
    inbox = narrow_api.ok("GET", "/notifications")
    assert [n["workItemId"] for n in inbox["documents"]] == [other_task["$id"]]
    assert narrow_api.ok("POST", "/notifications/read-all", status=200) == {"updated": 1}
    assert team.inbox("ann", "?unread=true")["total"] == 1
