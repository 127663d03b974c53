"""`text ~` (contract §18): full-text search over titles, descriptions and comments, through
each database's own text index, kept current in the transaction of every change."""

import pytest

from tests.factories import Api
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def found(board: Board, words: str) -> list[str]:
    escaped = words.replace("\\", "\\\\").replace('"', '\\"')
    page = board.list(q=f'text ~ "{escaped}"', limit=500)
    assert page["total"] == len(page["documents"])
    return sorted(item["key"] for item in page["documents"])


def test_whole_words_in_any_case_without_stemming(board: Board) -> None:
    board.task(name="Login timeout on mobile")  # WEB-1
    board.task(name="Logins", description="The session TIMED out")  # WEB-2
    board.task(name="Other", description="nothing here: login")  # WEB-3
    assert found(board, "login timeout") == ["WEB-1"]  # every word
    assert found(board, "LOGIN") == ["WEB-1", "WEB-3"]  # as whole words, any case
    assert found(board, "logins") == ["WEB-2"]  # no stemming
    assert found(board, "time*") == ["WEB-1", "WEB-2"]  # a prefix
    assert found(board, "timeo*") == ["WEB-1"]
    assert found(board, "imeout") == []
    assert found(board, "session timed") == ["WEB-2"]  # in the description
    assert found(board, 'login "OR" NOT') == []  # (the engine's operators are words)
    page = board.list(q='text !~ "login"', limit=50)
    assert [item["key"] for item in page["documents"]] == ["WEB-2"]
    both = board.list(q='text ~ "login" AND key != WEB-3 OR text ~ "timed"', limit=50)
    assert sorted(item["key"] for item in both["documents"]) == ["WEB-1", "WEB-2"]


def test_comments_are_searched_and_every_change_is_seen_at_once(board: Board) -> None:
    item = board.task(name="Checkout")
    other = board.task(name="Cart")
    comment = board.api.ok("POST", f"/tasks/{item['$id']}/comments", {"body": "Payment declined"})
    board.api.ok("POST", f"/tasks/{other['$id']}/comments", {"body": "declined twice"})
    assert found(board, "payment declined") == ["WEB-1"]
    assert found(board, "declined") == ["WEB-1", "WEB-2"]
    board.api.ok("PATCH", f"/comments/{comment['$id']}", {"body": "Refund issued"})
    assert found(board, "payment") == []
    assert found(board, "refund checkout") == ["WEB-1"]
    board.api.ok("DELETE", f"/comments/{comment['$id']}")
    assert found(board, "refund") == []
    board.api.ok("PATCH", f"/tasks/{item['$id']}", {"title": "Basket", "description": "Émile's"})
    assert found(board, "checkout") == []
    assert found(board, "basket") == ["WEB-1"]
    assert found(board, "émile") == ["WEB-1"]  # (as written: accents are kept)
    board.api.ok("DELETE", f"/tasks/{other['$id']}")
    assert found(board, "declined") == []
    made = board.api.ok(
        "POST",
        "/tasks/bulk-create",
        {"tasks": [board.body(name="Bulk one"), board.body(name="Bulk two")]},
        status=201,
    )
    assert len(made["documents"]) == 2
    assert found(board, "bulk") == ["WEB-3", "WEB-4"]


def test_only_the_callers_workspace_is_searched(board: Board, admin: Api) -> None:
    board.task(name="Secret roadmap")
    elsewhere = make_board(admin, key="OPS")
    assert elsewhere.list(q='text ~ "roadmap"')["documents"] == []
