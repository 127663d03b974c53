"""Custom fields in the query language (§18: `fields.<key>` in clauses and `ORDER BY`),
answered from their typed values, on both databases."""

from typing import Any
from urllib.parse import quote

from tests.customfields.test_definitions import add_field, error_of
from tests.customfields.test_lists import board_of_fields, keys
from tests.factories import Api
from tests.workitem_factories import Board


def query(board: Board, text: str, **params: Any) -> dict[str, Any]:
    return board.list(q=text, **params)


def test_each_type_matches_as_its_filter_does(admin: Api) -> None:
    board = board_of_fields(admin)
    assert keys(query(board, "fields.severity = HIGH")) == ["a"]
    assert keys(query(board, "fields.severity = high")) == ["a"]  # (options in any case)
    assert keys(query(board, "fields.severity IN (HIGH, LOW)")) == ["a", "b"]
    assert keys(query(board, "fields.tags = db")) == ["b"]
    assert keys(query(board, "fields.tags IN (db, ui)")) == ["a", "b"]
    assert keys(query(board, "fields.estimate = 5")) == ["a"]
    assert keys(query(board, "fields.done = true")) == ["c"]
    assert keys(query(board, "fields.done = false")) == ["d"]
    assert keys(query(board, 'fields.note = "x"')) == ["c"]
    assert keys(query(board, "FIELDS.Severity = MID")) == ["d"]


def test_not_equal_skips_the_unset_and_is_empty_finds_them(admin: Api) -> None:
    board = board_of_fields(admin)
    assert keys(query(board, "fields.severity != HIGH")) == ["b", "d"]
    assert keys(query(board, "fields.tags NOT IN (ui)")) == ["b"]
    assert keys(query(board, "fields.severity IS EMPTY")) == ["c"]
    assert keys(query(board, "fields.severity IS NOT EMPTY")) == ["a", "b", "d"]
    assert keys(query(board, "NOT fields.severity = HIGH")) == ["b", "c", "d"]


def test_numbers_and_selects_compare_a_select_by_its_options_order(admin: Api) -> None:
    board = board_of_fields(admin)
    assert keys(query(board, "fields.estimate > 0")) == ["a", "c"]
    assert keys(query(board, "fields.estimate <= 5")) == ["a", "b"]
    assert keys(query(board, "fields.severity >= MID")) == ["a", "d"]
    assert keys(query(board, "fields.severity < MID")) == ["b"]
    assert keys(query(board, "fields.note ~ X")) == ["c"]
    both = query(board, "fields.estimate > 0 AND fields.done = true")
    assert (keys(both), both["total"]) == (["c"], 1)


def test_dates_and_users_match(admin: Api) -> None:
    board = board_of_fields(admin)
    add_field(board, "due", "date")
    add_field(board, "owner", "user")
    me = admin.ok("GET", "/me")["$id"]
    board.task(title="e", fields={"due": "2026-03-01", "owner": me})
    board.task(title="f", fields={"due": "2026-05-01"})
    assert keys(query(board, "fields.due < 2026-04-01")) == ["e"]
    assert keys(query(board, "fields.due >= 2026-03-01")) == ["e", "f"]
    assert keys(query(board, "fields.owner = currentUser()")) == ["e"]
    assert keys(query(board, f'fields.owner = "{me}"')) == ["e"]


def test_order_by_a_custom_field_puts_the_unset_last_both_ways(admin: Api) -> None:
    board = board_of_fields(admin)
    assert keys(query(board, "ORDER BY fields.estimate")) == ["b", "a", "c", "d"]
    assert keys(query(board, "ORDER BY fields.estimate DESC")) == ["c", "a", "b", "d"]
    assert keys(query(board, "ORDER BY fields.severity DESC")) == ["a", "d", "b", "c"]
    page = query(board, "fields.estimate IS NOT EMPTY ORDER BY fields.estimate", limit=2)
    assert keys(page) == ["b", "a"]
    rest = query(
        board, "fields.estimate IS NOT EMPTY ORDER BY fields.estimate", cursor=page["nextCursor"]
    )
    assert keys(rest) == ["c"]


def test_a_saved_view_runs_a_custom_field_query(admin: Api) -> None:
    board = board_of_fields(admin)
    view = admin.ok(
        "POST",
        f"/workspaces/{board.workspace_id}/views",
        {"name": "Hot", "query": "fields.severity = HIGH ORDER BY fields.estimate"},
    )
    assert keys(admin.ok("GET", f"/views/{view['$id']}/items")) == ["a"]


def test_an_unknown_field_or_option_is_refused_with_its_position(admin: Api) -> None:
    board = board_of_fields(admin)
    for text, at, words in (
        ("fields.severty = HIGH", 0, "did you mean 'fields.severity'"),
        ("status = DONE AND fields.severity = HIHG", 36, "did you mean 'HIGH'"),
        ("fields.estimate = many", 18, "takes a number"),
        ("fields.done > true", 12, "does not take >"),
        ("ORDER BY fields.nope", 9, "unknown field 'fields.nope'"),
    ):
        response = admin.get(f"/tasks?workspaceId={board.workspace_id}&q={quote(text)}")
        assert response.status_code == 400, (text, response.text)
        error = error_of(response)
        assert error["details"]["reason"] == "invalid_query"
        assert error["details"]["position"] == at, (text, error)
        assert words in error["message"], (text, error["message"])
