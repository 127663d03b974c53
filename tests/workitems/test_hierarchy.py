"""The work item hierarchy (contract §9): parentId, childCount, progress, filters, depth,
cycles, and what deleting a parent does."""

from typing import Any

import pytest

from tests.factories import Api
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def refusal(response: Any) -> tuple[int, str, str]:
    details = response.json()["error"]["details"]
    return response.status_code, details.get("field"), details.get("reason")


def chain(board: Board, levels: int) -> list[dict[str, Any]]:
    """`levels` items, each the parent of the next."""
    items = [board.task(name="level 1")]
    for level in range(2, levels + 1):
        items.append(board.task(name=f"level {level}", parentId=items[-1]["$id"]))
    return items


def test_parent_by_id_or_key_and_child_count(board: Board) -> None:
    epic = board.task(name="Epic", type="EPIC")
    other = make_project_board(board)
    by_id = board.task(parentId=epic["$id"])
    by_key = board.task(projectId=other["$id"], parentId=epic["key"])  # any project
    assert by_id["parentId"] == by_key["parentId"] == epic["$id"]
    assert by_id["childCount"] == 0
    read = board.api.ok("GET", f"/tasks/{epic['$id']}")
    assert read["childCount"] == 2
    assert read["parentId"] is None
    assert read["parent"] is None
    child = board.api.ok("GET", f"/tasks/{by_id['key']}")
    assert child["parent"] == {
        "$id": epic["$id"],
        "key": epic["key"],
        "title": "Epic",
        "type": "EPIC",
        "status": "BACKLOG",
    }
    listed = {i["$id"]: i for i in board.list()["documents"]}
    assert listed[epic["$id"]]["childCount"] == 2
    assert listed[by_key["$id"]]["parentId"] == epic["$id"]


def make_project_board(board: Board) -> dict[str, Any]:
    project: dict[str, Any] = board.api.ok(
        "POST", f"/workspaces/{board.workspace_id}/projects", {"name": "Other", "key": "OTH"}
    )
    return project


def test_patch_moves_and_clears_the_parent_with_an_event(board: Board) -> None:
    first, second, item = board.task(), board.task(), board.task()
    moved = board.api.ok("PATCH", f"/tasks/{item['$id']}", {"parentId": first["key"]})
    assert moved["parentId"] == first["$id"]
    assert moved["parent"]["$id"] == first["$id"]
    board.api.ok("PATCH", f"/tasks/{item['$id']}", {"parentId": second["$id"]})
    cleared = board.api.ok("PATCH", f"/tasks/{item['$id']}", {"parentId": None})
    assert cleared["parentId"] is None
    same = board.api.patch(f"/tasks/{item['$id']}", {"parentId": None})
    assert same.json()["data"]["$updatedAt"] == cleared["$updatedAt"]  # nothing changed
    activity = board.api.ok("GET", f"/tasks/{item['$id']}/activity")["documents"]
    changes = [e["changes"]["parentId"] for e in activity if e["type"] == "task.updated"]
    assert sorted(map(str, changes)) == sorted(
        map(
            str,
            [
                {"from": None, "to": first["$id"]},
                {"from": first["$id"], "to": second["$id"]},
                {"from": second["$id"], "to": None},
            ],
        )
    )


def test_a_parent_elsewhere_is_not_found(board: Board) -> None:
    foreign = make_board(board.api).task()
    item = board.task()
    for response in (
        board.api.post("/tasks", board.body(parentId=foreign["$id"])),
        board.api.post("/tasks", board.body(parentId="NOPE-1")),
        board.api.patch(f"/tasks/{item['$id']}", {"parentId": foreign["$id"]}),
        board.api.patch(f"/tasks/{item['$id']}", {"parentId": foreign["key"]}),
    ):
        assert refusal(response) == (400, "parentId", "not_found"), response.text
    assert board.api.ok("GET", f"/tasks/{item['$id']}")["parentId"] is None
    assert board.list()["total"] == 1


def test_an_item_under_itself_or_its_descendants_is_a_cycle(board: Board) -> None:
    top, middle, bottom = chain(board, 3)
    for parent in (top["$id"], middle["key"], bottom["$id"]):
        response = board.api.patch(f"/tasks/{top['$id']}", {"parentId": parent})
        assert refusal(response) == (400, "parentId", "cycle"), response.text
    assert board.api.ok("GET", f"/tasks/{top['$id']}")["parentId"] is None
    # Moving within the tree in a way that makes no cycle is fine.
    assert board.api.ok("PATCH", f"/tasks/{bottom['$id']}", {"parentId": top["$id"]})


def test_at_most_ten_levels(board: Board) -> None:
    """The root is level 1; nothing may be below level 10, also by moving a subtree."""
    items = chain(board, 10)
    response = board.api.post("/tasks", board.body(parentId=items[-1]["$id"]))
    assert refusal(response) == (400, "parentId", "out_of_range"), response.text
    # A root with one child (two levels) fits under level 8, not under level 9.
    root = board.task()
    board.task(parentId=root["$id"])
    response = board.api.patch(f"/tasks/{root['$id']}", {"parentId": items[8]["$id"]})
    assert refusal(response) == (400, "parentId", "out_of_range"), response.text
    assert board.api.ok("PATCH", f"/tasks/{root['$id']}", {"parentId": items[7]["$id"]})
    assert board.list()["total"] == 12


