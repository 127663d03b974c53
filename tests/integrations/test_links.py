"""Which items a delivery links and moves (contract §20): keys as whole words, this
workspace's only; moves under the project's transition rules, to statuses it has, never of
an item already there; a merged pull request stays merged; a late delivery changes nothing."""

import copy
from typing import Any

import pytest

from tests.factories import Api, make_user
from tests.integrations.forge_factories import deliver, example, make_integration
from tests.workitem_factories import make_board


def pull_request(title: str = "", *, branch: str = "changes", body: str = "") -> Any:
    payload = example("github-pull_request-opened.json")
    payload["pull_request"].update(title=title, body=body)
    payload["pull_request"]["head"]["ref"] = branch
    return payload


def merged(payload: Any) -> Any:
    done = copy.deepcopy(payload)
    done["action"] = "closed"
    done["pull_request"].update(state="closed", merged=True, updated_at="2019-05-15T15:21:18Z")
    return done


def linked(admin: Api, key: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = admin.ok("GET", f"/tasks/{key}/links")["documents"]
    return found


def test_keys_are_whole_words_as_the_contract_spells_them(admin: Api) -> None:
    board = make_board(admin, key="WEB")
    web1 = board.task()
    assert web1["key"] == "WEB-1"
    integration = make_integration(admin, board.workspace_id, "github")
    for title in ("XWEB-1 is another project", "WEB-12 is another item", "WEB-1x is not a key"):
        deliver(admin, integration, "pull_request", pull_request(title))
    assert linked(admin, "WEB-1") == []
    deliver(admin, integration, "pull_request", pull_request(branch="feature/WEB-1-login"))
    assert len(linked(admin, "WEB-1")) == 1
    other = example("github-pull_request-opened.json")
    other["pull_request"].update(html_url="https://github.com/o/r/pull/9", title="", number=9)
    other["pull_request"]["body"] = "Part of (WEB-1)."
    deliver(admin, integration, "pull_request", other)
    assert [link["number"] for link in linked(admin, "WEB-1")] == [2, 9]


def test_only_the_integrations_workspace_is_linked(admin: Api) -> None:
    mine, theirs = make_board(admin, key="WEB"), make_board(admin, key="WEB")
    ours, their_item = mine.task(), theirs.task()
    assert ours["key"] == their_item["key"] == "WEB-1"
    integration = make_integration(admin, mine.workspace_id, "github", onOpen="IN_PROGRESS")
    deliver(admin, integration, "pull_request", pull_request("WEB-1: login"))
    assert len(linked(admin, ours["$id"])) == 1
    assert linked(admin, their_item["$id"]) == []
    assert admin.ok("GET", f"/tasks/{their_item['$id']}")["status"] == "BACKLOG"


def test_a_refused_move_leaves_the_status_and_still_links(admin: Api) -> None:
    board = make_board(admin, key="WEB")
    item = board.task()
    rules = {"BACKLOG": ["TODO"], "TODO": ["IN_PROGRESS"]}
    admin.ok("PUT", f"/projects/{board.project_id}/workflow", {"transitions": rules}, status=200)
    integration = make_integration(admin, board.workspace_id, "github")
    opened = pull_request("WEB-1: login")
    deliver(admin, integration, "pull_request", merged(opened))
    assert admin.ok("GET", "/tasks/WEB-1?workspaceId=" + board.workspace_id)["status"] == "BACKLOG"
    assert [link["state"] for link in linked(admin, item["$id"])] == ["merged"]


def test_statuses_a_project_lacks_and_items_already_there_are_left_alone(admin: Api) -> None:
    board = make_board(admin, key="WEB")
    there, lacking = board.task(), board.task()
    admin.ok("PATCH", f"/tasks/{there['$id']}", {"status": "IN_REVIEW"})
    integration = make_integration(
        admin, board.workspace_id, "gitlab", onOpen="IN_REVIEW", onMerge="SHIPPED"
    )
    payload = example("gitlab-merge_request-open.json")
    payload["object_attributes"]["title"] = f"{there['key']} and {lacking['key']}"
    assert deliver(admin, integration, "Merge Request Hook", payload).status_code == 200
    history = admin.ok("GET", f"/tasks/{there['$id']}/activity")["documents"]
    assert [e["type"] for e in history] == ["task.created", "task.updated", "link.created"]
    assert admin.ok("GET", f"/tasks/{lacking['$id']}")["status"] == "IN_REVIEW"
    done = copy.deepcopy(payload)
    done["object_attributes"].update(action="merge", state="merged")
    assert deliver(admin, integration, "Merge Request Hook", done).status_code == 200
    for item in (there, lacking):  # (no SHIPPED status in the project)
        assert admin.ok("GET", f"/tasks/{item['$id']}")["status"] == "IN_REVIEW"
        assert [link["state"] for link in linked(admin, item["$id"])] == ["merged"]


def test_without_on_merge_the_first_done_status_is_the_target(admin: Api) -> None:
    board = make_board(admin, key="WEB")
    item = board.task()
    path = f"/projects/{board.project_id}/statuses"
    admin.ok("POST", path, {"name": "SHIPPED", "category": "DONE", "position": 0})
    first_done = next(
        s["name"] for s in admin.ok("GET", path)["documents"] if s["category"] == "DONE"
    )
    integration = make_integration(admin, board.workspace_id, "gitea")
    deliver(admin, integration, "pull_request", merged(pull_request(f"{item['key']} done")))
    assert admin.ok("GET", f"/tasks/{item['$id']}")["status"] == first_done


def test_a_merged_pull_request_stays_merged_and_late_deliveries_change_nothing(
    admin: Api,
) -> None:
    board = make_board(admin, key="WEB")
    item = board.task()
    integration = make_integration(admin, board.workspace_id, "github", onOpen="IN_PROGRESS")
    opened = pull_request(f"{item['key']}: login")
    closed = copy.deepcopy(opened)
    closed["action"] = "closed"
    closed["pull_request"].update(state="closed", updated_at="2019-05-15T15:21:00Z")
    deliver(admin, integration, "pull_request", closed)
    deliver(admin, integration, "pull_request", opened)  # (older: it changes nothing)
    assert [link["state"] for link in linked(admin, item["$id"])] == ["closed"]
    assert admin.ok("GET", f"/tasks/{item['$id']}")["status"] == "BACKLOG"

    deliver(admin, integration, "pull_request", merged(opened))
    reopened = copy.deepcopy(opened)
    reopened["action"] = "reopened"
    reopened["pull_request"]["updated_at"] = "2020-01-01T00:00:00Z"
    deliver(admin, integration, "pull_request", reopened)
    assert [link["state"] for link in linked(admin, item["$id"])] == ["merged"]
    assert admin.ok("GET", f"/tasks/{item['$id']}")["status"] == "DONE"


def test_links_are_read_by_members_only(admin: Api) -> None:
    board = make_board(admin, key="WEB")
    item = board.task()
    integration = make_integration(admin, board.workspace_id, "github")
    deliver(admin, integration, "pull_request", pull_request(f"{item['key']}"))
    _, viewer = board.member("VIEWER")
    assert (
        len(
            viewer.ok("GET", f"/tasks/{item['key']}/links?workspaceId={board.workspace_id}")[
                "documents"
            ]
        )
        == 1
    )
    _, outsider = make_user(admin)
    assert outsider.get(f"/tasks/{item['$id']}/links").status_code == 404
    assert admin.get("/tasks/NOPE-1/links").status_code == 404


@pytest.mark.parametrize(
    "word",
    ["close", "Closes", "CLOSED", "fix", "fixes", "Fixed", "resolve", "resolves", "RESOLVED"],
)
def test_every_closing_keyword_closes_on_the_default_branch(admin: Api, word: str) -> None:
    board = make_board(admin, key="WEB")
    item = board.task()
    integration = make_integration(admin, board.workspace_id, "github")
    payload = example("github-push.json")
    payload["commits"][0]["message"] = f"Login form\n\n{word} {item['key']}"
    deliver(admin, integration, "push", payload)
    assert admin.ok("GET", f"/tasks/{item['$id']}")["status"] == "DONE"
    elsewhere = example("github-push.json")
    elsewhere["ref"] = "refs/heads/feature"
    other = board.task()
    elsewhere["commits"][0]["message"] = f"{word} {other['key']}"
    elsewhere["commits"][0]["id"] = "f" * 40
    deliver(admin, integration, "push", elsewhere)
    assert admin.ok("GET", f"/tasks/{other['$id']}")["status"] == "BACKLOG"
    assert len(linked(admin, other["$id"])) == 1
