"""Statuses per project (§17): the five built-in ones, statuses of a team's own with their
categories, "DONE" meaning the category, and the transition rules."""

from typing import Any

from tests.factories import Api
from tests.workitem_factories import Board, make_board

BUILT_IN = [
    {"name": "BACKLOG", "label": "Backlog", "category": "BACKLOG", "position": 0},
    {"name": "TODO", "label": "Todo", "category": "TODO", "position": 1},
    {"name": "IN_PROGRESS", "label": "In progress", "category": "IN_PROGRESS", "position": 2},
    {"name": "IN_REVIEW", "label": "In review", "category": "IN_PROGRESS", "position": 3},
    {"name": "DONE", "label": "Done", "category": "DONE", "position": 4},
]


def statuses(board: Board) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = board.api.ok("GET", f"/projects/{board.project_id}/statuses")[
        "documents"
    ]
    return found


def add_status(board: Board, name: str, category: str, **fields: Any) -> dict[str, Any]:
    body = {"name": name, "category": category, **fields}
    made: dict[str, Any] = board.api.ok("POST", f"/projects/{board.project_id}/statuses", body)
    return made


def error_of(response: Any) -> dict[str, Any]:
    error: dict[str, Any] = response.json()["error"]
    return error


def test_a_new_project_has_the_five_built_in_statuses(admin: Api) -> None:
    board = make_board(admin)
    assert statuses(board) == BUILT_IN
    sprint = board.sprint(status="ACTIVE")
    in_sprint = board.task()
    outside = board.task(sprintId=None)
    assert (in_sprint["sprintId"], in_sprint["status"]) == (sprint["$id"], "TODO")
    assert in_sprint["statusCategory"] == "TODO"
    assert (outside["status"], outside["statusCategory"]) == ("BACKLOG", "BACKLOG")
    reviewed = admin.ok("PATCH", f"/tasks/{in_sprint['$id']}", {"status": "IN_REVIEW"})
    assert reviewed["statusCategory"] == "IN_PROGRESS"


def test_a_status_of_a_teams_own_is_added_named_and_placed(admin: Api) -> None:
    board = make_board(admin)
    made = add_status(board, "READY_FOR_QA", "IN_PROGRESS", position=3)
    assert made == {
        "name": "READY_FOR_QA",
        "label": "Ready for qa",
        "category": "IN_PROGRESS",
        "position": 3,
    }
    names = [s["name"] for s in statuses(board)]
    assert names == ["BACKLOG", "TODO", "IN_PROGRESS", "READY_FOR_QA", "IN_REVIEW", "DONE"]
    assert [s["position"] for s in statuses(board)] == [0, 1, 2, 3, 4, 5]
    last = add_status(board, "WONT_DO", "DONE", label="Won't do")
    assert (last["label"], last["position"]) == ("Won't do", 6)
    path = f"/projects/{board.project_id}/statuses/READY_FOR_QA"
    moved = admin.ok("PATCH", path, {"label": "Ready for QA", "position": 0.0})
    assert (moved["label"], moved["position"]) == ("Ready for QA", 0)
    assert statuses(board)[0]["name"] == "READY_FOR_QA"
    for field, value in (("name", "QA"), ("category", "DONE")):
        refused = admin.patch(path, json={field: value})
        assert refused.status_code == 400
        assert error_of(refused)["details"] == {"field": field, "reason": "immutable"}


def test_a_status_name_is_taken_once_and_a_project_holds_thirty(admin: Api) -> None:
    board = make_board(admin)
    path = f"/projects/{board.project_id}/statuses"
    again = admin.post(path, json={"name": "TODO", "category": "TODO"})
    assert again.status_code == 409
    assert error_of(again)["details"]["reason"] == "duplicate_status"
    badly_named = admin.post(path, json={"name": "Ready", "category": "TODO"})
    assert badly_named.status_code == 400
    assert error_of(badly_named)["details"]["field"] == "name"
    for number in range(25):
        add_status(board, f"STEP_{number}", "IN_PROGRESS")
    full = admin.post(path, json={"name": "ONE_MORE", "category": "TODO"})
    assert full.status_code == 409
    assert error_of(full)["details"]["reason"] == "status_limit"
    assert len(statuses(board)) == 30


