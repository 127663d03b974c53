"""`GET /tasks` by custom fields (§17): `fields.<key>=` filters (any of the values; `none`:
unset) and `sort=fields.<key>` (a select by its options' order; unset last both ways)."""

from typing import Any

from tests.customfields.test_definitions import add_field, error_of
from tests.factories import Api
from tests.workitem_factories import Board, make_board


def keys(page: dict[str, Any]) -> list[str]:
    return [item["title"] for item in page["documents"]]


def board_of_fields(admin: Api) -> Board:
    board = make_board(admin)
    add_field(board, "severity", "select", options=["LOW", "MID", "HIGH"])
    add_field(board, "tags", "multiselect", options=["ui", "api", "db"])
    add_field(board, "estimate", "number")
    add_field(board, "done", "checkbox")
    add_field(board, "note")
    board.task(title="a", fields={"severity": "HIGH", "tags": ["ui"], "estimate": 5})
    board.task(title="b", fields={"severity": "LOW", "tags": ["api", "db"], "estimate": -1})
    board.task(title="c", fields={"estimate": 20, "done": True, "note": "x"})
    board.task(title="d", fields={"severity": "MID", "done": False})
    return board


def test_a_filter_keeps_the_items_holding_any_of_its_values(admin: Api) -> None:
    board = board_of_fields(admin)
    assert keys(board.list(**{"fields.severity": "HIGH"})) == ["a"]
    page = board.list(**{"fields.severity": "HIGH,LOW"})
    assert (keys(page), page["total"]) == (["a", "b"], 2)
    assert keys(board.list(**{"fields.severity": "none"})) == ["c"]
    assert keys(board.list(**{"fields.severity": "none,MID"})) == ["c", "d"]
    assert keys(board.list(**{"fields.tags": "db,ui"})) == ["a", "b"]
    assert keys(board.list(**{"fields.tags": "none"})) == ["c", "d"]
    assert keys(board.list(**{"fields.estimate": "5,20"})) == ["a", "c"]
    assert keys(board.list(**{"fields.done": "false"})) == ["d"]
    assert keys(board.list(**{"fields.note": "x"})) == ["c"]
    both = board.list(**{"fields.severity": "none", "fields.done": "true"})
    assert (keys(both), both["total"]) == (["c"], 1)
    paged = board.list(**{"fields.severity": "HIGH,LOW,MID", "limit": 2})
    assert (keys(paged), paged["total"]) == (["a", "b"], 3)
    rest = board.list(**{"fields.severity": "HIGH,LOW,MID", "cursor": paged["nextCursor"]})
    assert keys(rest) == ["d"]


def test_a_filter_names_its_bad_parameter(admin: Api) -> None:
    board = board_of_fields(admin)
    for params, reason in (
        ({"fields.nope": "x"}, "unknown_field"),
        ({"fields.severity": "URGENT"}, "invalid_value"),
        ({"fields.estimate": "many"}, "invalid_value"),
        ({"fields.done": "yes"}, "invalid_value"),
    ):
        query = "&".join(f"{k}={v}" for k, v in params.items())
        response = admin.get(f"/tasks?workspaceId={board.workspace_id}&{query}")
        assert response.status_code == 400, response.text
        assert error_of(response)["details"] == {"field": next(iter(params)), "reason": reason}
    response = admin.get(f"/tasks?workspaceId={board.workspace_id}&field.severity=LOW")
    assert error_of(response)["details"]["reason"] == "unknown_field"


def test_a_sort_by_a_field_puts_unset_values_last_both_ways(admin: Api) -> None:
    board = board_of_fields(admin)
    assert keys(board.list(sort="fields.severity")) == ["b", "d", "a", "c"]
    assert keys(board.list(sort="-fields.severity")) == ["a", "d", "b", "c"]
    assert keys(board.list(sort="fields.estimate")) == ["b", "a", "c", "d"]
    assert keys(board.list(sort="-fields.estimate")) == ["c", "a", "b", "d"]
    assert keys(board.list(sort="fields.tags")) == ["a", "b", "c", "d"]
    assert keys(board.list(sort="fields.done,-fields.estimate")) == ["d", "c", "a", "b"]
    first = board.list(sort="-fields.estimate", limit=2)
    assert keys(first) == ["c", "a"]
    assert keys(board.list(sort="-fields.estimate", cursor=first["nextCursor"])) == ["b", "d"]
    response = admin.get(f"/tasks?workspaceId={board.workspace_id}&sort=fields.nope")
    assert error_of(response)["details"] == {"field": "sort", "reason": "invalid_value"}


def test_reordered_options_reorder_the_sort(admin: Api) -> None:
    board = board_of_fields(admin)
    fields = admin.ok("GET", f"/workspaces/{board.workspace_id}/fields")["documents"]
    severity = next(f for f in fields if f["key"] == "severity")
    admin.ok("PATCH", f"/fields/{severity['$id']}", {"options": ["HIGH", "MID", "LOW"]})
    assert keys(board.list(sort="fields.severity")) == ["a", "d", "b", "c"]
