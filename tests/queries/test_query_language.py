"""The query language on `GET /tasks?q=` (contract §18): every field, operator, function and
rule, on both databases."""

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from tests.factories import Api, make_project
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def keys(board: Board, q: str, **params: Any) -> list[str]:
    page = board.list(q=q, limit=500, **params)
    found = [item["key"] for item in page["documents"]]
    assert page["total"] == len(found)
    return found


def refused(board: Board, q: str, **params: Any) -> dict[str, Any]:
    response = board.api.get("/tasks", params={"workspaceId": board.workspace_id, "q": q, **params})
    assert response.status_code == 400, response.text
    error: dict[str, Any] = response.json()["error"]
    return error


def test_names_priorities_and_precedence(board: Board) -> None:
    board.task(name="a", status="TODO", priority="LOW", type="BUG")  # WEB-1
    board.task(name="b", status="IN_PROGRESS", priority="HIGH", type="STORY")  # WEB-2
    board.task(name="c", status="DONE", priority="URGENT", type="BUG")  # WEB-3
    board.task(name="d", status="IN_REVIEW", priority="MEDIUM")  # WEB-4
    assert keys(board, "status = TODO") == ["WEB-1"]
    assert keys(board, "STATUS = todo") == ["WEB-1"]  # fields and names in any case
    assert keys(board, 'status in (todo, "done")') == ["WEB-1", "WEB-3"]
    assert keys(board, "status not in (TODO, DONE)") == ["WEB-2", "WEB-4"]
    assert keys(board, "status != DONE") == ["WEB-1", "WEB-2", "WEB-4"]
    assert keys(board, "statusCategory = in_progress") == ["WEB-2", "WEB-4"]
    assert keys(board, "type = bug") == ["WEB-1", "WEB-3"]
    assert keys(board, "priority > medium") == ["WEB-2", "WEB-3"]
    assert keys(board, "priority >= HIGH") == ["WEB-2", "WEB-3"]
    assert keys(board, "priority < MEDIUM") == ["WEB-1"]
    assert keys(board, "priority <= medium") == ["WEB-1", "WEB-4"]
    assert keys(board, "priority > urgent") == []
    # AND binds tighter than OR; NOT and parentheses; keywords in any case.
    assert keys(board, "type = BUG and priority = LOW or status = DONE") == ["WEB-1", "WEB-3"]
    assert keys(board, "type = BUG AND (priority = LOW OR status = IN_REVIEW)") == ["WEB-1"]
    assert keys(board, "not type = BUG") == ["WEB-2", "WEB-4"]
    assert keys(board, "NOT (type = BUG OR priority = HIGH)") == ["WEB-4"]
    assert keys(board, "") == ["WEB-1", "WEB-2", "WEB-3", "WEB-4"]


def test_keys_projects_titles_and_descriptions(board: Board) -> None:
    other = make_project(board.api, board.workspace_id, key="API")
    board.task(name="Login page", description="The 50% case")  # WEB-1
    board.task(name="Logout", description=None)  # WEB-2
    board.api.ok("POST", "/tasks", board.body(name="Api login", projectId=other["$id"]))
    assert keys(board, "key = web-1") == ["WEB-1"]
    assert sorted(keys(board, "key in (WEB-2, API-1)")) == ["API-1", "WEB-2"]
    assert keys(board, "project = api") == ["API-1"]
    assert keys(board, f"project = {other['$id']}") == ["API-1"]
    assert keys(board, "project != API") == ["WEB-1", "WEB-2"]
    assert sorted(keys(board, 'title ~ "LOG"')) == ["API-1", "WEB-1", "WEB-2"]
    assert keys(board, 'title ~ "in p"') == ["WEB-1"]
    assert sorted(keys(board, 'title !~ "logout"')) == ["API-1", "WEB-1"]
    assert keys(board, 'description ~ "50%"') == ["WEB-1"]
    assert keys(board, 'description ~ "_"') == []  # (LIKE's own characters are text)
    assert sorted(keys(board, "description is empty")) == ["API-1", "WEB-2"]
    assert keys(board, "description IS NOT EMPTY") == ["WEB-1"]
    assert keys(board, 'description !~ "case"') == []  # (empty descriptions never match)


