"""Custom field values on work items (§17): carried by every item, taken by create, PATCH,
bulk create and bulk update, refused by name, and recorded in `task.updated` events."""

from typing import Any

import pytest

from tests.customfields.test_definitions import add_field, error_of
from tests.factories import Api, add_member, make_user
from tests.workitem_factories import Board, make_board


def fielded(admin: Api) -> Board:
    """A board whose workspace has one field of each type."""
    board = make_board(admin)
    add_field(board, "note")
    add_field(board, "estimate", "number")
    add_field(board, "due", "date")
    add_field(board, "severity", "select", options=["LOW", "MID", "HIGH"])
    add_field(board, "tags", "multiselect", options=["ui", "api", "db"])
    add_field(board, "owner", "user")
    add_field(board, "link", "url")
    add_field(board, "done", "checkbox")
    return board


def events_of(board: Board, item_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = board.api.ok("GET", f"/tasks/{item_id}/activity?limit=100")[
        "documents"
    ]
    return found


def test_items_carry_their_fields_everywhere(admin: Api) -> None:
    board = fielded(admin)
    me = admin.ok("GET", "/me")
    plain = board.task()
    assert plain["fields"] == {}
    values = {
        "note": "  Needs a look  ",
        "estimate": 2.5,
        "due": "2026-12-24",
        "severity": "HIGH",
        "tags": ["db", "ui"],
        "owner": me["$id"],
        "link": "https://example.com/a",
        "done": False,
    }
    made = board.task(fields=values)
    shown = {**values, "note": "Needs a look", "tags": ["ui", "db"]}
    assert made["fields"] == shown
    assert admin.ok("GET", f"/tasks/{made['$id']}")["fields"] == shown
    listed = {i["$id"]: i["fields"] for i in board.list()["documents"]}
    assert listed == {plain["$id"]: {}, made["$id"]: shown}
    bulk = admin.ok(
        "POST",
        "/tasks/bulk-create",
        {"tasks": [board.body(fields={"estimate": 3}), board.body()]},
    )
    assert [i["fields"] for i in bulk["documents"]] == [{"estimate": 3}, {}]


def test_a_patch_changes_only_the_keys_it_sends_and_null_clears(admin: Api) -> None:
    board = fielded(admin)
    item = board.task(fields={"note": "a", "severity": "LOW"})
    changed = admin.ok("PATCH", f"/tasks/{item['$id']}", {"fields": {"severity": "HIGH"}})
    assert changed["fields"] == {"note": "a", "severity": "HIGH"}
    cleared = admin.ok("PATCH", f"/tasks/{item['$id']}", {"fields": {"note": None}})
    assert cleared["fields"] == {"severity": "HIGH"}
    events = [e for e in events_of(board, item["$id"]) if e["type"] == "task.updated"]
    assert [e["payload"]["changes"] for e in events][-2:] in (
        [
            {"fields.severity": {"from": "LOW", "to": "HIGH"}},
            {"fields.note": {"from": "a", "to": None}},
        ],
        [
            {"fields.note": {"from": "a", "to": None}},
            {"fields.severity": {"from": "LOW", "to": "HIGH"}},
        ],
    )
    same = admin.ok("PATCH", f"/tasks/{item['$id']}", {"fields": {"severity": "HIGH"}})
    assert same["$updatedAt"] == cleared["$updatedAt"]
    assert len([e for e in events_of(board, item["$id"]) if e["type"] == "task.updated"]) == 2
    assert board.list(**{"fields.note": "none"})["total"] == 1


def test_a_bulk_update_changes_fields_of_each_entry(admin: Api) -> None:
    board = fielded(admin)
    first, second = board.task(fields={"estimate": 1}), board.task()
    updated = admin.ok(
        "POST",
        "/tasks/bulk-update",
        {
            "tasks": [
                {"$id": first["$id"], "fields": {"estimate": None, "done": True}},
                {"key": second["key"], "fields": {"tags": ["api"]}, "status": "TODO"},
            ]
        },
        status=200,
    )
    assert [i["fields"] for i in updated["documents"]] == [{"done": True}, {"tags": ["api"]}]
    assert board.list(**{"fields.tags": "api"})["total"] == 1


BAD = [
    ({"nope": 1}, "nope", "unknown_field"),
    ({"note": 3}, "note", "invalid_type"),
    ({"note": "x" * 4001}, "note", "invalid_value"),
    ({"estimate": "3"}, "estimate", "invalid_type"),
    ({"estimate": True}, "estimate", "invalid_type"),
    ({"estimate": 1e13}, "estimate", "invalid_value"),
    ({"due": "24/12/2026"}, "due", "invalid_value"),
    ({"due": "2026-02-30"}, "due", "invalid_value"),
    ({"severity": "URGENT"}, "severity", "invalid_value"),
    ({"severity": ["LOW"]}, "severity", "invalid_type"),
    ({"tags": "ui"}, "tags", "invalid_type"),
    ({"tags": ["ui", "ui"]}, "tags", "invalid_value"),
    ({"tags": ["web"]}, "tags", "invalid_value"),
    ({"owner": "someone-else"}, "owner", "invalid_value"),
    ({"link": "ftp://example.com"}, "link", "invalid_value"),
    ({"link": "https://" + "a" * 2000}, "link", "invalid_value"),
    ({"done": "yes"}, "done", "invalid_type"),
]


@pytest.mark.parametrize(("sent", "key", "reason"), BAD)
def test_a_bad_value_is_refused_naming_its_field(
    admin: Api, sent: dict[str, Any], key: str, reason: str
) -> None:
    board = fielded(admin)
    created = admin.post("/tasks", board.body(fields=sent))
    assert created.status_code == 400, created.text
    assert error_of(created)["details"] == {"field": f"fields.{key}", "reason": reason}
    item = board.task(fields={"note": "kept"})
    patched = admin.patch(f"/tasks/{item['$id']}", {"fields": sent})
    assert error_of(patched)["details"] == {"field": f"fields.{key}", "reason": reason}
    bulk = admin.post(
        "/tasks/bulk-create", {"tasks": [board.body(), board.body(), board.body(fields=sent)]}
    )
    assert error_of(bulk)["details"] == {"field": f"tasks[2].fields.{key}", "reason": reason}
    moved = admin.post(
        "/tasks/bulk-update",
        {
            "tasks": [
                {"$id": item["$id"], "fields": {"note": "x"}},
                {"$id": board.task()["$id"], "fields": sent},
            ]
        },
    )
    assert error_of(moved)["details"] == {"field": f"tasks[1].fields.{key}", "reason": reason}
    assert admin.ok("GET", f"/tasks/{item['$id']}")["fields"] == {"note": "kept"}
    assert board.list()["total"] == 2


def test_a_user_field_takes_members_of_the_workspace(admin: Api) -> None:
    board = fielded(admin)
    member, _ = make_user(admin)
    add_member(admin, board.workspace_id, member["$id"], "MEMBER")
    item = board.task(fields={"owner": member["$id"]})
    assert item["fields"] == {"owner": member["$id"]}
    outsider, _ = make_user(admin)
    refused = admin.patch(f"/tasks/{item['$id']}", {"fields": {"owner": outsider["$id"]}})
    assert error_of(refused)["details"] == {"field": "fields.owner", "reason": "invalid_value"}


def test_fields_must_be_an_object(admin: Api) -> None:
    board = fielded(admin)
    response = admin.post("/tasks", board.body(fields=["note"]))
    assert error_of(response)["details"]["field"] == "fields"
    item = board.task()
    response = admin.patch(f"/tasks/{item['$id']}", {"fields": None})
    assert response.status_code == 400


def test_a_field_change_notifies_assignees(admin: Api) -> None:
    board = fielded(admin)
    member, as_member = make_user(admin)
    add_member(admin, board.workspace_id, member["$id"], "MEMBER")
    item = board.task(assigneeIds=[member["$id"]])
    admin.ok("PATCH", f"/tasks/{item['$id']}", {"fields": {"severity": "MID"}})
    inbox = as_member.ok("GET", "/notifications")["documents"]
    assert [n["changes"] for n in inbox] == [{"fields.severity": {"from": None, "to": "MID"}}]
