"""`sprintboard import` and `export`, run as a user runs them, against a real server."""

from pathlib import Path
from typing import Any

from sprintboard.client import Client
from tests.agent_servers import Served, server

__all__ = ["server"]

JIRA_SAMPLE = Path(__file__).parents[1] / "data" / "jira-export.csv"


def team(api: Client, name: str, key: str) -> tuple[str, str]:
    """A workspace with Ada and Grace as members, and an empty project; their ids."""
    workspace = api.create_workspace(name)
    for person in ("ada", "grace"):
        email = f"{person}-{key.lower()}@example.com"
        user = api.request("POST", "/users", body={"name": person.title(), "email": email})
        api.add_member(workspace["$id"], user["$id"], "MEMBER")
    project = api.create_project(workspace["$id"], name=name, key=key)
    return workspace["$id"], project["$id"]


def sample(tmp_path: Path, key: str) -> Path:
    """The Jira sample with its people renamed to this test's members."""
    text = JIRA_SAMPLE.read_text()
    for person in ("ada", "grace"):
        text = text.replace(f"{person}@example.com", f"{person}-{key.lower()}@example.com")
    path = tmp_path / "jira.csv"
    path.write_text(text)
    return path


def test_a_jira_export_is_imported_whole(server: Served, tmp_path: Path) -> None:
    with server.client() as api:
        workspace, project = team(api, "Jira shop", "SHOP")
        done = server.run(
            "import", "jira-csv", str(sample(tmp_path, "SHOP")),
            "--workspace", workspace, "--project", project,
        )  # fmt: skip
        assert done.code == 0, done.stderr
        assert "items: 5/5" in done.stderr
        assert "'Sub-task' → TASK (1 rows)" in done.stderr
        items = {item["key"]: api.task(item["$id"]) for item in api.tasks(workspace)}
        sprints = {s["name"]: s["$id"] for s in api.sprints(project_id=project)}

    assert list(sprints) == ["Shop Sprint 1", "Shop Sprint 2"]
    # Created oldest first, so the keys keep Jira's order: SHOP-1, 3, 5, 6, 7 → 1 to 5.
    epic, provider, runbook, friendly, crash = (items[f"SHOP-{n}"] for n in range(1, 6))
    assert (epic["title"], epic["type"], epic["status"]) == ("Payments", "EPIC", "IN_PROGRESS")
    assert epic["priority"] == "HIGH"
    assert epic["sprintId"] is None
    assert crash["title"] == "Checkout flow crashes on empty cart"
    assert (crash["type"], crash["status"], crash["priority"]) == ("BUG", "IN_PROGRESS", "URGENT")
    assert crash["description"] == 'Steps:\n1. Empty the cart\n2. Press "Pay"'
    assert crash["labels"] == ["checkout", "urgent"]
    assert crash["storyPoints"] == 3
    assert crash["dueDate"] == "2025-12-01"
    assert crash["sprintId"] == sprints["Shop Sprint 2"]
    assert [a["email"] for a in crash["assignees"]] == ["ada-shop@example.com"]
    assert friendly["storyPoints"] == 5  # (from "Story point estimate")
    assert (provider["type"], provider["status"]) == ("TASK", "DONE")
    assert runbook["sprintId"] == sprints["Shop Sprint 1"]
    assert [a["email"] for a in runbook["assignees"]] == ["grace-shop@example.com"]
    for child in (provider, friendly, crash):
        assert child["parentId"] == epic["$id"]
    assert runbook["parentId"] is None
    assert epic["childCount"] == 3
    seen_from_friendly = sorted((r["type"], r["task"]["key"]) for r in friendly["relations"])
    assert seen_from_friendly == [("blocked_by", "SHOP-3"), ("duplicated_by", "SHOP-5")]
    seen_from_runbook = sorted((r["type"], r["task"]["key"]) for r in runbook["relations"])
    assert seen_from_runbook == [("blocks", "SHOP-4"), ("relates_to", "SHOP-2")]


def test_a_dry_run_checks_and_writes_nothing(server: Served, tmp_path: Path) -> None:
    with server.client() as api:
        workspace, project = team(api, "Dry", "DRY")
        done = server.run(
            "import", "jira-csv", str(sample(tmp_path, "DRY")),
            "--workspace", workspace, "--project", project, "--dry-run",
        )  # fmt: skip
        assert done.code == 0, done.stderr
        assert "would create 2 sprints, 5 items, 3 parents, 3 relations" in done.stdout
        assert list(api.tasks(workspace)) == []
        assert api.sprints(project_id=project) == []


def test_every_bad_row_is_named_and_nothing_is_written(server: Served, tmp_path: Path) -> None:
    with server.client() as api:
        workspace, project = team(api, "Bad rows", "BAD")
        bad = tmp_path / "bad.csv"
        bad.write_text(
            "Summary,Issue key,Issue Type,Status,Assignee,Parent,Custom field (Story Points)\n"
            "Fine,BAD-1,Task,To Do,,,\n"
            "Who?,BAD-2,Task,To Do,stranger@example.com,,\n"
            "Odd status,BAD-3,Task,Ready for QA,,,\n"
            "Orphan,BAD-4,Story,Done,,BAD-99,\n"
            ",BAD-5,Bug,Done,,,lots\n"
        )
        args = ["--workspace", workspace, "--project", project]
        for dry in ([], ["--dry-run"]):
            done = server.run("import", "jira-csv", str(bad), *args, *dry)
            assert done.code == 1
            problems = [line for line in done.stderr.splitlines() if ": line " in line]
            assert [line.split(": line ")[1].split(":")[0] for line in problems] == [
                "3", "4", "5", "6", "6",
            ]  # fmt: skip
            assert "'stranger@example.com' is not a member" in problems[0]
            assert "--map-status 'Ready for QA=TODO'" in problems[1]
            assert "parent 'BAD-99' is not in the file" in problems[2]
            assert "'lots' is not a number" in problems[3]
            assert "title: required" in problems[4]
            assert "4 bad rows; nothing was written" in done.stderr
        assert list(api.tasks(workspace)) == []
        assert api.sprints(project_id=project) == []
        mapped = server.run(
            "import", "jira-csv", str(bad), *args, "--map-status", "Ready for QA=IN_REVIEW"
        )
        assert mapped.code == 1
        assert "'Ready for QA' → IN_REVIEW (1 rows)" in mapped.stderr
        assert ": line 4:" not in mapped.stderr
        assert "3 bad rows" in mapped.stderr


