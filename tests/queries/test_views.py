"""Saved views (contract §18): private and shared, who may change them, their items."""

from typing import Any

import pytest

from sprintboard.db import Database
from sprintboard.models import SavedView
from sprintboard.queries.views import VIEW_LIMIT
from tests.factories import Api
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def save(api: Api, board: Board, **fields: Any) -> dict[str, Any]:
    body = {"name": "Mine", "query": "status = TODO", **fields}
    view: dict[str, Any] = api.ok("POST", f"/workspaces/{board.workspace_id}/views", body)
    return view


def test_a_view_is_saved_with_its_defaults_and_read_back(board: Board) -> None:
    view = save(board.api, board)
    assert view["workspaceId"] == board.workspace_id
    assert view["layout"] == "list"
    assert view["groupBy"] is None
    assert view["visibleFields"] is None
    assert view["shared"] is False
    assert view["ownerId"] == board.api.ok("GET", "/me")["$id"]
    assert board.api.ok("GET", f"/views/{view['$id']}") == view
    full = save(
        board.api,
        board,
        name="Board",
        query="priority >= HIGH ORDER BY priority DESC",
        layout="board",
        groupBy="assignee",
        visibleFields=["key", "title", "$updatedAt", "fields.severity"],
        shared=True,
    )
    assert (full["layout"], full["groupBy"], full["shared"]) == ("board", "assignee", True)
    for group in ("status", "priority", "type", "epic", "sprint", "fields.severity"):
        assert save(board.api, board, groupBy=group)["groupBy"] == group


@pytest.mark.parametrize(
    ("body", "field", "reason"),
    [
        ({"query": "stauts = TODO"}, "query", "invalid_query"),
        ({"query": "x" * 4_001}, "query", "too_long"),
        ({"groupBy": "colour"}, "groupBy", None),
        ({"layout": "grid"}, "layout", None),
        ({"visibleFields": ["nope"]}, "visibleFields", None),
        ({"name": " "}, "name", "too_short"),
        ({"ownerId": "x"}, "ownerId", "read_only"),
    ],
)
def test_a_bad_view_is_refused(
    board: Board, body: dict[str, Any], field: str, reason: str | None
) -> None:
    response = board.api.post(
        f"/workspaces/{board.workspace_id}/views", {"name": "V", "query": "", **body}
    )
    assert response.status_code == 400, response.text
    details = response.json()["error"]["details"]
    assert details["field"] == field
    if reason is not None:
        assert details["reason"] == reason
    if reason == "invalid_query":
        assert details["position"] == 0
        assert "did you mean 'status'?" in response.json()["error"]["message"]


def test_private_views_are_the_owners_alone(board: Board) -> None:
    member_user, member = board.member("MEMBER")
    private = save(board.api, board, name="Private")
    shared = save(board.api, board, name="Shared", shared=True)
    theirs = save(member, board, name="Theirs")
    listed = member.ok("GET", f"/workspaces/{board.workspace_id}/views")
    assert [v["name"] for v in listed["documents"]] == ["Shared", "Theirs"]
    assert listed["total"] == 2
    for method in ("GET", "PATCH", "DELETE"):
        response = member.request(
            method, f"/views/{private['$id']}", json={"name": "x"} if method == "PATCH" else None
        )
        assert response.status_code == 404
    assert member.get(f"/views/{private['$id']}/items").status_code == 404
    assert member.ok("GET", f"/views/{shared['$id']}")["name"] == "Shared"
    # An ADMIN of the workspace does not see a member's private view either.
    assert board.api.get(f"/views/{theirs['$id']}").status_code == 404
    admin_list = board.api.ok("GET", f"/workspaces/{board.workspace_id}/views")
    assert [v["name"] for v in admin_list["documents"]] == ["Private", "Shared"]
    assert member_user["$id"] == theirs["ownerId"]
    outsider = make_board(board.api).member("ADMIN")[1]
    assert outsider.get(f"/views/{shared['$id']}").status_code == 404
    assert outsider.get(f"/workspaces/{board.workspace_id}/views").status_code == 404


