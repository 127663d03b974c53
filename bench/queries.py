"""The query language at scale (issue 28, contract §18): the bench's query set over a
workspace of 100,000 items, each query's p95 through the running server, and the plan of the
statement it runs (printed; on PostgreSQL, read with sequential scans and sorts priced out, a
sequential scan or sort of `work_items` left fails the row: no index serves it).

The plans are read in the harness: the same code the server runs (`queries.service`,
`workitems.reads.list_items`) builds each statement on its own connection to the bench's
database, and `EXPLAIN` (SQLite: `EXPLAIN QUERY PLAN`) reads it with the parameters bound.
"""

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode

import psycopg
from sqlalchemy import text

from bench.api import Api
from bench.report import Row
from bench.seed import Seeded
from sprintboard import sql
from sprintboard.access import Caller
from sprintboard.db import Database, normalize_url
from sprintboard.queries import service
from sprintboard.workitems import reads

P95_TARGET_MS = 50.0
QUERIES: list[tuple[str, str]] = [
    ("key =", "key = BIG-77"),
    ("project =", "project = BIG"),
    ("title ~", 'title ~ "copy 9"'),
    ("description ~", 'description ~ "bench"'),
    ("text ~ (two words)", 'text ~ "copy seeded"'),
    ("text ~ prefix", 'text ~ "cop*"'),
    ("status IN", "status in (TODO, IN_PROGRESS)"),
    ("statusCategory !=", "statusCategory != DONE"),
    ("type =", "type = BUG"),
    ("priority >=", "priority >= HIGH"),
    ("assignee = currentUser()", "assignee = currentUser()"),
    ("assignee IS EMPTY", "assignee is empty"),
    ("label IN", "label in (backend, frontend)"),
    ("label NOT IN", "label not in (backend)"),
    ("sprint IN openSprints()", "sprint in openSprints()"),
    ("sprint IS EMPTY", "sprint is empty"),
    ("parent IS EMPTY", "parent is empty"),
    ("ancestor =", "ancestor = BIG-1"),
    ("storyPoints >", "storyPoints > 2"),
    ("estimatedHours IS EMPTY", "estimatedHours is empty"),
    ("dueDate <=", "dueDate <= +2w"),
    ("createdAt >=", "createdAt >= -7d"),
    ("updatedAt >= startOfDay()", "updatedAt >= startOfDay()"),
    ("flagged =", "flagged = true"),
    ("blocked =", "blocked = true"),
    ("NOT (… OR …) AND", "NOT (priority = LOW OR label = backend) AND status != DONE"),
    ("ORDER BY priority DESC", "ORDER BY priority DESC"),
    ("ORDER BY key", "ORDER BY key"),
    ("ORDER BY title", "ORDER BY title"),
    ("ORDER BY dueDate", "ORDER BY dueDate"),
    ("ORDER BY storyPoints DESC", "ORDER BY storyPoints DESC"),
    ("ORDER BY createdAt", "ORDER BY createdAt"),
    ("ORDER BY updatedAt DESC", "ORDER BY updatedAt DESC"),
    ("ORDER BY position", "ORDER BY position"),
]
CURSOR_QUERIES = ["priority >= MEDIUM ORDER BY priority DESC", "ORDER BY dueDate"]
"""Followed by cursor to page 20."""


def measure_queries(
    kind: str, api: Api, database_url: str, seeded: Seeded, *, quick: bool, log: Any
) -> list[Row]:
    rows: list[Row] = []
    _analyze(database_url)
    caller = _caller(api)
    plans = _plans(database_url, seeded.workspace_id, caller)
    repeats = 7 if quick else 40
    for name, q in QUERIES:
        path = "/tasks?" + urlencode({"workspaceId": seeded.workspace_id, "q": q, "limit": 50})
        api.timed("GET", path)  # (a first call warms the server's caches)
        times = sorted(api.timed("GET", path)[1] for _ in range(repeats))
        plan = plans[q]
        unserved = _unserved(plan) if kind == "postgresql" else ""
        rows.append(_row(kind, f"q: {name}", times, unserved))
        if unserved:
            rows[-1].verdict = "FAIL"
        log(f"q: {name}: p95 {_p95(times):.1f} ms\n    {q}\n" + _indent(plan))
    for q in CURSOR_QUERIES:
        params = {"workspaceId": seeded.workspace_id, "q": q, "limit": 50}
        times = []
        for _ in range(3 if quick else 10):
            cursor: str | None = None
            for _page in range(20):
                query = urlencode({**params, **({"cursor": cursor} if cursor else {})})
                data, elapsed = api.timed("GET", f"/tasks?{query}")
                cursor = data["nextCursor"]
            times.append(elapsed)  # (the 20th page)
        rows.append(_row(kind, f"q: page 20 of {q}", sorted(times), "by cursor"))
    return rows