def test_only_project_managers_change_statuses_and_strangers_see_nothing(admin: Api) -> None:
    board = make_board(admin)
    _, member = board.member("MEMBER")
    path = f"/projects/{board.project_id}/statuses"
    assert member.get(path).status_code == 200
    refused = member.post(path, json={"name": "QA", "category": "IN_PROGRESS"})
    assert refused.status_code == 403
    assert error_of(refused)["details"]["permission"] == "PROJECT_MANAGE"
    stranger = make_board(admin)
    _, outsider = stranger.member("ADMIN")
    assert outsider.get(path).status_code == 404
    assert outsider.post(path, json={"name": "QA", "category": "TODO"}).status_code == 404
    assert outsider.get(f"/projects/{board.project_id}/workflow").status_code == 404


def test_an_item_takes_only_its_projects_statuses(admin: Api) -> None:
    board = make_board(admin)
    other = Board(
        admin,
        board.workspace,
        admin.ok(
            "POST", f"/workspaces/{board.workspace_id}/projects", {"name": "Other", "key": "OTH"}
        ),
    )
    add_status(other, "READY_FOR_QA", "IN_PROGRESS")
    item = board.task()
    refused = admin.patch(f"/tasks/{item['$id']}", json={"status": "READY_FOR_QA"})
    assert refused.status_code == 400
    assert error_of(refused)["details"] == {"field": "status", "reason": "invalid_value"}
    create = admin.post("/tasks", json=board.body(status="READY_FOR_QA"))
    assert error_of(create)["details"] == {"field": "status", "reason": "invalid_value"}
    bulk = admin.post(
        "/tasks/bulk-create", json={"tasks": [board.body(), board.body(status="READY_FOR_QA")]}
    )
    assert error_of(bulk)["details"] == {"field": "tasks[1].status", "reason": "invalid_value"}
    moves = admin.post(
        "/tasks/bulk-update",
        json={"tasks": [{"$id": item["$id"], "status": "DONE"}, {"key": item["key"]}]},
    )
    assert moves.status_code == 400
    qa = other.task(status="READY_FOR_QA")
    assert (qa["status"], qa["statusCategory"]) == ("READY_FOR_QA", "IN_PROGRESS")
    assert board.list(status="READY_FOR_QA")["total"] == 1
    assert board.list(statusCategory="IN_PROGRESS")["total"] == 1
    assert board.list(statusCategory="BACKLOG")["total"] == 1
    assert admin.get(f"/tasks?workspaceId={board.workspace_id}&status=ready").status_code == 400


def test_done_means_the_category_everywhere(admin: Api) -> None:
    board = make_board(admin)
    add_status(board, "SHIPPED", "DONE")
    sprint = board.sprint(status="ACTIVE")
    epic = board.task(type="EPIC", storyPoints=1)
    shipped = board.task(parentId=epic["$id"], storyPoints=3)
    open_item = board.task(parentId=epic["$id"], storyPoints=2)
    blocked = board.task()
    admin.ok(
        "POST",
        f"/tasks/{shipped['$id']}/relations",
        {"type": "blocks", "targetId": blocked["$id"]},
    )
    assert admin.ok("GET", f"/tasks/{blocked['$id']}")["blocked"] is True
    admin.ok("PATCH", f"/tasks/{shipped['$id']}", {"status": "SHIPPED"})
    assert admin.ok("GET", f"/tasks/{blocked['$id']}")["blocked"] is False
    progress = admin.ok("GET", f"/tasks/{epic['$id']}")["progress"]
    assert progress == {"items": 2, "doneItems": 1, "points": 5, "donePoints": 3}
    figures = admin.ok("GET", f"/sprints/{sprint['$id']}")
    assert figures["completedPoints"] == 3
    completed = admin.ok("POST", f"/sprints/{sprint['$id']}/complete", {}, status=200)
    assert completed["movedItemCount"] == 3  # (the epic, the open item and the blocked one)
    assert admin.ok("GET", f"/tasks/{shipped['$id']}")["sprintId"] == sprint["$id"]
    assert admin.ok("GET", f"/tasks/{open_item['$id']}")["sprintId"] is None
    report = admin.ok("GET", f"/sprints/{sprint['$id']}/report")
    assert report["completed"] == {"items": 1, "points": 3}


