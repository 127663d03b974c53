"""Custom fields in export and import (§17), run as a user runs the commands: a JSON export
carries the fields and their values and an import makes the fields a workspace lacks; Jira's
`Custom field (<Name>)` columns fill the field of that name."""

import json
from pathlib import Path

from tests.agent_servers import Served, server
from tests.transfer.test_transfer import team

__all__ = ["server"]

JIRA = """Issue key,Issue id,Summary,Status,Issue Type,Custom field (severity),\
Custom field (Team size),Custom field (Areas),Custom field (Areas),Custom field (Sprint goal)
WEB-2,102,Second,To Do,Task,High,3,ui,api,x
WEB-1,101,First,Done,Bug,,,,,
"""


def test_an_export_carries_fields_and_an_import_makes_them(server: Served, tmp_path: Path) -> None:
    with server.client() as api:
        workspace, project = team(api, "Fielded", "FLD")
        api.create_field(workspace, key="severity", name="Severity", type="select",
                         options=["LOW", "HIGH"])  # fmt: skip
        api.create_field(workspace, key="size", name="Size", type="number", description="pts")
        w = {"workspaceId": workspace, "projectId": project}
        api.create_task(**w, title="Set", fields={"severity": "HIGH", "size": 2})
        api.create_task(**w, title="Unset")
        exported = server.run("export", "--workspace", workspace, "--project", project)
        assert exported.code == 0, exported.stderr
        document = json.loads(exported.stdout)
        assert [(f["key"], f["type"], f["options"]) for f in document["fields"]] == [
            ("severity", "select", ["LOW", "HIGH"]),
            ("size", "number", None),
        ]
        items = document["projects"][0]["items"]
        assert [i["fields"] for i in items] == [{"severity": "HIGH", "size": 2}, {}]
        path = tmp_path / "export.json"
        path.write_text(exported.stdout)
        target, target_project = team(api, "Fielded 2", "FLE")
        api.create_field(target, key="size", name="Size", type="number")
        imported = server.run(
            "import", "json", str(path), "--workspace", target, "--project", target_project
        )
        assert imported.code == 0, imported.stderr
        assert "custom fields: 1 created" in imported.stderr
        made = {f["key"]: f for f in api.fields(target)}
        assert made["severity"]["options"] == ["LOW", "HIGH"]
        titles = {i["title"]: i["fields"] for i in api.tasks(target)}
        assert titles == {"Set": {"severity": "HIGH", "size": 2}, "Unset": {}}


def test_jira_custom_field_columns_fill_fields_by_name(server: Served, tmp_path: Path) -> None:
    with server.client() as api:
        workspace, project = team(api, "Jira fields", "JFD")
        api.create_field(workspace, key="severity", name="Severity", type="select",
                         options=["Low", "High"])  # fmt: skip
        api.create_field(workspace, key="teamSize", name="team SIZE", type="number")
        api.create_field(workspace, key="areas", name="Areas", type="multiselect",
                         options=["ui", "api", "db"])  # fmt: skip
        path = tmp_path / "jira.csv"
        path.write_text(JIRA)
        where = ("--workspace", workspace, "--project", project)
        dry = server.run("import", "jira-csv", str(path), *where, "--dry-run")
        assert dry.code == 0, dry.stderr
        assert "'Custom field (Sprint goal)'" in dry.stderr
        assert "Custom field (Areas)'" not in dry.stderr
        assert list(api.tasks(workspace)) == []
        done = server.run("import", "jira-csv", str(path), *where)
        assert done.code == 0, done.stderr
        fields = {i["title"]: i["fields"] for i in api.tasks(workspace)}
    assert fields == {
        "First": {},
        "Second": {"severity": "High", "teamSize": 3, "areas": ["ui", "api"]},
    }