def test_assignees_and_labels(board: Board) -> None:
    alice, alice_api = board.member("MEMBER")
    bob, _ = board.member("MEMBER")
    board.task(assigneeIds=[alice["$id"]], labels=["ui", "auth"])  # WEB-1
    board.task(assigneeIds=[alice["$id"], bob["$id"]], labels=["auth"])  # WEB-2
    board.task(labels=["api"])  # WEB-3
    board.task()  # WEB-4
    assert keys(board, f"assignee = {alice['email'].upper()}") == ["WEB-1", "WEB-2"]
    assert keys(board, f'assignee = "{bob["$id"]}"') == ["WEB-2"]
    assert keys(board, "assignee is empty") == ["WEB-3", "WEB-4"]
    assert keys(board, f"assignee != {bob['email']}") == ["WEB-1"]  # (not the unassigned)
    assert keys(board, "assignee = nobody@example.com") == []
    mine = alice_api.ok(
        "GET", f"/tasks?workspaceId={board.workspace_id}&q=assignee%20=%20currentUser()"
    )
    assert [item["key"] for item in mine["documents"]] == ["WEB-1", "WEB-2"]
    assert keys(board, "assignee in (currentUser())") == []
    assert keys(board, "label = auth") == ["WEB-1", "WEB-2"]
    assert keys(board, "labels in (ui, api)") == ["WEB-1", "WEB-3"]
    assert keys(board, "label != ui") == ["WEB-2", "WEB-3"]  # (holds none; not the unlabelled)
    assert keys(board, "label not in (ui, api)") == ["WEB-2"]
    assert keys(board, "label is empty") == ["WEB-4"]
    assert keys(board, "label = UI") == []  # (labels as written, as `labels=` matches them)


def test_sprints_with_their_functions(board: Board) -> None:
    active = board.sprint(status="ACTIVE")
    planned = board.sprint()
    board.api.ok("PATCH", f"/sprints/{planned['$id']}", {"name": "Next Up"})
    board.task(sprintId=active["$id"])  # WEB-1
    board.task(sprintId=planned["$id"])  # WEB-2
    done = board.task(sprintId=active["$id"], status="DONE")  # WEB-3 (stays when completed)
    board.task(sprintId=None)  # WEB-4
    assert keys(board, f"sprint = {active['$id']}") == ["WEB-1", "WEB-3"]
    assert keys(board, 'sprint = "next up"') == ["WEB-2"]
    assert keys(board, "sprint in openSprints()") == ["WEB-1", "WEB-2", "WEB-3"]
    assert keys(board, "sprint in futureSprints()") == ["WEB-2"]
    assert keys(board, "sprint is empty") == ["WEB-4"]
    assert keys(board, "sprint not in futureSprints()") == ["WEB-1", "WEB-3"]
    board.api.ok("PATCH", f"/sprints/{active['$id']}", {"status": "COMPLETED"})
    assert keys(board, "sprint IN closedSprints()") == [done["key"]]
    assert keys(board, "sprint in OPENSPRINTS()") == ["WEB-2"]