def test_our_csv_columns_are_imported(server: Served, tmp_path: Path) -> None:
    with server.client() as api:
        workspace, project = team(api, "Own CSV", "OWN")
        own = tmp_path / "own.csv"
        own.write_text(
            "key,title,type,status,assignees,labels,storyPoints,sprint,parent,blocks\n"
            "a,Epic,EPIC,TODO,,,,,,\n"
            "b,Child,STORY,TODO,ada-own@example.com;grace-own@example.com,x;y,2,S1,a,c\n"
            "c,Later,TASK,BACKLOG,,,,,,\n"
        )
        done = server.run("import", "csv", str(own), "--workspace", workspace, "--project", project)
        assert done.code == 0, done.stderr
        child = api.task("OWN-2")
    assert child["parentId"] == api_id(server, "OWN-1")
    assert sorted(a["email"] for a in child["assignees"]) == [
        "ada-own@example.com",
        "grace-own@example.com",
    ]
    assert (child["labels"], child["storyPoints"]) == (["x", "y"], 2)
    assert [(r["type"], r["task"]["key"]) for r in child["relations"]] == [("blocks", "OWN-3")]


def test_export_then_import_then_export_gives_the_same_document(
    server: Served, tmp_path: Path
) -> None:
    with server.client() as api:
        workspace, project = team(api, "Round trip", "RND")
        ada = next(m for m in api.members(workspace) if m["email"].startswith("ada"))
        w = {"workspaceId": workspace, "projectId": project}
        done_sprint = api.create_sprint(**w, name="Done", goal="Ship it")
        active = api.create_sprint(**w, name="Now", startDate="2026-11-20", endDate="2026-12-04")
        api.create_sprint(**w, name="Next")
        epic = api.create_task(**w, title="Epic", type="EPIC", sprintId=None)
        first = api.create_task(**w, title="First", sprintId=done_sprint["$id"], storyPoints=3)
        api.create_task(**w, title="Gone", sprintId=None)
        second = api.create_task(
            **w,
            title="Second",
            sprintId=active["$id"],
            assigneeIds=[ada["userId"]],
            labels=["a", "b"],
            dueDate="2026-12-01",
            estimatedHours=4.5,
            flagged=True,
            description="Two\nlines",
        )
        api.delete_task("RND-3")
        api.update_task(first["$id"], status="DONE", parentId=epic["$id"])
        api.update_task(second["$id"], parentId=epic["$id"], position=0.5)
        api.relate(first["$id"], "blocks", second["$id"])
        api.relate(second["$id"], "relates_to", epic["$id"])
        api.add_comment(second["$id"], "A comment")
        api.log_time(second["$id"], hours=1.5, date="2026-11-21", note="pairing")
        api.update_sprint(done_sprint["$id"], status="ACTIVE")
        api.complete_sprint(done_sprint["$id"])
        api.update_sprint(active["$id"], status="ACTIVE")

        first_export = server.run("export", "--workspace", workspace, "--project", project)
        assert first_export.code == 0, first_export.stderr
        path = tmp_path / "export.json"
        path.write_text(first_export.stdout)
        target_workspace, target_project = team(api, "Round trip 2", "RNE")
        for member in api.members(workspace):  # (the same people, in another workspace)
            if member["userId"] not in {m["userId"] for m in api.members(target_workspace)}:
                api.add_member(target_workspace, member["userId"], "MEMBER")
        imported = server.run(
            "import",
            "json",
            str(path),
            "--workspace",
            target_workspace,
            "--project",
            target_project,
        )
        assert imported.code == 0, imported.stderr
        second_export = server.run(
            "export", "--workspace", target_workspace, "--project", target_project
        )
        assert second_export.code == 0, second_export.stderr

    before, after = comparable(first_export.stdout), comparable(second_export.stdout)
    assert after == before
    items = before["projects"][0]["items"]
    assert [item["title"] for item in items] == ["Epic", "First", "Second"]
    assert items[2]["comments"][0]["body"] == "A comment"
    assert items[2]["timeLogs"] == [{"hours": 1.5, "date": "2026-11-21", "note": "pairing"}]


def comparable(text: str) -> Any:
    """The document with what must differ between two workspaces taken out: ids, keys (of
    another project), the workspace's name, people's emails (another team), the time."""
    import json
    import re

    document = json.loads(text)
    document.pop("exportedAt")
    document.pop("workspace")
    names: dict[str, str] = {}

    for project in document["projects"]:
        project.pop("name")

    def rename(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: rename(v) for k, v in value.items() if k != "key"}
        if isinstance(value, list):
            return [rename(v) for v in value]
        if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{32}", value):
            return names.setdefault(value, f"id{len(names)}")
        if isinstance(value, str) and "@example.com" in value:
            return value.split("-")[0]
        return value

    return rename(document)


def api_id(served: Served, key: str) -> str:
    with served.client() as api:
        found: str = api.task(key)["$id"]
        return found