def test_a_status_goes_only_with_somewhere_for_its_items(admin: Api) -> None:
    board = make_board(admin)
    add_status(board, "READY_FOR_QA", "IN_PROGRESS")
    items = [board.task(status="READY_FOR_QA") for _ in range(2)]
    path = f"/projects/{board.project_id}/statuses/READY_FOR_QA"
    in_use = admin.delete(path)
    assert in_use.status_code == 409
    assert error_of(in_use)["details"]["reason"] == "status_in_use"
    nowhere = admin.delete(f"{path}?moveTo=SHIPPED")
    assert error_of(nowhere)["details"] == {"field": "moveTo", "reason": "invalid_value"}
    assert len(statuses(board)) == 6
    gone = admin.ok("DELETE", f"{path}?moveTo=IN_REVIEW")
    assert gone == {"$id": "READY_FOR_QA", "deleted": True}
    assert [s["name"] for s in statuses(board)] == [s["name"] for s in BUILT_IN]
    for item in items:
        moved = admin.ok("GET", f"/tasks/{item['$id']}")
        assert (moved["status"], moved["statusCategory"]) == ("IN_REVIEW", "IN_PROGRESS")
        activity = admin.ok("GET", f"/tasks/{item['$id']}/activity")["documents"]
        change = next(e for e in activity if e["type"] == "task.updated")["payload"]["changes"]
        assert change == {"status": {"from": "READY_FOR_QA", "to": "IN_REVIEW"}}
    last = admin.delete(f"/projects/{board.project_id}/statuses/DONE?moveTo=TODO")
    assert last.status_code == 409
    assert error_of(last)["details"]["reason"] == "last_in_category"
    assert admin.ok("DELETE", f"/projects/{board.project_id}/statuses/IN_REVIEW?moveTo=TODO")


def test_transition_rules_refuse_what_they_do_not_list(admin: Api) -> None:
    board = make_board(admin)
    path = f"/projects/{board.project_id}/workflow"
    assert admin.ok("GET", path) == {"transitions": None}
    rules = {"BACKLOG": ["TODO"], "TODO": ["IN_PROGRESS", "IN_REVIEW"]}
    assert admin.ok("PUT", path, {"transitions": rules}, status=200) == {"transitions": rules}
    item = board.task()
    other = board.task()
    refused = admin.patch(f"/tasks/{item['$id']}", json={"status": "DONE"})
    assert refused.status_code == 409
    assert error_of(refused)["details"] == {
        "reason": "invalid_transition",
        "field": "status",
        "from": "BACKLOG",
        "to": "DONE",
        "allowed": ["TODO"],
    }
    same = admin.ok("PATCH", f"/tasks/{item['$id']}", {"status": "BACKLOG"})
    assert same["$updatedAt"] == item["$updatedAt"]
    assert admin.ok("PATCH", f"/tasks/{item['$id']}", {"status": "TODO"})["status"] == "TODO"
    whole = admin.post(
        "/tasks/bulk-update",
        json={
            "tasks": [
                {"$id": other["$id"], "status": "TODO"},
                {"$id": item["$id"], "status": "DONE"},
            ]
        },
    )
    assert whole.status_code == 409
    assert admin.ok("GET", f"/tasks/{other['$id']}")["status"] == "BACKLOG"
    free = admin.ok("PATCH", f"/tasks/{item['$id']}", {"status": "IN_PROGRESS"})
    assert admin.ok("PATCH", f"/tasks/{free['$id']}", {"status": "DONE"})["status"] == "DONE"
    assert board.task(status="DONE")["status"] == "DONE"
    unknown = admin.request("PUT", f"/api/v1{path}", json={"transitions": {"TODO": ["NOPE"]}})
    assert error_of(unknown)["details"] == {"field": "transitions", "reason": "invalid_value"}
    admin.ok("DELETE", f"/projects/{board.project_id}/statuses/IN_REVIEW?moveTo=IN_PROGRESS")
    assert admin.ok("GET", path) == {"transitions": {"BACKLOG": ["TODO"], "TODO": ["IN_PROGRESS"]}}
    assert admin.ok("PUT", path, {"transitions": None}, status=200) == {"transitions": None}