def test_shared_views_are_changed_by_their_owner_or_an_admin(board: Board) -> None:
    _, member = board.member("MEMBER")
    _, other = board.member("MEMBER")
    _, viewer = board.member("VIEWER")
    shared = save(member, board, name="Team", shared=True)
    refused = other.patch(f"/views/{shared['$id']}", {"name": "Mine now"})
    assert refused.status_code == 403
    assert refused.json()["error"]["details"] == {"reason": "not_owner"}
    assert other.delete(f"/views/{shared['$id']}").status_code == 403
    assert viewer.patch(f"/views/{shared['$id']}", {"name": "x"}).status_code == 403
    renamed = member.ok(
        "PATCH", f"/views/{shared['$id']}", {"name": "Team board", "layout": "board"}
    )
    assert (renamed["name"], renamed["layout"]) == ("Team board", "board")
    assert renamed["$updatedAt"] >= shared["$updatedAt"]
    by_admin = board.api.ok("PATCH", f"/views/{shared['$id']}", {"groupBy": "status"})
    assert by_admin["groupBy"] == "status"
    cleared = board.api.ok("PATCH", f"/views/{shared['$id']}", {"groupBy": None})
    assert cleared["groupBy"] is None
    bad = member.patch(f"/views/{shared['$id']}", {"query": "priority = HIHG"})
    assert bad.status_code == 400
    assert bad.json()["error"]["details"] == {
        "field": "query",
        "reason": "invalid_query",
        "position": 11,
    }
    assert member.patch(f"/views/{shared['$id']}", {"name": None}).status_code == 400
    deleted = board.api.ok("DELETE", f"/views/{shared['$id']}")
    assert deleted == {"$id": shared["$id"], "deleted": True}
    assert member.get(f"/views/{shared['$id']}").status_code == 404


def test_viewers_save_private_views_only(board: Board) -> None:
    _, viewer = board.member("VIEWER")
    private = save(viewer, board, name="Reader's")
    assert private["shared"] is False
    refused = viewer.post(
        f"/workspaces/{board.workspace_id}/views", {"name": "S", "query": "", "shared": True}
    )
    assert refused.status_code == 403
    assert refused.json()["error"]["details"] == {"reason": "viewer"}
    assert viewer.patch(f"/views/{private['$id']}", {"shared": True}).status_code == 403
    assert viewer.ok("PATCH", f"/views/{private['$id']}", {"name": "Renamed"})["name"] == "Renamed"


def test_a_view_runs_its_query_for_the_caller(board: Board) -> None:
    alice, alice_api = board.member("MEMBER")
    bob, bob_api = board.member("MEMBER")
    board.task(assigneeIds=[alice["$id"]], priority="LOW")  # WEB-1
    board.task(assigneeIds=[bob["$id"]], priority="HIGH")  # WEB-2
    board.task(assigneeIds=[alice["$id"]], priority="URGENT")  # WEB-3
    view = save(
        alice_api,
        board,
        query="assignee = currentUser() ORDER BY priority DESC",
        shared=True,
    )
    page = alice_api.ok("GET", f"/views/{view['$id']}/items")
    assert [i["key"] for i in page["documents"]] == ["WEB-3", "WEB-1"]
    assert page["total"] == 2
    assert [i["key"] for i in bob_api.ok("GET", f"/views/{view['$id']}/items")["documents"]] == [
        "WEB-2"
    ]
    first = alice_api.ok("GET", f"/views/{view['$id']}/items?limit=1")
    assert [i["key"] for i in first["documents"]] == ["WEB-3"]
    rest = alice_api.ok("GET", f"/views/{view['$id']}/items?limit=1&cursor={first['nextCursor']}")
    assert [i["key"] for i in rest["documents"]] == ["WEB-1"]
    assert rest["nextCursor"] is None
    assert alice_api.get(f"/views/{view['$id']}/items?sort=key").status_code == 400


def test_at_most_a_hundred_views_per_user_per_workspace(board: Board, database: Database) -> None:
    owner = board.api.ok("GET", "/me")["$id"]
    with database.session(write=True) as session:
        session.add_all(
            SavedView(
                workspace_id=board.workspace_id,
                owner_id=owner,
                name=f"v{i}",
                query="",
                layout="list",
            )
            for i in range(VIEW_LIMIT)
        )
        session.commit()
    response = board.api.post(
        f"/workspaces/{board.workspace_id}/views", {"name": "one more", "query": ""}
    )
    assert response.status_code == 409
    assert response.json()["error"]["details"] == {"reason": "view_limit"}
    _, member = board.member("MEMBER")
    assert save(member, board)["name"] == "Mine"  # (per user)
    other = make_board(board.api)
    assert save(board.api, other)["workspaceId"] == other.workspace_id  # (per workspace)
