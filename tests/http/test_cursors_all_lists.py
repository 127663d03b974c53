"""Every list pages by cursor without repeats or gaps (contract §16 "Cursors"): records
created or deleted between pages never make a page repeat or skip one that existed
throughout, the last page's `nextCursor` is null, and a cursor sent with other filters (or
to another list) is 400 `invalid_value` on `cursor`."""

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.factories import Api, add_member, make_project, make_user, make_workspace, unique
from tests.http.test_conventions import refused
from tests.workitem_factories import Board, make_board


@dataclass
class Listing:
    """A list, how to add a record to it, and (where a record can go) how to remove one."""

    path: str
    create: Callable[[], Any]
    delete: Callable[[dict[str, Any]], Any] | None
    elsewhere: str
    """The same list with other filters or scope, or another list: refuses this one's cursor."""


def _users(board: Board) -> Listing:
    return Listing("/users", lambda: make_user(board.api), None, "/workspaces")


def _user_keys(board: Board) -> Listing:
    user, _ = make_user(board.api)
    other, _ = make_user(board.api)
    path = f"/users/{user['$id']}/keys"
    create = lambda: board.api.ok("POST", path, {"name": unique("key")})  # noqa: E731
    return Listing(path, create, None, f"/users/{other['$id']}/keys")


def _own_keys(board: Board) -> Listing:
    create = lambda: board.api.ok("POST", "/keys", {"name": unique("key")})  # noqa: E731
    other, _ = make_user(board.api)
    return Listing("/keys", create, None, f"/users/{other['$id']}/keys")


def _sprints(board: Board) -> Listing:
    return Listing(
        f"/sprints?projectId={board.project_id}",
        board.sprint,
        lambda sprint: board.api.ok("DELETE", f"/sprints/{sprint['$id']}"),
        f"/sprints?projectId={board.project_id}&status=PLANNED",
    )


def _comments(board: Board) -> Listing:
    path = f"/tasks/{board.task()['$id']}/comments"
    return Listing(
        path,
        lambda: board.api.ok("POST", path, {"body": "Noted."}),
        lambda comment: board.api.ok("DELETE", f"/comments/{comment['$id']}"),
        f"/tasks/{board.task()['$id']}/comments",
    )


def _time_logs(board: Board) -> Listing:
    path = f"/tasks/{board.task()['$id']}/time-logs"
    create = lambda: board.api.ok("POST", path, {"hours": 1, "date": "2026-01-02"})  # noqa: E731
    return Listing(path, create, None, f"/tasks/{board.task()['$id']}/comments")


def _projects(board: Board) -> Listing:
    return Listing(
        f"/workspaces/{board.workspace_id}/projects",
        lambda: make_project(board.api, board.workspace_id),
        lambda project: board.api.ok("DELETE", f"/projects/{project['$id']}"),
        f"/workspaces/{make_workspace(board.api)['$id']}/projects",
    )


def _workspaces(board: Board) -> Listing:
    return Listing(
        "/workspaces",
        lambda: make_workspace(board.api),
        lambda workspace: board.api.ok("DELETE", f"/workspaces/{workspace['$id']}"),
        "/users",
    )


def _members(board: Board) -> Listing:
    path = f"/workspaces/{board.workspace_id}"
    return Listing(
        f"{path}/members",
        lambda: add_member(board.api, board.workspace_id, make_user(board.api)[0]["$id"], "VIEWER"),
        lambda member: board.api.ok("DELETE", f"{path}/members/{member['userId']}"),
        f"{path}/projects",
    )


def _work_item_types(board: Board) -> Listing:
    """By name: each new type sorts before every earlier one (two at a time, so that a
    deleted one does not make up for them)."""
    path = f"/workspaces/{board.workspace_id}/work-item-types"
    names = iter(f"Z{n:03d}" for n in range(999, 0, -1))
    return Listing(
        path,
        lambda: [board.api.ok("POST", path, {"name": next(names)}) for _ in range(2)],
        lambda kind: board.api.ok("DELETE", f"{path}/{kind['name']}"),
        f"/workspaces/{make_workspace(board.api)['$id']}/work-item-types",
    )


def _activity(board: Board) -> Listing:
    task = board.task()
    create = lambda: board.api.ok("PATCH", f"/tasks/{task['$id']}", {"title": unique("t")})  # noqa: E731
    return Listing(f"/tasks/{task['$id']}/activity", create, None, "/notifications")


def _notifications(board: Board) -> Listing:
    """Newest first: each new one comes before every one shown. (The board's admin follows
    `flagged` changes by anyone else.)"""
    task = board.task()
    _, member = board.member("MEMBER")
    flags = iter([True, False] * 100)
    create = lambda: member.ok("PATCH", f"/tasks/{task['$id']}", {"flagged": next(flags)})  # noqa: E731
    return Listing("/notifications", create, None, "/notifications?unread=true")


def _webhooks(board: Board) -> Listing:
    path = f"/workspaces/{board.workspace_id}/webhooks"
    body = {"url": "https://example.com/hook", "events": ["task.updated"]}
    return Listing(
        path,
        lambda: board.api.ok("POST", path, body),
        lambda hook: board.api.ok("DELETE", f"/webhooks/{hook['$id']}"),
        f"/workspaces/{make_workspace(board.api)['$id']}/webhooks",
    )


def _deliveries(board: Board) -> Listing:
    """Most recent first: each new ping comes before every one shown."""
    body = {"url": "https://example.com/hook", "events": ["task.updated"]}
    hook = board.api.ok("POST", f"/workspaces/{board.workspace_id}/webhooks", body)
    path = f"/webhooks/{hook['$id']}/deliveries"
    create = lambda: board.api.ok("POST", f"/webhooks/{hook['$id']}/test")  # noqa: E731
    return Listing(path, create, None, f"{path}?status=PENDING")


