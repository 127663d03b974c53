"""`sprintboard import jira-csv` with exports shaped as Jira writes them (contract §21).

`tests/data/jira/cloud.csv` is a Jira Cloud export: a byte-order mark and CRLF lines, people
by display name (and one email in another case), a filtered export whose items name a
parent and a blocker outside it, a status and a type the project lacks (with Jira's Status
Category), a Cloners link, a carried-over item in two sprints, rows newest first (so its
sprints arrive 3, 2, 1), a description over three lines, an empty row, `Due Date` spelt
with a capital, and dates as `22/Sep/25 9:26 AM`. `server.csv` is a Jira Server export
without a Status column, its column names in lower case and dates as `16/02/2017 15:26`.
"""

import csv
from pathlib import Path

from sprintboard.client import Client
from tests.agent_servers import Served, server

__all__ = ["server"]

DATA = Path(__file__).parents[1] / "data" / "jira"


def team(api: Client, name: str, key: str) -> tuple[str, str]:
    """A workspace with Ada Lovelace and Grace Hopper, and an empty project; their ids."""
    workspace = api.create_workspace(name)
    for person, full_name in (("ada", "Ada Lovelace"), ("grace", "Grace Hopper")):
        email = f"{person}-{key.lower()}@example.com"
        user = api.request("POST", "/users", body={"name": full_name, "email": email})
        api.add_member(workspace["$id"], user["$id"], "MEMBER")
    project = api.create_project(workspace["$id"], name=name, key=key)
    return workspace["$id"], project["$id"]


def export_file(tmp_path: Path, name: str, key: str) -> Path:
    """The export with its people's emails made this test's (bytes kept: BOM, CRLF)."""
    data = (DATA / name).read_bytes().replace(b"{key}", key.lower().encode())
    path = tmp_path / name
    path.write_bytes(data)
    return path


def bad_lines(stderr: str) -> list[tuple[str, str]]:
    found = [line.split(": line ", 1)[1] for line in stderr.splitlines() if ": line " in line]
    return [(line.split(":", 1)[0], line.split(":", 1)[1].strip()) for line in found]


def test_a_cloud_export_names_what_stops_it_in_line_order(server: Served, tmp_path: Path) -> None:
    with server.client() as api:
        workspace, project = team(api, "Cloud as is", "CAI")
        done = server.run(
            "import", "jira-csv", str(export_file(tmp_path, "cloud.csv", "CAI")),
            "--workspace", workspace, "--project", project,
        )  # fmt: skip
        assert done.code == 1, done.stderr
        assert list(api.tasks(workspace)) == []
        assert [s["name"] for s in api.statuses(project)] == [
            "BACKLOG", "TODO", "IN_PROGRESS", "IN_REVIEW", "DONE",
        ]  # fmt: skip
    problems = bad_lines(done.stderr)
    # Each by the line its record starts on (the three-line description is lines 3-5), in
    # the file's order though items are planned oldest first.
    assert [line for line, _ in problems] == ["2", "2", "3", "3", "7"]
    assert (
        "status 'Ready for QA' is not one of the project's: add --map-status " in (problems[0][1])
    )
    assert "or --create-missing" in problems[0][1]
    assert "parent '10001' is not in the file" in problems[1][1]
    assert "'Sprint Defect' is not one of the workspace's" in problems[2][1]
    assert "assignee 'Linus T.' is not a member of the workspace" in problems[3][1]
    assert "--map-assignee 'Linus T.=<email>' or --unknown-assignees skip" in problems[3][1]
    assert "related item 'CS-99' is not in the file" in problems[4][1]
    # Reporter and Creator name people who are not members: never a problem.
    assert "Margaret" not in done.stderr
    assert "Someone Gone" not in done.stderr
    assert "3 bad rows; nothing was written" in done.stderr


