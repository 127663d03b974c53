from tests.factories import Api, make_project, make_workspace


def test_workspace_and_project_round_trip(admin: Api) -> None:
    workspace = make_workspace(admin, description="Team space")
    project = make_project(admin, workspace["$id"], name="Web Platform")
    assert project["key"] == "WP"
    assert admin.ok("GET", f"/projects/{project['$id']}") == project
    listed = admin.ok("GET", f"/workspaces/{workspace['$id']}/projects")
    assert listed == {"documents": [project], "total": 1, "nextCursor": None}
