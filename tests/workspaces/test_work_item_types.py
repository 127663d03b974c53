"""Custom work item types are removable (contract §16): PROJECT_MANAGE, 409 `type_in_use`
while an item has the type, 404 for a type the workspace does not have."""

from tests.factories import Api, add_member, make_project, make_user, make_workspace
from tests.sprint_factories import error, make_task


def test_a_custom_type_is_removed_once_no_item_has_it(admin: Api) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    types = f"/workspaces/{workspace['$id']}/work-item-types"
    spike = admin.ok("POST", types, {"name": "SPIKE"})
    admin.ok("POST", types, {"name": "CHORE"})
    task = make_task(admin, project, type="SPIKE")

    member, as_member = make_user(admin)
    add_member(admin, workspace["$id"], member["$id"], "MEMBER")
    refused = error(as_member.delete(f"{types}/SPIKE"), 403)
    assert refused["details"] == {"permission": "PROJECT_MANAGE"}
    _, outsider = make_user(admin)
    assert error(outsider.delete(f"{types}/SPIKE"), 404)["code"] == "NOT_FOUND"

    in_use = error(admin.delete(f"{types}/SPIKE"), 409)
    assert in_use["details"]["reason"] == "type_in_use"
    assert error(admin.delete(f"{types}/TASK"), 409)["details"]["reason"] == "builtin_type"
    assert error(admin.delete(f"{types}/NOPE"), 404)["code"] == "NOT_FOUND"

    admin.ok("PATCH", f"/tasks/{task['$id']}", {"type": "STORY"})
    assert admin.ok("DELETE", f"{types}/SPIKE") == {"$id": spike["$id"], "deleted": True}
    assert [t["name"] for t in admin.ok("GET", types)["documents"]] == ["CHORE"]
    assert error(admin.delete(f"{types}/SPIKE"), 404)["code"] == "NOT_FOUND"
    # Gone: no item may take it now, and it may be registered again.
    refused = admin.patch(f"/tasks/{task['$id']}", json={"type": "SPIKE"})
    assert error(refused, 400)["details"]["reason"] == "invalid_value"
    admin.ok("POST", types, {"name": "SPIKE"})


def test_a_type_used_in_another_workspace_only_is_removed(admin: Api) -> None:
    first, second = make_workspace(admin), make_workspace(admin)
    for workspace in (first, second):
        admin.ok("POST", f"/workspaces/{workspace['$id']}/work-item-types", {"name": "SPIKE"})
    make_task(admin, make_project(admin, second["$id"]), type="SPIKE")
    admin.ok("DELETE", f"/workspaces/{first['$id']}/work-item-types/SPIKE")
    second_types = f"/workspaces/{second['$id']}/work-item-types/SPIKE"
    assert error(admin.delete(second_types), 409)["details"]["reason"] == "type_in_use"