def test_a_cloud_export_imports_with_the_options_it_asks_for(
    server: Served, tmp_path: Path
) -> None:
    key_map = tmp_path / "keys.csv"
    with server.client() as api:
        workspace, project = team(api, "Cloud", "CLD")
        done = server.run(
            "import", "jira-csv", str(export_file(tmp_path, "cloud.csv", "CLD")),
            "--workspace", workspace, "--project", project,
            "--create-missing", "--unknown-assignees", "skip", "--missing-links", "drop",
            "--key-map", str(key_map), "--keep-key", "jiraKey",
        )  # fmt: skip
        assert done.code == 0, done.stderr
        items = {item["key"]: api.task(item["$id"]) for item in api.tasks(workspace)}
        sprints = api.sprints(project_id=project)
        statuses = api.statuses(project)
        types = [t["name"] for t in api.work_item_types(workspace)]
        fields = [(f["key"], f["name"], f["type"]) for f in api.fields(workspace)]

    assert "1 rows without their unknown assignee" in done.stdout
    assert "2 links to issues outside the file left out" in done.stdout
    assert done.stdout.startswith("imported 1 statuses, 1 types, 1 fields, 3 sprints, 6 items")
    assert "items: 6/6" in done.stderr
    assert "'Ready for QA' → READY_FOR_QA (new, IN_PROGRESS) (1 rows)" in done.stderr
    # Created in the order Jira made them, though the file lists them newest first.
    assert [s["name"] for s in sprints] == ["CS Sprint 1", "CS Sprint 2", "CS Sprint 3"]
    sprint = {s["name"]: s["$id"] for s in sprints}
    new_status = statuses[-1]
    assert (new_status["name"], new_status["label"], new_status["category"]) == (
        "READY_FOR_QA", "Ready for QA", "IN_PROGRESS",
    )  # fmt: skip
    assert types == ["SPRINT_DEFECT"]
    assert fields == [("jiraKey", "Original key", "text")]
    assert all(item["fields"] == {"jiraKey": original} for original, item in (
        ("CS-8", items["CLD-1"]), ("CS-13", items["CLD-5"]), ("CS-14", items["CLD-6"]),
    ))  # fmt: skip

    with key_map.open(newline="") as opened:
        mapping = dict(csv.reader(opened))
    assert mapping == {
        "original": "new",
        "CS-8": "CLD-1", "CS-9": "CLD-2", "CS-10": "CLD-3",
        "CS-12": "CLD-4", "CS-13": "CLD-5", "CS-14": "CLD-6",
    }  # fmt: skip
    subtask, epic, task, bug, defect, story = (items[f"CLD-{n}"] for n in range(1, 7))
    assert (subtask["type"], subtask["status"], subtask["parentId"]) == (
        "TASK", "BACKLOG", epic["$id"],
    )  # fmt: skip
    assert subtask["sprintId"] == sprint["CS Sprint 1"]
    assert [a["email"] for a in subtask["assignees"]] == ["grace-cld@example.com"]
    assert (epic["type"], epic["status"], epic["sprintId"]) == ("EPIC", "TODO", None)
    assert [a["email"] for a in epic["assignees"]] == ["ada-cld@example.com"]  # (any case)
    assert (task["status"], task["dueDate"], task["assignees"]) == (
        "IN_PROGRESS", "2025-10-01", [],
    )  # fmt: skip
    assert (bug["status"], bug["priority"]) == ("DONE", "URGENT")
    assert [(r["type"], r["task"]["key"]) for r in bug["relations"]] == [("relates_to", "CLD-5")]
    assert (defect["type"], defect["status"], defect["assignees"]) == ("SPRINT_DEFECT", "TODO", [])
    assert defect["sprintId"] == sprint["CS Sprint 3"]  # (the newest of its two)
    assert defect["description"] == "Seen on the burndown:\nthe last day counts twice.\nSee CS-12."
    assert [(r["type"], r["task"]["key"]) for r in defect["relations"]] == [
        ("relates_to", "CLD-4")
    ]  # (Cloners)
    assert (story["status"], story["statusCategory"], story["parentId"]) == (
        "READY_FOR_QA", "IN_PROGRESS", None,
    )  # fmt: skip
    assert story["dueDate"] == "2025-09-22"
    assert [a["email"] for a in story["assignees"]] == ["ada-cld@example.com"]  # (by name)


