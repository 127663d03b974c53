"""The registry of work item fields (`workitems/fields.py`) is what the API does: every field
it declares is shown, documented, filtered and described to the board as it says."""

from typing import Any

from tests.factories import Api
from tests.workitem_factories import make_board

EMBEDDED = {"project", "assignees", "comments", "timeLogs", "childCount"}
EMBEDDED |= {"parent", "progress", "relations", "blocked", "links"}


def described(api: Api) -> dict[str, Any]:
    meta: dict[str, Any] = api.ok("GET", "/meta/work-items")
    return meta


def test_the_description_names_every_field_an_item_shows(admin: Api) -> None:
    board = make_board(admin)
    item = admin.ok("GET", f"/tasks/{board.task()['$id']}")
    meta = described(admin)
    names = [f["name"] for f in meta["fields"]]
    assert names == [name for name in item if name not in EMBEDDED]
    by_name = {f["name"]: f for f in meta["fields"]}
    assert by_name["statusCategory"]["enum"] == ["BACKLOG", "TODO", "IN_PROGRESS", "DONE"]
    assert by_name["priority"]["enum"] == ["LOW", "MEDIUM", "HIGH", "URGENT"]
    assert by_name["priority"]["sort"] == "priority"
    assert by_name["dueDate"]["kind"] == "day"
    assert by_name["dueDate"]["nullable"]
    assert [f["param"] for f in by_name["dueDate"]["filters"]] == [
        "dueDate",
        "dueBefore",
        "dueAfter",
    ]
    assert not by_name["$id"]["settable"]
    assert by_name["title"]["settable"]
    assert {"task.created", "task.updated", "task.deleted"} <= set(meta["eventTypes"])


def test_the_description_needs_a_caller(api: Api) -> None:
    response = api.get("/meta/work-items")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHENTICATED"


DISTINCT = {
    "status": "DONE",
    "statusCategory": "DONE",
    "type": "BUG",
    "priority": "HIGH",
    "dueDate": "2026-12-24",
    "dueBefore": "2026-12-25",
    "dueAfter": "2026-12-23",
    "flagged": "true",
}
"""For each filter of the registry, a value that only the distinct item matches."""


def test_every_filter_of_the_registry_narrows_the_page_and_the_total(admin: Api) -> None:
    board = make_board(admin)
    for _ in range(2):
        board.task()
    distinct = board.task(
        type="BUG", status="DONE", priority="HIGH", dueDate="2026-12-24", flagged=True
    )
    distinct = admin.ok("PATCH", f"/tasks/{distinct['$id']}", {"title": "Changed last"})
    values = {**DISTINCT, "updatedSince": distinct["$updatedAt"]}
    filters = [f["param"] for field in described(admin)["fields"] for f in field["filters"]]
    assert set(filters) == set(values), "give each filter of the registry a value here"
    assert board.list()["total"] == 3
    for param in filters:
        page = board.list(**{param: values[param]})
        assert (param, page["total"]) == (param, 1)
        assert [item["$id"] for item in page["documents"]] == [distinct["$id"]]


def test_the_document_declares_what_the_registry_declares(admin: Api) -> None:
    document = admin.client.get("/api/v1/openapi.json").json()
    schemas = document["components"]["schemas"]
    fields = described(admin)["fields"]
    settable = {f["name"] for f in fields if f["settable"]}
    assert settable <= set(schemas["TaskCreate"]["properties"])
    assert settable <= set(schemas["TaskUpdate"]["properties"])
    assert {f["name"] for f in fields} <= set(schemas["TaskRead"]["properties"])
    assert set(schemas["TaskRead"]["properties"]["priority"]["enum"]) == {
        "LOW",
        "MEDIUM",
        "HIGH",
        "URGENT",
    }
    parameters = {p["name"] for p in document["paths"]["/api/v1/tasks"]["get"]["parameters"]}
    assert {f["param"] for field in fields for f in field["filters"]} <= parameters
    sort = next(
        p for p in document["paths"]["/api/v1/tasks"]["get"]["parameters"] if p["name"] == "sort"
    )
    for field in fields:
        if field["sort"]:
            assert f"`{field['sort']}`" in sort["description"]


def test_a_plain_field_is_created_changed_and_cleared_by_its_kind(admin: Api) -> None:
    board = made = make_board(admin)
    made = board.task(estimatedHours=2, dueDate="2026-12-24", description="Plain")
    assert (made["estimatedHours"], made["dueDate"], made["description"]) == (
        2.0,
        "2026-12-24",
        "Plain",
    )
    assert (made["priority"], made["flagged"]) == ("MEDIUM", False)
    changed = admin.ok("PATCH", f"/tasks/{made['$id']}", {"dueDate": None, "priority": "LOW"})
    assert (changed["dueDate"], changed["priority"]) == (None, "LOW")
    refused = admin.patch(f"/tasks/{made['$id']}", json={"priority": None})
    assert refused.status_code == 400
    assert refused.json()["error"]["details"]["field"] == "priority"
    events = admin.ok("GET", f"/tasks/{made['$id']}/activity")["documents"]
    changes = next(e for e in events if e["type"] == "task.updated")["payload"]["changes"]
    assert changes == {
        "dueDate": {"from": "2026-12-24", "to": None},
        "priority": {"from": "MEDIUM", "to": "LOW"},
    }


def test_an_empty_value_of_a_field_of_fixed_values_sorts_last() -> None:
    """(No built-in field is an optional one of fixed values yet: a custom-like one here.)"""
    from typing import Literal

    from sprintboard.workitems import ordering
    from sprintboard.workitems.fields import ItemField

    severity = ItemField(
        "severity", "severity", "enum", nullable=True, value=Literal["MINOR", "MAJOR"]
    )
    required = ItemField("level", "level", "enum", value=Literal["LOW", "HIGH"])
    assert (
        ordering._rank(severity) == "CASE wi.severity WHEN 'MINOR' THEN 0 WHEN 'MAJOR' THEN 1 END"
    )
    assert ordering._rank(required) == "CASE wi.level WHEN 'LOW' THEN 0 ELSE 1 END"