def test_hierarchy_numbers_flags_and_blocked(board: Board) -> None:
    epic = board.task(type="EPIC", storyPoints=8)  # WEB-1
    story = board.task(parentId=epic["$id"], storyPoints=3, estimatedHours=2.5)  # WEB-2
    board.task(parentId=story["key"], flagged=True)  # WEB-3
    blocker = board.task(storyPoints=0.5)  # WEB-4
    board.api.ok(
        "POST", f"/tasks/{blocker['$id']}/relations", {"type": "blocks", "targetId": "WEB-2"}
    )
    assert keys(board, "parent = web-1") == ["WEB-2"]
    assert keys(board, f"parent in ({story['$id']})") == ["WEB-3"]
    assert keys(board, "parent is empty") == ["WEB-1", "WEB-4"]
    assert keys(board, "parent != WEB-1") == ["WEB-3"]
    assert keys(board, "ancestor = WEB-1") == ["WEB-2", "WEB-3"]
    assert keys(board, "ancestor = WEB-1 AND flagged = true") == ["WEB-3"]
    assert keys(board, "ancestor = WEB-1 OR key = WEB-4") == ["WEB-2", "WEB-3", "WEB-4"]
    assert keys(board, "storyPoints > 1") == ["WEB-1", "WEB-2"]
    assert keys(board, "storyPoints <= 3") == ["WEB-2", "WEB-4"]
    assert keys(board, "storyPoints is empty") == ["WEB-3"]
    assert keys(board, "storyPoints in (3, 8)") == ["WEB-1", "WEB-2"]
    assert keys(board, "storyPoints != 3") == ["WEB-1", "WEB-4"]  # (not the unestimated)
    assert keys(board, "estimatedHours = 2.5") == ["WEB-2"]
    assert keys(board, "flagged = true") == ["WEB-3"]
    assert keys(board, "flagged != true") == ["WEB-1", "WEB-2", "WEB-4"]
    assert keys(board, "blocked = true") == ["WEB-2"]
    board.api.ok("PATCH", f"/tasks/{blocker['$id']}", {"status": "DONE"})
    assert keys(board, "blocked = true") == []
    assert keys(board, "blocked = false") == ["WEB-1", "WEB-2", "WEB-3", "WEB-4"]


def test_dates_absolute_and_relative(board: Board) -> None:
    today = datetime.now(UTC).date()
    board.task(dueDate=(today - timedelta(days=3)).isoformat())  # WEB-1
    board.task(dueDate=(today + timedelta(days=10)).isoformat())  # WEB-2
    board.task()  # WEB-3
    assert keys(board, "dueDate < now()") == ["WEB-1"]
    assert keys(board, "dueDate <= +2w") == ["WEB-1", "WEB-2"]
    assert keys(board, "dueDate > startOfDay()") == ["WEB-2"]
    assert keys(board, "dueDate >= startOfDay(-3d)") == ["WEB-1", "WEB-2"]
    assert keys(board, f"dueDate = {today - timedelta(days=3)}") == ["WEB-1"]
    assert keys(board, "dueDate is empty") == ["WEB-3"]
    assert keys(board, "updatedAt >= -7d") == ["WEB-1", "WEB-2", "WEB-3"]
    assert keys(board, "createdAt < -30m") == []
    assert keys(board, "createdAt > -12h AND createdAt <= now()") == ["WEB-1", "WEB-2", "WEB-3"]
    assert keys(board, f"createdAt = {today}") == ["WEB-1", "WEB-2", "WEB-3"]  # (that day)
    assert keys(board, f"createdAt > {today}") == []  # (after that day)
    assert keys(board, f"createdAt <= {today}") == ["WEB-1", "WEB-2", "WEB-3"]
    assert keys(board, f"createdAt < {today}") == []
    assert keys(board, f"createdAt != {date(2020, 1, 1)}") == ["WEB-1", "WEB-2", "WEB-3"]


def test_order_by_replaces_sort_and_cursors_follow_it(board: Board) -> None:
    for priority, points in [("LOW", 5), ("URGENT", None), ("HIGH", 1), ("MEDIUM", 3)]:
        board.task(priority=priority, storyPoints=points)
    assert keys(board, "ORDER BY priority DESC") == ["WEB-2", "WEB-3", "WEB-4", "WEB-1"]
    assert keys(board, "order by storyPoints asc") == ["WEB-3", "WEB-4", "WEB-1", "WEB-2"]
    assert keys(board, "priority >= MEDIUM ORDER BY key DESC") == ["WEB-4", "WEB-3", "WEB-2"]
    assert keys(board, "priority > LOW", sort="-key") == ["WEB-4", "WEB-3", "WEB-2"]
    error = refused(board, "ORDER BY key", sort="title")
    assert error["details"] == {"field": "sort", "reason": "invalid_value"}
    first = board.list(q="priority != LOW ORDER BY priority DESC", limit=2)
    assert [i["key"] for i in first["documents"]] == ["WEB-2", "WEB-3"]
    assert first["total"] == 3
    board.task(priority="URGENT")  # (created meanwhile: before the cursor, never shown)
    rest = board.list(
        q="priority != LOW ORDER BY priority DESC", limit=2, cursor=first["nextCursor"]
    )
    assert [i["key"] for i in rest["documents"]] == ["WEB-4"]
    assert rest["nextCursor"] is None
    assert rest["total"] == 4
    other = board.api.get(
        "/tasks",
        params={
            "workspaceId": board.workspace_id,
            "q": "priority = LOW",
            "cursor": first["nextCursor"],
        },
    )
    assert other.status_code == 400  # (a cursor is tied to its query)


