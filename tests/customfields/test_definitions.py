"""A workspace's custom fields (§17): their definitions and the rules for them."""

from typing import Any

import pytest

from tests.factories import Api, add_member, make_user, make_workspace
from tests.workitem_factories import Board, make_board


def error_of(response: Any) -> dict[str, Any]:
    error: dict[str, Any] = response.json()["error"]
    return error


def add_field(board: Board, key: str, type_: str = "text", **body: Any) -> dict[str, Any]:
    made: dict[str, Any] = board.api.ok(
        "POST",
        f"/workspaces/{board.workspace_id}/fields",
        {"key": key, "name": body.pop("name", key.capitalize()), "type": type_, **body},
    )
    return made


def test_a_field_is_made_listed_read_and_audited(admin: Api) -> None:
    board = make_board(admin)
    made = add_field(board, "severity", "select", name="Severity", options=["LOW", "HIGH"])
    assert {k: made[k] for k in ("key", "name", "type", "options", "description")} == {
        "key": "severity",
        "name": "Severity",
        "type": "select",
        "options": ["LOW", "HIGH"],
        "description": None,
    }
    assert made["$createdAt"].endswith("Z")
    note = add_field(board, "note", description="Anything")
    assert (note["options"], note["description"]) == (None, "Anything")
    listed = admin.ok("GET", f"/workspaces/{board.workspace_id}/fields")
    assert [f["key"] for f in listed["documents"]] == ["severity", "note"]
    assert listed["total"] == 2
    assert admin.ok("GET", f"/fields/{made['$id']}") == made
    actions = [e["action"] for e in admin.ok("GET", "/audit?limit=500")["documents"]]
    assert "field.created" in actions


@pytest.mark.parametrize(
    ("body", "field", "reason"),
    [
        ({"key": "Severity"}, "key", "invalid_format"),
        ({"key": "1abc"}, "key", "invalid_format"),
        ({"key": "a_b"}, "key", "invalid_format"),
        ({"key": "a" * 33}, "key", "too_long"),
        ({"name": ""}, "name", "too_short"),
        ({"name": "n" * 65}, "name", "too_long"),
        ({"type": "money"}, "type", "invalid_value"),
        ({"type": "select"}, "options", "required"),
        ({"type": "text", "options": ["A"]}, "options", "invalid_value"),
        ({"type": "select", "options": []}, "options", "too_short"),
        ({"type": "select", "options": ["A", "A"]}, "options", "invalid_value"),
        (
            {"type": "select", "options": ["o"] * 0 + [f"o{i}" for i in range(101)]},
            "options",
            "too_long",
        ),
        ({"type": "select", "options": ["x" * 65]}, "options", "too_long"),
        ({"extra": 1}, "extra", "unknown_field"),
    ],
)
def test_a_bad_definition_is_refused_naming_its_field(
    admin: Api, body: dict[str, Any], field: str, reason: str
) -> None:
    board = make_board(admin)
    sent = {"key": "sev", "name": "Sev", "type": "text", **body}
    response = admin.post(f"/workspaces/{board.workspace_id}/fields", sent)
    assert response.status_code == 400, response.text
    details = error_of(response)["details"]
    assert (details["field"], details["reason"]) == (field, reason)


def test_keys_are_unique_in_a_workspace_and_fifty_fields_at_most(admin: Api) -> None:
    board = make_board(admin)
    add_field(board, "sev")
    again = admin.post(
        f"/workspaces/{board.workspace_id}/fields", {"key": "sev", "name": "x", "type": "number"}
    )
    assert again.status_code == 409
    assert error_of(again)["details"]["reason"] == "duplicate_field"
    other = make_board(admin)
    add_field(other, "sev")  # (another workspace may have it)
    for n in range(49):
        add_field(board, f"f{n}")
    over = admin.post(
        f"/workspaces/{board.workspace_id}/fields", {"key": "last", "name": "x", "type": "text"}
    )
    assert over.status_code == 409
    assert error_of(over)["details"]["reason"] == "field_limit"


