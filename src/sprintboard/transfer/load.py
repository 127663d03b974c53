"""Writing a checked plan through the API, and reading a workspace back out as one document."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sprintboard.client import Client
from sprintboard.transfer.custom import ensure_fields
from sprintboard.transfer.formats import sprint_fields
from sprintboard.transfer.plan import ITEM_FIELDS, Json, Plan, check

BULK = 500
Progress = Callable[[str], None]


def member_emails(client: Client, workspace_id: str) -> dict[str, str]:
    return {m["email"].lower(): m["userId"] for m in client.members(workspace_id)}


def problems(client: Client, plan: Plan, workspace_id: str) -> list[str]:
    return check(plan, members=member_emails(client, workspace_id))


def write(
    client: Client,
    plan: Plan,
    *,
    workspace_id: str,
    project_id: str,
    progress: Progress,
    keys: dict[str, str] | None = None,
) -> dict[str, int]:
    """Create the plan's sprints, items, parents, relations, comments and time logs, in order.

    Items are created in the plan's order with bulk create, so their keys keep that order;
    parents are set afterwards (a child may come before its parent in a file), then sprints
    reach their status: completed ones first, one at a time, then the active one. `keys`
    gets each item's original key (its `ref` in the file) and its new one.
    """
    members = member_emails(client, workspace_id)
    made_fields = ensure_fields(client, workspace_id, plan.custom_fields)
    if made_fields:
        progress(f"custom fields: {made_fields} created")
    sprint_ids: dict[str, str] = {}
    for sprint in plan.sprints:
        body = {"workspaceId": workspace_id, "projectId": project_id, **sprint_fields(sprint)}
        sprint_ids[sprint.ref] = client.create_sprint(**body)["$id"]
    progress(f"sprints: {len(sprint_ids)} created")

    item_ids: dict[str, str] = {}
    for start in range(0, len(plan.rows), BULK):
        chunk = plan.rows[start : start + BULK]
        bodies = [
            {
                **row.fields,
                "workspaceId": workspace_id,
                "projectId": project_id,
                "sprintId": sprint_ids[row.sprint] if row.sprint else None,
                "assigneeIds": [members[email.lower()] for email in row.assignees],
            }
            for row in chunk
        ]
        for row, item in zip(chunk, client.bulk_create_tasks(bodies), strict=True):
            item_ids[row.ref] = item["$id"]
            if keys is not None:
                keys[row.original_key or row.ref] = item["key"]
        progress(f"items: {len(item_ids)}/{len(plan.rows)}")

    parents = [
        {"$id": item_ids[row.ref], "parentId": item_ids[row.parent]}
        for row in plan.rows
        if row.parent is not None
    ]
    for start in range(0, len(parents), BULK):
        client.bulk_update_tasks(parents[start : start + BULK])
    if parents:
        progress(f"parents: {len(parents)} set")

    relations = plan.relations()
    for done, (source, kind, target) in enumerate(relations, start=1):
        client.relate(item_ids[source], kind, item_ids[target])
        if done % BULK == 0 or done == len(relations):
            progress(f"relations: {done}/{len(relations)}")

    comments = logs = 0
    for row in plan.rows:
        for text in row.comments:
            client.add_comment(item_ids[row.ref], text)
            comments += 1
        for log in row.time_logs:
            client.log_time(item_ids[row.ref], **log)
            logs += 1
    if comments or logs:
        progress(f"comments: {comments}, time logs: {logs}")

    for status in ("COMPLETED", "ACTIVE"):
        for sprint in plan.sprints:
            if sprint.status == status:
                client.update_sprint(sprint_ids[sprint.ref], status="ACTIVE")
                if status == "COMPLETED":
                    client.complete_sprint(sprint_ids[sprint.ref])
    return {
        "fields": made_fields,
        "sprints": len(plan.sprints),
        "items": len(plan.rows),
        "parents": len(parents),
        "relations": len(relations),
        "comments": comments,
        "timeLogs": logs,
    }


def summary(plan: Plan) -> dict[str, int]:
    return {
        "sprints": len(plan.sprints),
        "items": len(plan.rows),
        "parents": sum(row.parent is not None for row in plan.rows),
        "relations": len(plan.relations()),
        "comments": sum(len(row.comments) for row in plan.rows),
        "timeLogs": sum(len(row.time_logs) for row in plan.rows),
    }


def export(client: Client, workspace_id: str, project_id: str | None = None) -> Json:
    """The workspace (or one project of it) as one JSON document that `import json` reads.

    Records refer to each other by `$id`; assignees are emails, so a document imported into
    another workspace finds its people there. Items are in key order.
    """
    workspace = client.workspace(workspace_id)
    projects = [client.project(project_id)] if project_id else client.projects(workspace_id)
    users = {m["userId"]: m["email"] for m in client.members(workspace_id)}
    return {
        "format": "sprintboard-export",
        "version": 1,
        "exportedAt": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "workspace": {k: workspace.get(k) for k in ("$id", "name", "description")},
        "fields": [
            {k: f.get(k) for k in ("key", "name", "type", "options", "description")}
            for f in client.fields(workspace_id)
        ],
        "projects": [_project(client, workspace_id, project, users) for project in projects],
    }


def _project(client: Client, workspace_id: str, project: Json, users: dict[str, str]) -> Json:
    items = sorted(
        client.tasks(workspace_id, projectId=project["$id"]),
        key=lambda item: int(item["key"].rsplit("-", 1)[1]),
    )
    relations: dict[str, Json] = {}
    exported: list[Json] = []
    for item in items:
        detail = client.task(item["$id"])
        for relation in detail.get("relations", []):
            if relation["type"] in ("blocked_by", "duplicated_by"):
                continue  # the other side lists it in its stored direction
            other = relation["task"]["$id"]
            pair = sorted((item["$id"], other)) if relation["type"] == "relates_to" else None
            if pair is not None and pair[0] != item["$id"]:
                continue
            relations[relation["$id"]] = {
                "type": relation["type"],
                "from": item["$id"],
                "to": other,
            }
        exported.append(_item(detail, users))
    return {
        "$id": project["$id"],
        "key": project["key"],
        "name": project["name"],
        "description": project.get("description"),
        "sprints": [_sprint(s) for s in client.sprints(project_id=project["$id"])],
        "items": exported,
        "relations": list(relations.values()),
    }


def _sprint(sprint: Json) -> Json:
    fields = ("$id", "name", "goal", "status", "startDate", "endDate")
    return {k: sprint.get(k) for k in fields}


def _item(item: Json, users: dict[str, str]) -> Json:
    fields = ("$id", "key", *ITEM_FIELDS, "sprintId", "parentId")
    exported: dict[str, Any] = {k: item.get(k) for k in fields}
    exported["assignees"] = sorted(a["email"] for a in item.get("assignees", []))
    exported["comments"] = [
        {"body": c["body"], "author": users.get(c.get("authorId") or "")}
        for c in item.get("comments", [])
    ]
    exported["timeLogs"] = [
        {"hours": t["hours"], "date": t["date"], "note": t.get("note")}
        for t in item.get("timeLogs", [])
    ]
    return exported
