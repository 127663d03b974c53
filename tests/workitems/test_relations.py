"""Relations between work items (contract §9): stored once, shown from the reader's side."""

from typing import Any

import pytest

from tests.factories import Api
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def relate(client: Api, item: dict[str, Any], type: str, target: str) -> Any:
    return client.post(f"/tasks/{item['$id']}/relations", {"type": type, "targetId": target})


def refusal(response: Any) -> tuple[int, str | None, str | None]:
    details = response.json()["error"]["details"]
    return response.status_code, details.get("field"), details.get("reason")


def test_a_relation_is_seen_from_both_sides(board: Board) -> None:
    a, b = board.task(name="A"), board.task(name="B")
    response = relate(board.api, a, "blocks", b["key"])
    assert response.status_code == 201, response.text
    made = response.json()["data"]
    assert made["type"] == "blocks"
    assert made["task"] == {"$id": b["$id"], "key": b["key"], "title": "B", "status": "BACKLOG"}
    assert made["$createdAt"].endswith("Z")
    from_b = board.api.ok("GET", f"/tasks/{b['$id']}/relations")
    assert from_b["total"] == 1
    (seen,) = from_b["documents"]
    assert (seen["$id"], seen["type"], seen["task"]["$id"]) == (made["$id"], "blocked_by", a["$id"])
    read_b = board.api.ok("GET", f"/tasks/{b['key']}")
    assert read_b["relations"] == from_b["documents"]
    assert read_b["blocked"] is True
    assert board.api.ok("GET", f"/tasks/{a['$id']}")["blocked"] is False
    board.api.ok("PATCH", f"/tasks/{a['$id']}", {"status": "DONE"})
    assert board.api.ok("GET", f"/tasks/{b['$id']}")["blocked"] is False


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("blocks", "blocked_by"),
        ("duplicates", "duplicated_by"),
        ("relates_to", "relates_to"),
        ("blocks", "blocks_again"),
    ],
)
def test_a_relation_exists_once_in_either_spelling(board: Board, first: str, second: str) -> None:
    a, b = board.task(), board.task()
    assert relate(board.api, a, first, b["$id"]).status_code == 201
    # The same relation, spelt from the other side (or again from the same side).
    again = (
        relate(board.api, a, first, b["$id"])
        if second == "blocks_again"
        else relate(board.api, b, second, a["$id"])
    )
    assert again.status_code == 409, again.text
    assert again.json()["error"]["details"]["reason"] == "duplicate_relation"
    assert board.api.ok("GET", f"/tasks/{a['$id']}/relations")["total"] == 1


def test_inverse_types_read_back_as_sent(board: Board) -> None:
    a, b, c = board.task(), board.task(), board.task()
    assert relate(board.api, a, "blocked_by", b["$id"]).json()["data"]["type"] == "blocked_by"
    assert relate(board.api, a, "duplicated_by", c["$id"]).json()["data"]["type"] == "duplicated_by"
    assert relate(board.api, c, "relates_to", b["$id"]).json()["data"]["type"] == "relates_to"
    seen_by_b = {
        r["task"]["$id"]: r["type"]
        for r in board.api.ok("GET", f"/tasks/{b['$id']}/relations")["documents"]
    }
    assert seen_by_b == {a["$id"]: "blocks", c["$id"]: "relates_to"}
    assert board.api.ok("GET", f"/tasks/{a['$id']}")["blocked"] is True


def test_bad_relations_are_refused(board: Board) -> None:
    a = board.task()
    foreign = make_board(board.api).task()
    assert refusal(relate(board.api, a, "blocks", a["key"])) == (400, "targetId", "invalid_value")
    assert refusal(relate(board.api, a, "blocks", foreign["$id"])) == (400, "targetId", "not_found")
    assert refusal(relate(board.api, a, "blocks", "NOPE-1")) == (400, "targetId", "not_found")
    assert refusal(relate(board.api, a, "causes", a["$id"])) == (400, "type", "invalid_value")
    assert board.api.ok("GET", f"/tasks/{a['$id']}/relations")["total"] == 0