def _row(kind: str, name: str, times: list[float], note: str) -> Row:
    p95 = _p95(times)
    return Row(
        database=kind,
        name=name,
        value=p95,
        unit="ms",
        p50_ms=times[len(times) // 2],
        p99_ms=times[-1],
        target=f"p95 <= {P95_TARGET_MS:g} ms" if kind == "postgresql" else "",
        verdict=("PASS" if p95 <= P95_TARGET_MS else "MISS") if kind == "postgresql" else "",
        note=note,
    )


def _p95(times: list[float]) -> float:
    return times[min(len(times) - 1, int(len(times) * 0.95))]


def _indent(plan: str) -> str:
    return "\n".join(f"      {line}" for line in plan.splitlines())


def _analyze(database_url: str) -> None:
    database = Database(database_url)
    try:
        if database.dialect == "postgresql":
            with database.transaction() as session:
                session.execute(text("ANALYZE work_item_search"))
                session.execute(text("ANALYZE work_items"))
    finally:
        database.dispose()


def _caller(api: Api) -> Caller:
    me = api.call("GET", "/me")
    return Caller(
        user_id=me["$id"],
        name=me["name"],
        email=me["email"],
        is_org_admin=True,
        key_id=None,
        key_permissions=None,
        key_workspace_id=None,
    )


@contextmanager
def _recorded() -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """The statements `sql.Raw` runs meanwhile that read work items."""
    seen: list[tuple[str, dict[str, Any]]] = []
    run = sql.Raw.run

    def recording(self: sql.Raw, statement: str, params: Any = None) -> Any:
        if "work_items" in statement and statement.lstrip()[:4].upper() in ("SELE", "WITH"):
            seen.append((statement, dict(params or {})))
        return run(self, statement, params)

    sql.Raw.run = recording  # type: ignore[method-assign,assignment]
    try:
        yield seen
    finally:
        sql.Raw.run = run  # type: ignore[method-assign]


def _unserved(plan: str) -> str:
    """What of `plan` no index serves: a sequential scan of `work_items`, or a sort of its
    rows (a sort of the page's own 51 rows, `page_`, is fine); "" when nothing."""
    if "Seq Scan on work_items" in plan:
        return "Seq Scan on work_items"
    keys = [line for line in plan.splitlines() if "Sort Key:" in line or "Presorted" in line]
    if any(re.search(r"\b(wi|wi_\d+|work_items)\.", key) for key in keys):
        return "Sort of work_items"
    return ""


def _plans(database_url: str, workspace_id: str, caller: Caller) -> dict[str, str]:
    """Each query's plan, as the list reads its first page."""
    database = Database(database_url)
    found: dict[str, str] = {}
    try:
        for _, q in QUERIES:
            with database.transaction() as session, _recorded() as seen:
                condition, order = service.list_order(
                    session, caller=caller, workspace_id=workspace_id, text=q, sort=None
                )
                reads.list_items(
                    session,
                    workspace_id=workspace_id,
                    filters=reads.TaskFilters(condition=condition),
                    limit=50,
                    offset=0,
                    order=order,
                )
                session.rollback()
            statement, params = seen[0]
            found[q] = _explain(database_url, statement, params)
    finally:
        database.dispose()
    return found


def _explain(database_url: str, statement: str, params: dict[str, Any]) -> str:
    url = normalize_url(database_url)
    if url.get_backend_name() == "sqlite":
        with sqlite3.connect(str(url.database)) as connection:
            connection.create_function("unicode_lower", 1, str.lower, deterministic=True)
            rows = connection.execute("EXPLAIN QUERY PLAN " + statement, params).fetchall()
        return "\n".join(str(row[-1]) for row in rows)
    plain = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(plain) as connection:
        # Sequential scans and sorts priced out: one left is one no index can replace (a
        # count that stops at the cap is cheaper by a sequential scan when most items match,
        # and chosen so with the default settings; that says nothing about the indexes).
        connection.execute("SET enable_seqscan = off")
        connection.execute("SET enable_sort = off")
        rows = connection.execute("EXPLAIN " + sql._for_postgres(statement), params).fetchall()
    return "\n".join(row[0] for row in rows)