def test_a_field_is_renamed_its_options_added_and_reordered_but_key_and_type_fixed(
    admin: Api,
) -> None:
    board = make_board(admin)
    made = add_field(board, "sev", "select", options=["LOW", "HIGH"])
    changed = admin.ok(
        "PATCH",
        f"/fields/{made['$id']}",
        {"name": "Severity", "description": "How bad", "options": ["HIGH", "MID", "LOW"]},
    )
    assert (changed["name"], changed["description"]) == ("Severity", "How bad")
    assert changed["options"] == ["HIGH", "MID", "LOW"]
    for fixed in ({"key": "other"}, {"type": "text"}):
        response = admin.patch(f"/fields/{made['$id']}", fixed)
        assert response.status_code == 400
        assert error_of(response)["details"]["reason"] == "immutable"
    text = add_field(board, "note")
    response = admin.patch(f"/fields/{text['$id']}", {"options": ["A"]})
    assert error_of(response)["details"] == {"field": "options", "reason": "invalid_value"}
    actions = [e["action"] for e in admin.ok("GET", "/audit?limit=500")["documents"]]
    assert "field.updated" in actions


def test_an_option_an_item_holds_cannot_be_removed(admin: Api) -> None:
    board = make_board(admin)
    made = add_field(board, "sev", "select", options=["LOW", "MID", "HIGH"])
    tags = add_field(board, "tags", "multiselect", options=["a", "b"])
    board.task(fields={"sev": "HIGH", "tags": ["b"]})
    response = admin.patch(f"/fields/{made['$id']}", {"options": ["LOW", "MID"]})
    assert response.status_code == 409
    assert error_of(response)["details"]["reason"] == "option_in_use"
    assert admin.ok("GET", f"/fields/{made['$id']}")["options"] == ["LOW", "MID", "HIGH"]
    kept = admin.ok("PATCH", f"/fields/{made['$id']}", {"options": ["HIGH", "LOW"]})
    assert kept["options"] == ["HIGH", "LOW"]  # (MID held by no item)
    response = admin.patch(f"/fields/{tags['$id']}", {"options": ["a"]})
    assert error_of(response)["details"]["reason"] == "option_in_use"


def test_deleting_a_field_removes_every_value_of_it(admin: Api) -> None:
    board = make_board(admin)
    made = add_field(board, "sev", "select", options=["LOW", "HIGH"])
    add_field(board, "note")
    item = board.task(fields={"sev": "HIGH", "note": "keep"})
    gone = admin.ok("DELETE", f"/fields/{made['$id']}")
    assert gone == {"$id": made["$id"], "deleted": True}
    assert admin.ok("GET", f"/tasks/{item['$id']}")["fields"] == {"note": "keep"}
    assert admin.get(f"/fields/{made['$id']}").status_code == 404
    again = add_field(board, "sev", "select", options=["LOW", "HIGH"])
    assert admin.ok("GET", f"/tasks/{item['$id']}")["fields"] == {"note": "keep"}
    listed = admin.ok("GET", f"/tasks?workspaceId={board.workspace_id}&fields.sev=HIGH")
    assert listed["total"] == 0, again
    actions = [e["action"] for e in admin.ok("GET", "/audit?limit=500")["documents"]]
    assert "field.deleted" in actions


def test_members_read_fields_and_only_admins_manage_them(admin: Api) -> None:
    board = make_board(admin)
    made = add_field(board, "sev")
    member, as_member = make_user(admin)
    add_member(admin, board.workspace_id, member["$id"], "MEMBER")
    assert as_member.ok("GET", f"/workspaces/{board.workspace_id}/fields")["total"] == 1
    refused = as_member.post(
        f"/workspaces/{board.workspace_id}/fields", {"key": "x", "name": "x", "type": "text"}
    )
    assert refused.status_code == 403
    assert as_member.patch(f"/fields/{made['$id']}", {"name": "y"}).status_code == 403
    assert as_member.delete(f"/fields/{made['$id']}").status_code == 403
    _, stranger = make_user(admin)
    make_workspace(stranger)
    assert stranger.get(f"/workspaces/{board.workspace_id}/fields").status_code == 404
    assert stranger.get(f"/fields/{made['$id']}").status_code == 404
    assert stranger.patch(f"/fields/{made['$id']}", {"name": "y"}).status_code == 404
    assert stranger.delete(f"/fields/{made['$id']}").status_code == 404