def _invitations(board: Board) -> Listing:
    path = f"/workspaces/{board.workspace_id}/invitations"
    create = lambda: board.api.ok("POST", path, {"email": f"{unique('inv')}@example.com"})  # noqa: E731
    return Listing(
        path,
        create,
        lambda invitation: board.api.ok("DELETE", f"/invitations/{invitation['$id']}"),
        f"/workspaces/{make_workspace(board.api)['$id']}/invitations",
    )


LISTINGS = {
    "users": _users,
    "user keys": _user_keys,
    "own keys": _own_keys,
    "sprints": _sprints,
    "comments": _comments,
    "time logs": _time_logs,
    "projects": _projects,
    "workspaces": _workspaces,
    "members": _members,
    "work item types": _work_item_types,
    "activity": _activity,
    "notifications": _notifications,
    "webhooks": _webhooks,
    "deliveries": _deliveries,
    "invitations": _invitations,
}


def ids(records: list[dict[str, Any]]) -> list[str]:
    return [record["$id"] for record in records]


def with_query(path: str, query: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}{query}"


def listed(admin: Api, listing: Listing) -> list[dict[str, Any]]:
    page: dict[str, Any] = admin.ok("GET", with_query(listing.path, "limit=500"))
    assert page["nextCursor"] is None
    documents: list[dict[str, Any]] = page["documents"]
    return documents


@pytest.fixture(params=list(LISTINGS))
def listing(request: pytest.FixtureRequest, admin: Api) -> Listing:
    made = LISTINGS[request.param](make_board(admin))
    for _ in range(6):
        made.create()
    return made


def test_pages_neither_repeat_nor_skip_while_records_come_and_go(
    listing: Listing, admin: Api
) -> None:
    before = ids(listed(admin, listing))
    assert len(before) >= 6
    seen: list[dict[str, Any]] = []
    page = admin.ok("GET", with_query(listing.path, "limit=2"))
    while True:
        seen += page["documents"]
        if page["nextCursor"] is None:
            break
        assert len(seen) < 100, "the pages never end"
        listing.create()
        if listing.delete is not None:
            listing.delete(seen[-1])  # (shown already: counting from the start would skip one)
            seen_ids = {record["$id"] for record in seen}
            unseen = [r for r in listed(admin, listing) if r["$id"] not in seen_ids]
            if len(unseen) > 1:  # (one not shown yet, away from the page's edge)
                listing.delete(unseen[-1])
        page = admin.ok("GET", with_query(listing.path, f"limit=2&cursor={page['nextCursor']}"))
    after = ids(listed(admin, listing))
    shown = ids(seen)
    assert len(shown) == len(set(shown)), "a record was shown twice"
    throughout = [i for i in before if i in after]
    assert [i for i in shown if i in throughout] == throughout
    assert page["total"] == len(after)


def test_a_cursor_is_refused_with_other_filters_or_by_another_list(
    listing: Listing, admin: Api
) -> None:
    order = ids(listed(admin, listing))
    cursor = admin.ok("GET", with_query(listing.path, "limit=2"))["nextCursor"]
    assert cursor is not None
    refused(admin.get(with_query(listing.elsewhere, f"cursor={cursor}")), "cursor", "invalid_value")
    rest = admin.ok("GET", with_query(listing.path, f"limit=500&cursor={cursor}"))
    assert (ids(rest["documents"]), rest["nextCursor"]) == (order[2:], None)


def test_offset_still_counts_from_the_start_or_the_cursor(listing: Listing, admin: Api) -> None:
    order = ids(listed(admin, listing))
    page = admin.ok("GET", with_query(listing.path, "limit=2&offset=1"))
    assert ids(page["documents"]) == order[1:3]
    after = admin.ok(
        "GET", with_query(listing.path, f"limit=2&offset=1&cursor={page['nextCursor']}")
    )
    assert ids(after["documents"]) == order[4:6]


def tampered(cursor: str, value: Any) -> str:
    """`cursor` with each of its sort key values replaced by `value` (its own fingerprint kept,
    as anyone can keep it: a cursor is not signed)."""
    payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    made_for, position = payload
    forged = json.dumps([made_for, [value for _ in position]]).encode()
    return base64.urlsafe_b64encode(forged).rstrip(b"=").decode()


@pytest.mark.parametrize("value", ["not a value", 12345, 1.5e308, True, "\u0000", [1], {"dt": "x"}])
def test_a_tampered_cursor_is_refused_not_an_error(
    listing: Listing, admin: Api, value: Any
) -> None:
    cursor = admin.ok("GET", with_query(listing.path, "limit=2"))["nextCursor"]
    response = admin.get(with_query(listing.path, f"cursor={tampered(cursor, value)}"))
    # Refused, or (where the database compares any value with any other) a page.
    assert response.status_code in (200, 400), response.text
    if response.status_code == 400:
        refused(response, "cursor", "invalid_value")


@pytest.mark.parametrize("sort", ["position", "dueDate,-title", "-storyPoints,key", "updatedAt"])
@pytest.mark.parametrize("value", ["not a value", 12345, True, "\u0000"])
def test_a_tampered_work_item_cursor_is_refused_not_an_error(
    admin: Api, sort: str, value: Any
) -> None:
    board = make_board(admin)
    for _ in range(3):
        board.task()
    path = f"/tasks?workspaceId={board.workspace_id}&sort={sort}&limit=1"
    cursor = admin.ok("GET", path)["nextCursor"]
    response = admin.get(f"{path}&cursor={tampered(cursor, value)}")
    assert response.status_code in (200, 400), response.text
    if response.status_code == 400:
        refused(response, "cursor", "invalid_value")