def test_deleting_a_relation_or_an_item_with_events(board: Board) -> None:
    a, b, c = board.task(), board.task(), board.task()
    first = relate(board.api, a, "blocks", b["$id"]).json()["data"]
    second = relate(board.api, c, "relates_to", a["$id"]).json()["data"]
    assert board.api.ok("DELETE", f"/relations/{first['$id']}") == {
        "$id": first["$id"],
        "deleted": True,
    }
    assert board.api.delete(f"/relations/{first['$id']}").status_code == 404
    assert board.api.ok("GET", f"/tasks/{b['$id']}/relations")["total"] == 0
    board.api.ok("DELETE", f"/tasks/{a['$id']}")
    assert board.api.ok("GET", f"/tasks/{c['$id']}/relations")["total"] == 0
    assert board.api.ok("GET", f"/tasks/{c['$id']}")["childCount"] == 0
    feed = board.api.ok("GET", f"/events?workspaceId={board.workspace_id}&limit=100")["documents"]
    created = [e for e in feed if e["type"] == "relation.created"]
    removed = [e for e in feed if e["type"] == "relation.deleted"]
    assert len(created) == 2
    assert [e["subjectId"] for e in removed] == [first["$id"], second["$id"]]
    assert removed[0]["payload"]["relation"] == {
        "$id": first["$id"],
        "type": "blocks",
        "source": {"$id": a["$id"], "key": a["key"]},
        "target": {"$id": b["$id"], "key": b["key"]},
        "$createdAt": first["$createdAt"],
    }
    source, target = sorted((a, c), key=lambda item: item["$id"])  # relates_to: lesser first
    assert removed[1]["payload"]["relation"] == {
        "$id": second["$id"],
        "type": "relates_to",
        "source": {"$id": source["$id"], "key": source["key"]},
        "target": {"$id": target["$id"], "key": target["key"]},
        "$createdAt": second["$createdAt"],
    }
    assert removed[1]["actorId"] == removed[0]["actorId"]
    deleted = [e["type"] for e in feed if e["subjectId"] in (second["$id"], a["$id"])]
    assert deleted[-2:] == ["relation.deleted", "task.deleted"]  # the relation first


def test_relations_need_work_item_write_and_membership(board: Board) -> None:
    a, b = board.task(), board.task()
    made = relate(board.api, a, "blocks", b["$id"]).json()["data"]
    _, viewer = board.member("VIEWER")
    assert relate(viewer, a, "relates_to", b["$id"]).status_code == 403
    assert viewer.delete(f"/relations/{made['$id']}").status_code == 403
    assert viewer.ok("GET", f"/tasks/{a['$id']}/relations")["total"] == 1
    _, stranger = make_board(board.api).member("ADMIN")
    assert stranger.get(f"/tasks/{a['$id']}/relations").status_code == 404
    assert stranger.delete(f"/relations/{made['$id']}").status_code == 404
    assert relate(stranger, a, "relates_to", b["$id"]).status_code == 404


def test_webhooks_accept_relation_events(board: Board) -> None:
    hook = board.api.ok(
        "POST",
        f"/workspaces/{board.workspace_id}/webhooks",
        {"url": "http://127.0.0.1:9/hook", "events": ["relation.created", "relation.deleted"]},
    )
    a, b = board.task(), board.task()
    relate(board.api, a, "blocks", b["$id"])
    deliveries = board.api.ok("GET", f"/webhooks/{hook['$id']}/deliveries")["documents"]
    assert [d["eventType"] for d in deliveries] == ["relation.created"]


def test_deleting_items_and_projects_tells_of_each_relation_removed(board: Board) -> None:
    """One `relation.deleted` for every relation that goes with a deleted item, whichever
    side it is on, in the feed and to webhooks; a project's delete does the same for the
    relations of all its items (once for a relation between two of them)."""
    hook = board.api.ok(
        "POST",
        f"/workspaces/{board.workspace_id}/webhooks",
        {"url": "http://127.0.0.1:9/hook", "events": ["relation.deleted"]},
    )
    gone, blocker, duplicate, kept = board.task(), board.task(), board.task(), board.task()
    by_item = [
        relate(board.api, blocker, "blocks", gone["$id"]).json()["data"]["$id"],
        relate(board.api, gone, "duplicated_by", duplicate["key"]).json()["data"]["$id"],
    ]
    unrelated = relate(board.api, blocker, "relates_to", kept["$id"]).json()["data"]["$id"]
    board.api.ok("DELETE", f"/tasks/{gone['$id']}")

    other = board.api.ok(
        "POST", f"/workspaces/{board.workspace_id}/projects", {"name": "Other", "key": "OTH"}
    )
    inside = [board.task(projectId=other["$id"]) for _ in range(2)]
    by_project = [
        relate(board.api, inside[0], "blocks", inside[1]["$id"]).json()["data"]["$id"],
        relate(board.api, kept, "relates_to", inside[1]["$id"]).json()["data"]["$id"],
    ]
    board.api.ok("DELETE", f"/projects/{other['$id']}")

    feed = board.api.ok("GET", f"/events?workspaceId={board.workspace_id}&limit=100")["documents"]
    removed = [e for e in feed if e["type"] == "relation.deleted"]
    assert [e["subjectId"] for e in removed] == by_item + by_project
    ends = [
        {e["payload"]["relation"]["source"]["key"], e["payload"]["relation"]["target"]["key"]}
        for e in removed
    ]
    assert ends == [
        {blocker["key"], gone["key"]},
        {duplicate["key"], gone["key"]},
        {inside[0]["key"], inside[1]["key"]},
        {kept["key"], inside[1]["key"]},
    ]
    assert [r["$id"] for r in board.api.ok("GET", f"/tasks/{kept['$id']}")["relations"]] == [
        unrelated
    ]
    deliveries = board.api.ok("GET", f"/webhooks/{hook['$id']}/deliveries?limit=100")
    assert sorted(d["eventId"] for d in deliveries["documents"]) == sorted(
        e["$id"] for e in removed
    )