def test_q_combines_with_the_other_filters(board: Board) -> None:
    sprint = board.sprint()
    board.task(priority="HIGH", sprintId=sprint["$id"])  # WEB-1
    board.task(priority="HIGH")  # WEB-2
    board.task(priority="LOW", sprintId=sprint["$id"])  # WEB-3
    assert keys(board, "priority = HIGH", sprintId=sprint["$id"]) == ["WEB-1"]
    assert keys(board, "priority = HIGH OR key = WEB-3", sprintId="none") == ["WEB-2"]


@pytest.mark.parametrize(
    ("q", "position", "words"),
    [
        ("stauts = DONE", 0, "unknown field 'stauts'; did you mean 'status'?"),
        ("status = DONE AND asignee = x", 18, "did you mean 'assignee'?"),
        (
            "sprint in openSprint()",
            10,
            "unknown function 'openSprint()'; did you mean 'openSprints'?",
        ),
        ("priority = HIHG", 11, "did you mean 'HIGH'?"),
        ("status = ", 9, "ends too early"),
        ("status = DONE AND", 17, "ends too early"),
        ("(status = DONE", 14, "expected ')'"),
        ('title ~ "open', 8, "not closed"),
        ("status > DONE", 7, "status does not take >"),
        ("storyPoints = many", 14, "takes a number"),
        ("dueDate < tomorrow", 10, "is not a date"),
        ("dueDate < 2026-02-30", 10, "is not a date"),
        ("flagged = maybe", 10, "true or false"),
        ("ORDER BY points", 9, "did you mean 'storyPoints'?"),
        ("ORDER BY key, KEY", 14, "twice"),
        ("status = DONE; DROP TABLE work_items", 13, "unexpected ';'"),
        ("fields.severity = HIGH", 0, "unknown field 'fields.severity'"),
        ('text ~ "!!"', 7, "at least one word"),
    ],
)
def test_a_query_that_cannot_run_names_the_problem_and_where(
    board: Board, q: str, position: int, words: str
) -> None:
    error = refused(board, q)
    assert error["details"] == {"field": "q", "reason": "invalid_query", "position": position}
    assert words in error["message"]


def test_limits(board: Board) -> None:
    long = refused(board, "title ~ " + '"' + "x" * 4_000 + '"')
    assert long["details"]["reason"] == "too_long"
    values = ", ".join(f"v{i}" for i in range(501))
    many = refused(board, f"label in ({values})")
    assert many["details"]["reason"] == "too_long"
    assert (
        many["details"]["position"]
        == len("label in (") + len(", ".join(f"v{i}" for i in range(500))) + 2
    )
    board.task(labels=["v499"])
    assert keys(board, "label in (" + ", ".join(f"v{i}" for i in range(500)) + ")") == ["WEB-1"]
    deep = refused(board, "(" * 33 + "key = WEB-1" + ")" * 33)
    assert deep["details"] == {"field": "q", "reason": "too_long", "position": 32}
    assert keys(board, "(" * 32 + "key = WEB-1" + ")" * 32) == ["WEB-1"]
    nots = refused(board, "NOT " * 40 + "key = WEB-1")
    assert nots["details"]["reason"] == "too_long"


def test_hostile_values_are_only_values(board: Board) -> None:
    board.task(name='He said "hi" \\ then \' left', labels=["x'); DROP TABLE users; --"])
    assert keys(board, r'title ~ "said \"hi\" \\ then"') == ["WEB-1"]
    assert keys(board, 'title ~ "\' left"') == ["WEB-1"]
    assert keys(board, 'label = "x\'); DROP TABLE users; --"') == ["WEB-1"]
    assert keys(board, 'key = "\' OR 1=1 --"') == []
    assert keys(board, "status = \"DONE' OR '1'='1\"") == []
    assert board.api.get("/me").status_code == 200
