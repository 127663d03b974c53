"""Seeding: through the public API where that is quick enough, and a bulk insert for the big
projects that copies rows the API itself wrote (so every column holds what the API would
write) and keeps the per-project key counter consistent.
"""

import os
import random
import secrets
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select, text, update
from sqlalchemy.orm import Session

from bench.api import Api
from bench.server import ROOT, VENV_BIN
from sprintboard.db import Database
from sprintboard.models import Project, WorkItem

STATUSES = ["BACKLOG", "TODO", "IN_PROGRESS", "IN_REVIEW", "DONE"]
PRIORITIES = ["LOW", "MEDIUM", "HIGH", "URGENT"]
LABELS = ["backend", "frontend", "bug", "ux", "infra", "docs"]


def create_admin(env: dict[str, str]) -> str:
    """A new organization admin's API key: the last line `sprintboard create-admin` prints."""
    result = subprocess.run(
        [str(VENV_BIN / "sprintboard"), "create-admin", "--name", "Bench Admin"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


@dataclass
class Seeded:
    workspace_id: str
    admin_id: str
    member_id: str
    projects: dict[str, dict[str, Any]]
    """board (N items, sprints), big (100k items), flow (sprint completion, creates)."""
    items: dict[str, list[str]] = field(default_factory=dict)
    """The ids of the items created through the API, by project."""
    board_sprints: list[str] = field(default_factory=list)

    def items_in(self, project: str) -> list[str]:
        return self.items.get(project, [])


def seed_base(api: Api) -> Seeded:
    """1 workspace, 3 projects, a second member: all through the public API."""
    admin = api.call("GET", "/me")
    suffix = secrets.token_hex(4)
    member = api.call(
        "POST",
        "/users",
        {"name": "Bench Member", "email": f"member-{suffix}@example.com"},
        expect=201,
    )
    workspace = api.call("POST", "/workspaces", {"name": "Bench"}, expect=201)
    api.call(
        "POST",
        f"/workspaces/{workspace['$id']}/members",
        {"userId": member["$id"]},
        expect=201,
    )
    projects = {
        role: api.call(
            "POST",
            f"/workspaces/{workspace['$id']}/projects",
            {"name": f"Bench {role}", "key": role.upper()},
            expect=201,
        )
        for role in ("board", "big", "flow")
    }
    return Seeded(
        workspace_id=workspace["$id"],
        admin_id=admin["$id"],
        member_id=member["$id"],
        projects=projects,
    )


def item_body(seeded: Seeded, project: str, index: int, rng: random.Random) -> dict[str, Any]:
    """A realistic work item: some labels, an assignee, points, for the filters to select on."""
    body: dict[str, Any] = {
        "name": f"Bench item {index}: make the board faster",
        "workspaceId": seeded.workspace_id,
        "projectId": seeded.projects[project]["$id"],
        "status": STATUSES[index % len(STATUSES)],
        "priority": rng.choice(PRIORITIES),
        "labels": rng.sample(LABELS, k=1 + index % 3),
        "assigneeIds": [seeded.admin_id if index % 2 else seeded.member_id],
        "storyPoints": rng.choice([1, 2, 3, 5, 8]),
        "description": "Seeded by bench: " + "lorem ipsum " * 8,
    }
    if seeded.board_sprints and project == "board" and index % 5 < 3:
        body["sprintId"] = seeded.board_sprints[index % len(seeded.board_sprints)]
    return body


def seed_board(api: Api, database_url: str, seeded: Seeded, *, items: int, sprints: int) -> None:
    """The board project: `sprints` planned sprints, 200 varied items through the API and
    copies of them up to `items`."""
    rng = random.Random(7)
    board = seeded.projects["board"]["$id"]
    if api.has("POST", "/sprints"):
        for n in range(sprints):
            sprint = api.call(
                "POST",
                "/sprints",
                {"name": f"Sprint {n + 1}", "workspaceId": seeded.workspace_id, "projectId": board},
                expect=201,
            )
            seeded.board_sprints.append(sprint["$id"])
    if api.has("POST", "/tasks"):
        bodies = [item_body(seeded, "board", i, rng) for i in range(min(items, 100))]
        seeded.items["board"] = [item["$id"] for item in api.create_many("/tasks", bodies)]
        seed_by_copy(api, database_url, seeded, project="board", total=items)


def seed_by_copy(
    api: Api,
    database_url: str,
    seeded: Seeded,
    *,
    project: str,
    total: int,
    templates: int = 2,
    sprint_id: str | None = None,
    status: str | None = None,
) -> None:
    """Bring `project` to `total` items: `templates` created through the API (unless it has
    some already), the rest bulk-inserted as copies of them (new id, number, key, position,
    title, timestamps), then the project's key counter moved on.
    """
    rng = random.Random(11)
    if not seeded.items_in(project):
        bodies = []
        for index in range(templates):
            body = item_body(seeded, project, index, rng)
            if sprint_id is not None:
                body["sprintId"] = sprint_id
            if status is not None:
                body["status"] = status
            bodies.append(body)
        seeded.items[project] = [item["$id"] for item in api.create_many("/tasks", bodies)]
    project_id = seeded.projects[project]["$id"]
    database = Database(database_url)
    try:
        with database.transaction() as session:
            _copy_items(session, project_id, total)
            session.execute(
                update(Project)
                .where(Project.id == project_id)
                .values(
                    last_item_number=select(func.max(WorkItem.number))
                    .where(WorkItem.project_id == project_id)
                    .scalar_subquery(),
                    item_count=select(func.count(WorkItem.id))
                    .where(WorkItem.project_id == project_id)
                    .scalar_subquery(),
                )
            )
            if session.get_bind().dialect.name == "postgresql":
                # What autovacuum would do soon after such growth: without it the planner
                # guesses from an empty table's statistics and the figures are an artefact.
                session.execute(text("ANALYZE work_items"))
            numbers = session.scalars(
                select(WorkItem.id)
                .where(WorkItem.project_id == project_id)
                .order_by(WorkItem.number)
            ).all()
            seeded.items[project] = list(numbers)
    finally:
        database.dispose()


def move_backlog_into(database_url: str, *, project_id: str, sprint_id: str) -> None:
    """Put the project's backlog items (TODO) in `sprint_id`, by one `UPDATE`: a sprint to
    complete again, without copying."""
    database = Database(database_url)
    try:
        with database.transaction() as session:
            session.execute(
                update(WorkItem)
                .where(WorkItem.project_id == project_id, WorkItem.sprint_id.is_(None))
                .values(sprint_id=sprint_id, status="TODO")
            )
    finally:
        database.dispose()


def sprint_to_complete(api: Api, database_url: str, seeded: Seeded, *, n: int, items: int) -> str:
    """The `n`th (from 0) ACTIVE sprint of FLOW to complete, holding `items` TODO items:
    copied in the first time, then the backlog the completions before it left (one
    `UPDATE`); its `$id`."""
    flow = seeded.projects["flow"]["$id"]
    body = {"name": f"Big sprint {n + 1}", "workspaceId": seeded.workspace_id, "projectId": flow}
    sprint: str = api.call("POST", "/sprints", body, expect=201)["$id"]
    api.call("PATCH", f"/sprints/{sprint}", {"status": "ACTIVE"})
    if n == 0:
        seed_by_copy(
            api, database_url, seeded, project="flow", total=items, sprint_id=sprint, status="TODO"
        )
    else:
        move_backlog_into(database_url, project_id=flow, sprint_id=sprint)
    return sprint


def _copy_items(session: Session, project_id: str, total: int) -> None:
    """One INSERT ... SELECT: the project's items so far are the templates, copy n takes
    template n mod count, and gets its own id, number, key, title and position.
    """
    dialect = session.get_bind().dialect.name
    stats = session.execute(
        select(
            func.count(),
            func.max(WorkItem.number),
            func.min(WorkItem.position),
            func.max(WorkItem.position),
        ).where(WorkItem.project_id == project_id)
    ).one()
    count, last_number, first_position, last_position = stats
    copies = total - count
    if copies <= 0:
        return
    step = (last_position - first_position) / (count - 1) if count > 1 else 1.0
    key = session.scalar(select(Project.key).where(Project.id == project_id))
    if dialect == "postgresql":
        # The copies reference rows that exist (they are copies of valid rows): skipping the
        # per-row foreign key triggers makes the insert several times faster.
        session.execute(text("SET LOCAL session_replication_role = replica"))
        session.execute(text("SET LOCAL synchronous_commit = off"))
        numbers = "SELECT n FROM generate_series(1, :copies) AS n"
        new_id = (
            "lpad(to_hex(:millis + seq.n), 12, '0') || substr(md5(random()::text || seq.n), 1, 20)"
        )
        text_of = "CAST({} AS TEXT)"
    else:
        numbers = (
            "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < :copies) "
            "SELECT n FROM s"
        )
        new_id = "printf('%012x', :millis + seq.n) || lower(hex(randomblob(10)))"
        text_of = "{}"
    number = "(:last_number + seq.n)"
    overrides = {
        "id": new_id,
        "number": number,
        "key": f"(CAST(:key AS TEXT) || '-' || {text_of.format(number)})",
        "title": f"('Imported item ' || {text_of.format(number)})",
        "position": "(:last_position + seq.n * :step)",
    }
    columns = [column.name for column in WorkItem.__table__.columns]
    values = ", ".join(overrides.get(c, f't."{c}"') for c in columns)
    statement = text(
        f"""INSERT INTO work_items ({", ".join(f'"{c}"' for c in columns)})
        SELECT {values}
        FROM ({numbers}) AS seq
        JOIN (SELECT w.*, row_number() OVER (ORDER BY w.number) - 1 AS k
              FROM work_items w WHERE w.project_id = :project_id) AS t
          ON t.k = seq.n % :count"""
    )
    session.execute(
        statement,
        {
            "copies": copies,
            "millis": time.time_ns() // 1_000_000,
            "last_number": last_number,
            "key": key,
            "last_position": last_position,
            "step": step,
            "project_id": project_id,
            "count": count,
        },
    )


def seed_env(database_url: str) -> dict[str, str]:
    """The environment of every sprintboard process in a run."""
    return {
        **os.environ,
        "SPRINTBOARD_DATABASE_URL": database_url,
        "SPRINTBOARD_LOG_LEVEL": "WARNING",
        # The benchmark is one client sending as fast as it can: the per-key limit would only
        # measure 429s.
        "SPRINTBOARD_RATE_LIMIT": "1000000000/minute",
        # (PostgreSQL needs one; every process of a run shares it.)
        "SPRINTBOARD_SECRET_KEY": os.environ.get(
            "SPRINTBOARD_SECRET_KEY", "bench-server-key-not-a-secret-0123456789"
        ),
        "PYTHONUNBUFFERED": "1",
    }


SEVERITIES = ["LOW", "MID", "HIGH", "CRITICAL"]


def seed_custom_fields(api: Api, database_url: str, seeded: Seeded, *, project: str) -> None:
    """Two custom fields of the workspace (`severity`, a select of four options, and
    `estimate`, a number) made through the API, and values for every item of `project`
    written by SQL as the API writes them (the item's `custom_fields` and its typed rows):
    each item a severity (by its number), nine in ten an estimate."""
    workspace = seeded.workspace_id
    made = {
        key: api.call("POST", f"/workspaces/{workspace}/fields", body, expect=201)
        for key, body in (
            (
                "severity",
                {"key": "severity", "name": "Severity", "type": "select", "options": SEVERITIES},
            ),
            ("estimate", {"key": "estimate", "name": "Estimate", "type": "number"}),
        )
    }
    project_id = seeded.projects[project]["$id"]
    params = {
        "p": project_id,
        "severity": made["severity"]["$id"],
        "estimate": made["estimate"]["$id"],
        **{f"s{n}": name for n, name in enumerate(SEVERITIES)},
    }
    severity = "CASE number % 4 WHEN 0 THEN :s0 WHEN 1 THEN :s1 WHEN 2 THEN :s2 ELSE :s3 END"
    estimate = "((number * 7919) % 1000)"
    database = Database(database_url)
    try:
        with database.transaction() as session:
            postgresql = session.get_bind().dialect.name == "postgresql"
            # (Options' ranks, what sorts a select, are `number % 4` too: LOW, MID, HIGH...)
            build = "jsonb_build_object" if postgresql else "json_object"
            with_estimate = f"{build}('severity', {severity}, 'estimate', {estimate})"
            without = f"{build}('severity', {severity})"
            session.execute(
                text(
                    f"UPDATE work_items SET custom_fields = CASE WHEN number % 10 = 0"
                    f" THEN {without} ELSE {with_estimate} END WHERE project_id = :p"
                ),
                params,
            )
            insert = (
                "INSERT INTO work_item_field_values"
                " (item_id, field_id, ordinal, text_value, number_value)"
            )
            session.execute(
                text(
                    f"{insert} SELECT id, :severity, 0, {severity}, number % 4 FROM work_items"
                    " WHERE project_id = :p"
                ),
                params,
            )
            session.execute(
                text(
                    f"{insert} SELECT id, :estimate, 0, NULL, {estimate} FROM work_items"
                    " WHERE project_id = :p AND number % 10 <> 0"
                ),
                params,
            )
        if database.engine.dialect.name == "postgresql":
            # What autovacuum does soon after this many inserts: statistics for the planner,
            # and the visibility map that lets a count read the value index alone.
            with database.engine.connect() as connection:
                autocommit = connection.execution_options(isolation_level="AUTOCOMMIT")
                autocommit.execute(text("VACUUM ANALYZE work_items"))
                autocommit.execute(text("VACUUM ANALYZE work_item_field_values"))
    finally:
        database.dispose()
