"""A client generated from the served document (openapi-python-client) drives a scenario with
no hand-written request: the operationIds name its functions, its models parse every answer.
"""

import importlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.factories import Api

GENERATOR = Path(sys.executable).parent / "openapi-python-client"


def generate(api: Api, into: Path) -> Any:
    document = into / "openapi.json"
    document.write_text(json.dumps(api.get("/api/v1/openapi.json").json()))
    package = f"sprintboard_client_{uuid.uuid4().hex[:8]}"
    result = subprocess.run(
        [
            GENERATOR,
            "generate",
            "--path",
            document,
            "--output-path",
            into / package,
            "--meta",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        # (its formatter, ruff, is found beside it)
        env={**os.environ, "PATH": f"{GENERATOR.parent}{os.pathsep}{os.environ['PATH']}"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Warning" not in result.stdout, result.stdout
    # A nullable enum or map drawn inline gets a made-up `...Type0` class per place it is
    # used; each is a named component of the document instead.
    made_up = sorted(p.stem for p in (into / package / "models").glob("*_type_[0-9]*.py"))
    assert made_up == [], made_up
    sys.path.insert(0, str(into))  # (without `--meta`, the output folder is the package)
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(into))


@pytest.fixture(scope="module")
def generated() -> list[Any]:
    """The generated client package, made once by the first test that needs it: the document
    does not depend on the database, and generating takes seconds."""
    return []


def test_a_generated_client_runs_a_sprint(
    admin: Api, generated: list[Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    if not generated:
        generated.append(generate(admin, tmp_path_factory.mktemp("client")))
    client_package = generated[0]
    name = client_package.__name__

    def module(path: str) -> Any:
        return importlib.import_module(f"{name}.{path}")

    models = module("models")
    client = module("client").AuthenticatedClient(base_url="http://testserver", token="unused")
    admin.client.headers["Authorization"] = f"Bearer {admin.key}"
    client.set_httpx_client(admin.client)  # (the app in this process; the token goes unused)
    create_workspace = module("api.workspaces.create_workspace")
    create_project = module("api.projects.create_project")
    create_task = module("api.work_items.create_task")
    update_task = module("api.work_items.update_task")
    bulk_update_tasks = module("api.work_items.bulk_update_tasks")
    list_tasks = module("api.work_items.list_tasks")
    create_sprint = module("api.sprints.create_sprint")
    update_sprint = module("api.sprints.update_sprint")
    complete_sprint = module("api.sprints.complete_sprint")

    workspace = create_workspace.sync(
        client=client, body=models.WorkspaceCreate(name="Generated")
    ).data
    project = create_project.sync(
        workspace.id, client=client, body=models.ProjectCreate(name="Gen", key="GEN")
    ).data
    board = {"workspace_id": workspace.id, "project_id": project.id}
    sprint = create_sprint.sync(client=client, body=models.SprintCreate(name="S1", **board)).data
    started = update_sprint.sync(
        sprint.id, client=client, body=models.SprintUpdate(status=models.SprintUpdateStatus.ACTIVE)
    ).data
    assert started.status.value == "ACTIVE"
    for n, points in enumerate((5, 1, 3)):
        created = create_task.sync(
            client=client, body=models.TaskCreate(name=f"Task {n}", story_points=points, **board)
        ).data
        assert created.key == f"GEN-{n + 1}"
    update_task.sync("GEN-2", client=client, body=models.TaskUpdate(status="DONE"))
    # A bulk update's entries are typed (a `oneOf` once made them `Any`).
    entries = [models.BulkEntry(key="GEN-3", labels=["generated"])]
    changed = bulk_update_tasks.sync(client=client, body=models.BulkUpdate(tasks=entries)).data
    assert [(item.key, item.labels) for item in changed.documents] == [("GEN-3", ["generated"])]

    seen: list[str] = []
    cursor = None
    while True:
        page = list_tasks.sync(
            client=client, project_id=project.id, sort="-storyPoints", limit=2, cursor=cursor
        ).data
        seen += [item.key for item in page.documents]
        if not page.next_cursor:
            break
        cursor = page.next_cursor
    assert seen == ["GEN-1", "GEN-3", "GEN-2"]

    completed = complete_sprint.sync(sprint.id, client=client, body=models.SprintComplete()).data
    assert completed.status.value == "COMPLETED"
    assert completed.moved_item_count == 2