def test_mappings_win_and_a_name_two_members_share_matches_neither(
    server: Served, tmp_path: Path
) -> None:
    with server.client() as api:
        workspace, project = team(api, "Mapped", "MAP")
        other = api.request(
            "POST", "/users", body={"name": "grace hopper", "email": "gh2-map@example.com"}
        )
        api.add_member(workspace, other["$id"], "MEMBER")
        path = str(export_file(tmp_path, "cloud.csv", "MAP"))
        args = ["--workspace", workspace, "--project", project, "--missing-links", "drop"]
        ambiguous = server.run("import", "jira-csv", path, *args, "--dry-run")
        mapped = server.run(
            "import", "jira-csv", path, *args, "--dry-run",
            "--map-status", "In Progress=in review", "--map-status", "Ready for QA=IN_REVIEW",
            "--map-type", "sprint defect=BUG",
            "--map-assignee", "Ada Lovelace=grace-map@example.com",
            "--map-assignee", "Grace Hopper=GH2-map@example.com",
            "--map-assignee", "Linus T.=ada-map@example.com",
        )  # fmt: skip
        wrong = server.run(
            "import", "jira-csv", path, *args, "--map-status", "Ready for QA=SHIPPED"
        )
        stranger = server.run(
            "import", "jira-csv", path, *args, "--map-assignee", "Linus T.=linus@example.com"
        )
        api.create_field(workspace, key="estimate", name="Estimate", type="number")
        not_text = server.run("import", "jira-csv", path, *args, "--keep-key", "estimate")
        bad_key = server.run("import", "jira-csv", path, *args, "--keep-key", "Jira-Key")
        assert list(api.tasks(workspace)) == []

    assert ambiguous.code == 1
    assert "'Grace Hopper' is not a member of the workspace (2 members are named" in (
        ambiguous.stderr
    )
    assert mapped.code == 0, mapped.stderr
    assert "would create 3 sprints, 6 items" in mapped.stdout
    for line in (
        "'In Progress' → IN_REVIEW (1 rows)",
        "'Ready for QA' → IN_REVIEW (1 rows)",
        "'Sprint Defect' → BUG (1 rows)",
        "'Ada Lovelace' → grace-map@example.com (1 rows)",
        "'Grace Hopper' → gh2-map@example.com (2 rows)",
        "'ADA-map@Example.com' → ada-map@example.com (1 rows)",
    ):
        assert line in mapped.stderr
    assert wrong.code == 2
    assert "--map-status 'Ready for QA=SHIPPED': SHIPPED is not a status of the project" in (
        wrong.stderr
    )
    assert stranger.code == 2
    assert "linus@example.com is not a member of the workspace" in stranger.stderr
    assert not_text.code == 2
    assert "the workspace's field estimate is a number field" in not_text.stderr
    assert bad_key.code == 2
    assert "--keep-key 'Jira-Key': a field key matches" in bad_key.stderr


def test_a_server_export_without_statuses_gets_the_default_ones(
    server: Served, tmp_path: Path
) -> None:
    with server.client() as api:
        workspace, project = team(api, "Server", "SRV")
        done = server.run(
            "import", "jira-csv", str(export_file(tmp_path, "server.csv", "SRV")),
            "--workspace", workspace, "--project", project,
        )  # fmt: skip
        assert done.code == 0, done.stderr
        items = {item["key"]: item for item in api.tasks(workspace)}
    assert "'' → the default (TODO in a sprint, else BACKLOG) (3 rows)" in done.stderr
    upgrade, rotate, move = items["SRV-1"], items["SRV-2"], items["SRV-3"]
    assert (upgrade["status"], upgrade["type"], upgrade["priority"]) == ("TODO", "STORY", "HIGH")
    assert (rotate["status"], rotate["sprintId"], rotate["dueDate"]) == (
        "BACKLOG", None, "2017-03-01",
    )  # fmt: skip
    assert (move["status"], move["dueDate"]) == ("TODO", "2017-02-16")
    assert [a["email"] for a in move["assignees"]] == ["grace-srv@example.com"]


def test_the_import_command_explains_its_options(server: Served) -> None:
    done = server.run("import", "--help")
    assert done.code == 0
    words = " ".join(done.stdout.split())
    for option in (
        "--map-assignee JIRA=EMAIL",
        "--unknown-assignees {refuse,skip}",
        "--missing-links {refuse,drop}",
        "--create-missing",
        "--key-map FILE",
        "--keep-key FIELD_KEY",
        "Reporter and Creator are not imported",
    ):
        assert option in words