def test_progress_counts_every_descendant(board: Board) -> None:
    epic = board.task(type="EPIC")
    story = board.task(parentId=epic["$id"], storyPoints=5, status="DONE")
    board.task(parentId=story["$id"], storyPoints=3, status="DONE")
    board.task(parentId=story["$id"], storyPoints=2)
    board.task(parentId=epic["$id"])
    board.task()  # not below the epic
    read = board.api.ok("GET", f"/tasks/{epic['key']}")
    assert read["progress"] == {"items": 4, "doneItems": 2, "points": 10, "donePoints": 8}
    leaf = board.api.ok("GET", f"/tasks/{story['$id']}")
    assert leaf["progress"] == {"items": 2, "doneItems": 1, "points": 5, "donePoints": 3}
    assert board.task()["progress"] == {"items": 0, "doneItems": 0, "points": 0, "donePoints": 0}


def test_list_filters_by_parent_and_ancestor(board: Board) -> None:
    epic = board.task(type="EPIC")
    story = board.task(parentId=epic["$id"])
    subtask = board.task(parentId=story["$id"])
    loose = board.task()

    def keys(**params: Any) -> set[str]:
        page = board.list(**params)
        assert page["total"] == len(page["documents"])
        return {item["key"] for item in page["documents"]}

    assert keys(parentId=epic["$id"]) == {story["key"]}
    assert keys(parentId=story["key"]) == {subtask["key"]}
    assert keys(parentId="none") == {epic["key"], loose["key"]}
    assert keys(ancestorId=epic["key"]) == {story["key"], subtask["key"]}
    assert keys(ancestorId=story["$id"]) == {subtask["key"]}
    assert keys(ancestorId=loose["$id"]) == set()
    assert keys(ancestorId="NOPE-9") == set()
    foreign = make_board(board.api).task()
    assert keys(parentId=foreign["$id"]) == set()


def test_ancestor_with_other_filters_sort_and_cursor(board: Board) -> None:
    """The descendants alone, at every depth, filtered, sorted and paged like any list."""
    epic = board.task(type="EPIC")
    other = make_project_board(board)
    story = board.task(parentId=epic["$id"], storyPoints=1, status="TODO")
    subtask = board.task(parentId=story["$id"], storyPoints=3, status="TODO")
    deeper = board.task(parentId=subtask["$id"], storyPoints=2, status="TODO")
    elsewhere = board.task(projectId=other["$id"], parentId=story["$id"], status="TODO")
    done = board.task(parentId=epic["$id"], status="DONE")  # below, filtered out
    board.task(status="TODO", storyPoints=5)  # not below
    sibling = board.task(type="EPIC")
    board.task(parentId=sibling["$id"], status="TODO")  # below another epic

    def pages(**params: Any) -> tuple[list[str], set[int]]:
        keys, totals = [], set()
        page = board.list(limit=2, ancestorId=epic["key"], status="TODO", **params)
        while True:
            keys += [item["key"] for item in page["documents"]]
            totals.add(page["total"])
            if page["nextCursor"] is None:
                return keys, totals
            page = board.list(
                limit=2, ancestorId=epic["key"], status="TODO", cursor=page["nextCursor"], **params
            )

    by_points = [subtask["key"], deeper["key"], story["key"], elsewhere["key"]]
    assert pages(sort="-storyPoints") == (by_points, {4})
    by_key = [elsewhere["key"], story["key"], subtask["key"], deeper["key"]]  # OTH < WEB
    assert pages(sort="key") == (by_key, {4})
    in_project = board.list(ancestorId=epic["$id"], projectId=board.project_id, sort="key")
    assert [i["key"] for i in in_project["documents"]] == [
        i["key"] for i in (story, subtask, deeper, done)
    ]
    assert in_project["total"] == 4


def test_deleting_a_parent_detaches_its_children(board: Board) -> None:
    epic = board.task(type="EPIC")
    children = [board.task(parentId=epic["$id"]) for _ in range(2)]
    grandchild = board.task(parentId=children[0]["$id"])
    board.api.ok("DELETE", f"/tasks/{epic['$id']}")
    for child in children:
        read = board.api.ok("GET", f"/tasks/{child['$id']}")
        assert read["parentId"] is None
        activity = board.api.ok("GET", f"/tasks/{child['$id']}/activity")["documents"]
        updates = [e for e in activity if e["type"] == "task.updated"]
        assert [e["changes"] for e in updates] == [{"parentId": {"from": epic["$id"], "to": None}}]
    assert board.api.ok("GET", f"/tasks/{grandchild['$id']}")["parentId"] == children[0]["$id"]
    assert board.list()["total"] == 3


def test_viewers_may_not_set_a_parent(board: Board) -> None:
    parent, item = board.task(), board.task()
    _, viewer = board.member("VIEWER")
    response = viewer.patch(f"/tasks/{item['$id']}", {"parentId": parent["$id"]})
    assert response.status_code == 403
    assert board.api.ok("GET", f"/tasks/{item['$id']}")["parentId"] is None


def test_child_count_is_read_only(board: Board) -> None:
    item = board.task()
    response = board.api.patch(f"/tasks/{item['$id']}", {"childCount": 3})
    assert refusal(response) == (400, "childCount", "read_only")


def test_deleting_a_project_detaches_children_in_other_projects(board: Board) -> None:
    other = make_project_board(board)
    epic = board.task(projectId=other["$id"], type="EPIC")
    inside = board.task(projectId=other["$id"], parentId=epic["$id"])
    child = board.task(parentId=epic["$id"])
    board.api.ok("DELETE", f"/projects/{other['$id']}")
    read = board.api.ok("GET", f"/tasks/{child['$id']}")
    assert read["parentId"] is None
    activity = board.api.ok("GET", f"/tasks/{child['$id']}/activity")["documents"]
    updates = [e["changes"] for e in activity if e["type"] == "task.updated"]
    assert updates == [{"parentId": {"from": epic["$id"], "to": None}}]
    assert board.api.get(f"/tasks/{inside['$id']}").status_code == 404
