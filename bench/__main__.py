"""`python -m bench [--quick] [--only api|board|changes|lists]`: measure sprintboard on SQLite and
PostgreSQL against the ceiling of this machine, and its board in Chromium (`bench/board.py`),
print one table and write `bench/results.json`.
"""

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import httpx
import orjson

from bench.api import API, Api
from bench.board import measure_board
from bench.databases import WORK, fresh_database
from bench.load import Load, LoadGenerator, LoadResult, Request, creates_from_two_servers
from bench.queries import measure_queries
from bench.report import Row, judge, table, write_json
from bench.seed import (
    Seeded,
    create_admin,
    seed_base,
    seed_board,
    seed_by_copy,
    seed_custom_fields,
    seed_env,
    sprint_to_complete,
)
from bench.server import LOAD_CPU, VENV_BIN, Server, pinning_note


@dataclass(frozen=True)
class Config:
    quick: bool
    duration: float
    connections: int
    board_items: int
    big_items: int
    sprint_items: int
    bulk_entries: int
    bulk_repeats: int
    only: str
    """all, api (the loads and one-off calls), board (the board in a browser) or changes
    (only the bulk update and sprint completion, issue 15, and the server's peak RSS) or lists
    (issue 26: every sort and filter of `GET /tasks` on the big project, and the board's first
    read)."""
    completions: int
    """Sprints of `sprint_items` completed (`changes` completes several; p50)."""


def config(args: argparse.Namespace) -> Config:
    return Config(
        quick=args.quick,
        duration=args.duration or (2.0 if args.quick else 10.0),
        connections=args.connections,
        board_items=1_000,
        big_items=args.big_items,
        sprint_items=5_000,
        bulk_entries=500,
        bulk_repeats=3 if args.quick else 15,
        only=args.only,
        completions=3 if args.only == "changes" else 1,
    )


class Run:
    """One database's half of the benchmark: its ceiling, its server, its rows."""

    def __init__(self, kind: str, url: str, cfg: Config, loadgen: LoadGenerator) -> None:
        self.kind = kind
        self.url = url
        self.cfg = cfg
        self.loadgen = loadgen
        self.env = seed_env(url)
        self.rows: list[Row] = []
        self.ceiling_rps: float | None = None
        self.ceiling_rss: float | None = None

    def log(self, message: str) -> None:
        print(f"[{self.kind}] {message}", file=sys.stderr, flush=True)

    def load(self, base_url: str, load: Load, headers: dict[str, str]) -> LoadResult:
        """Check the first request answers 2xx and warm up, then run the load."""
        with httpx.Client(base_url=base_url, headers=headers, timeout=30) as client:
            for n in range(3):
                spec = load.requests[n % len(load.requests)]
                response = client.request(spec.method, spec.path, content=spec.body)
                if not 200 <= response.status_code < 300:
                    raise RuntimeError(
                        f"{spec.method} {spec.path}: {response.status_code} {response.text[:300]}"
                    )
        return self.loadgen.run(base_url, load)

    def add_load_row(self, name: str, result: LoadResult, note: str = "") -> Row:
        row = Row(
            database=self.kind,
            name=name,
            rps=result.rps,
            p50_ms=result.p50_ms,
            p99_ms=result.p99_ms,
            errors=result.errors,
            note=note,
        )
        self.rows.append(row)
        self.log(f"{name}: {result.rps:,.0f} rps, p50 {result.p50_ms:.2f} ms")
        return row

    def measure_ceiling(self) -> None:
        log = WORK / f"ceiling-{self.kind}.log"
        with Server("ceiling", [sys.executable, "-m", "bench.ceiling"], env=self.env, log=log) as s:
            load = Load([Request("GET", "/ceiling")], {}, self.cfg.connections, self.cfg.duration)
            result = self.load(s.base_url, load, {})
            self.ceiling_rps = result.rps
            self.ceiling_rss = s.peak_rss_mb()
        self.add_load_row("ceiling (raw ASGI, same uvicorn)", result)

    def measure_service(self) -> None:
        started = time.perf_counter()
        key = create_admin(self.env)
        log = WORK / f"server-{self.kind}.log"
        command = [str(VENV_BIN / "sprintboard"), "serve"]
        with Server("sprintboard", command, env=self.env, log=log) as server:
            api = Api(server.base_url, key)
            try:
                seeded = seed_base(api)
                if self.cfg.only != "board":
                    seed_board(api, self.url, seeded, items=self.cfg.board_items, sprints=5)
                    self.log(f"seeded through the API in {time.perf_counter() - started:.1f} s")
                if self.cfg.only == "changes":
                    self.bulk_update(api, seeded)
                    self.complete_sprint(api, seeded)
                elif self.cfg.only == "fields":
                    seed_by_copy(api, self.url, seeded, project="big", total=self.cfg.big_items)
                    self.custom_fields(api, seeded)
                elif self.cfg.only == "lists":
                    self.scale_lists(api, seeded)
                elif self.cfg.only == "queries":
                    seed_by_copy(api, self.url, seeded, project="big", total=self.cfg.big_items)
                    self.queries(api, seeded)
                elif self.cfg.only != "board":
                    self.scenarios(api, seeded)
                if self.cfg.only in ("all", "board"):
                    self.rows += measure_board(
                        self.kind, api, key, self.url, seeded, quick=self.cfg.quick
                    )
            finally:
                api.close()
            rss = server.peak_rss_mb()
        self.rows.append(
            Row(
                database=self.kind,
                name="server peak RSS",
                value=rss,
                unit="MiB",
                ratio=f"{rss / self.ceiling_rss:.1f}x ceiling's"
                if rss and self.ceiling_rss
                else "",
            )
        )

    def run_load(self, api: Api, name: str, requests: list[Request], note: str = "") -> Row:
        load = Load(requests, api.headers, self.cfg.connections, self.cfg.duration)
        return self.add_load_row(name, self.load(api.base_url, load, api.headers), note)

    def skipped(self, name: str, why: str) -> None:
        self.rows.append(Row(database=self.kind, name=name, verdict="N/A", note=why))
        self.log(f"{name}: skipped ({why})")

    def scenarios(self, api: Api, seeded: Seeded) -> None:
        ws = seeded.workspace_id
        board = seeded.projects["board"]["$id"]
        big = seeded.projects["big"]["$id"]
        flow = seeded.projects["flow"]["$id"]

        if not self.cfg.quick:
            self.run_load(api, "GET /me (auth + caller)", [Request("GET", f"{API}/me")])
        if not api.has("GET", "/tasks/{taskId}") and not api.has("GET", "/tasks/{id}"):
            self.run_load(api, "GET /projects/{id}", [Request("GET", f"{API}/projects/{board}")])

        def step(name: str, available: bool, why: str, action: Callable[[], object]) -> None:
            if available and seeded.items_in("board"):
                action()
            else:
                self.skipped(name, why if available else "route not in the service yet")

        created = {
            "name": "Created by the benchmark",
            "workspaceId": ws,
            "projectId": flow,
            "priority": "HIGH",
            "labels": ["backend"],
            "assigneeIds": [seeded.member_id],
            "storyPoints": 3,
        }
        has_get = api.has("GET", "/tasks/{taskId}") or api.has("GET", "/tasks/{id}")
        step(
            "GET /tasks/{id}",
            has_get,
            "no items",
            lambda: self.run_load(
                api,
                "GET /tasks/{id}",
                [Request("GET", f"{API}/tasks/{i}") for i in seeded.items_in("board")[:100]],
            ),
        )
        has_list = api.has("GET", "/tasks")
        step("GET /tasks (list 50, embeds)", has_list, "no items", lambda: self.lists(api, seeded))
        step(
            "GET /tasks (status+labels+assignee)",
            has_list,
            "no items",
            lambda: self.run_load(
                api,
                "GET /tasks (status+labels+assignee)",
                [
                    Request(
                        "GET",
                        f"{API}/tasks?"
                        + urlencode(
                            {
                                "workspaceId": ws,
                                "projectId": board,
                                "status": "TODO,IN_PROGRESS",
                                "labels": "backend",
                                "assigneeId": seeded.member_id,
                            }
                        ),
                    )
                ],
            ),
        )
        if api.has("GET", "/sprints") and seeded.board_sprints:
            self.run_load(
                api,
                "GET /sprints?projectId (with figures)",
                [Request("GET", f"{API}/sprints?projectId={board}")],
            )
        else:
            self.skipped("GET /sprints?projectId (with figures)", "route not in the service yet")
        has_patch = api.has("PATCH", "/tasks/{taskId}") or api.has("PATCH", "/tasks/{id}")
        step("PATCH /tasks/{id}", has_patch, "no items", lambda: self.patch(api, seeded))
        step(
            "bulk-update 500 (p50)",
            api.has("POST", "/tasks/bulk-update"),
            "no items",
            lambda: self.bulk_update(api, seeded),
        )
        sprint_routes = api.has("POST", "/sprints/{sprintId}/complete") or api.has(
            "POST", "/sprints/{id}/complete"
        )
        step(
            "complete sprint of 5,000",
            sprint_routes and api.has("POST", "/tasks"),
            "no items",
            lambda: self.complete_sprint(api, seeded),
        )
        step(
            "sprint report, 5,000 items (p50)",
            api.has("GET", "/sprints/{sprintId}/report"),
            "no items",
            lambda: self.sprint_report(api, seeded),
        )
        step(
            "velocity of 50 sprints (p50)",
            api.has("GET", "/projects/{projectId}/velocity"),
            "no items",
            lambda: self.velocity(api, seeded),
        )
        step(
            "POST /tasks",
            api.has("POST", "/tasks"),
            "no items",
            lambda: self.run_load(
                api, "POST /tasks", [Request("POST", f"{API}/tasks", orjson.dumps(created))]
            ),
        )
        if self.kind == "sqlite":
            self.skipped("POST /tasks, 2 servers, 1 project", "SQLite has one writer at a time")
        else:
            step(
                "POST /tasks, 2 servers, 1 project",
                api.has("POST", "/tasks"),
                "no items",
                lambda: self.creates_from_two_servers(api, seeded),
            )
        step(
            "bulk-create 500 (p50)",
            api.has("POST", "/tasks/bulk-create"),
            "no items",
            lambda: self.bulk_create(api, seeded),
        )
        step(
            "deep tree: GET epic of 1,000",
            api.has("POST", "/tasks/bulk-create"),
            "no items",
            lambda: self.deep_tree(api, seeded),
        )
        step(
            "POST /tasks, 10 custom fields",
            api.has("POST", "/tasks") and api.has("GET", "/workspaces/{id}/fields"),
            "no custom fields",
            lambda: self.creates_with_fields(api, created),
        )
        del big

    def creates_with_fields(self, api: Api, created: dict[str, Any]) -> None:
        """Issue 27: `POST /tasks` with ten custom fields of every type set, against the
        plain `POST /tasks` load's rate (target: at least 85% of it). Last of the loads: the
        workspace's fields would otherwise be in every later create's way."""
        ws = created["workspaceId"]
        values: dict[str, Any] = {}
        for n, (kind, value) in enumerate(TEN_FIELDS):
            made: dict[str, Any] = {"key": f"bench{n}", "name": f"Bench {n}", "type": kind}
            if kind in ("select", "multiselect"):
                made["options"] = ["One", "Two", "Three"]
            api.call("POST", f"/workspaces/{ws}/fields", made, expect=201)
            values[f"bench{n}"] = value
        body = orjson.dumps({**created, "fields": values})
        single = next((r.rps for r in self.rows if r.name == "POST /tasks" and r.rps), None)
        row = self.run_load(
            api, "POST /tasks, 10 custom fields", [Request("POST", f"{API}/tasks", body)]
        )
        if single and row.rps:
            row.note = f"{row.rps / single:.0%} of POST /tasks' rate; target >= 85%"

    def creates_from_two_servers(self, api: Api, seeded: Seeded) -> None:
        log = WORK / f"server-second-{self.kind}.log"
        load = Load([], api.headers, self.cfg.connections, self.cfg.duration)
        one, two = creates_from_two_servers(
            self.loadgen, api, seeded.workspace_id, load, env=self.env, log=log
        )
        share = f"{one.rps / two.rps:.0%} of the rate into 2 projects" if two.rps else ""
        self.add_load_row("POST /tasks, 2 servers, 1 project", one, share)
        self.add_load_row("POST /tasks, 2 servers, 2 projects", two)

    def bulk_create(self, api: Api, seeded: Seeded) -> None:
        """500 items a call into a project of their own, p50; and per item against the
        `POST /tasks` load's throughput (one item a request), if it ran."""
        ws = seeded.workspace_id
        project = api.call(
            "POST", f"/workspaces/{ws}/projects", {"name": "Bulk", "key": "BULK"}, expect=201
        )
        body = {
            "tasks": [
                {
                    "name": f"Imported {n}",
                    "workspaceId": ws,
                    "projectId": project["$id"],
                    "labels": ["backend"],
                    "assigneeIds": [seeded.member_id],
                    "storyPoints": 3,
                }
                for n in range(self.cfg.bulk_entries)
            ]
        }
        times = []
        for n in range(self.cfg.bulk_repeats + 1):
            _, elapsed = api.timed("POST", "/tasks/bulk-create", body, expect=201)
            if n:
                times.append(elapsed)
        times.sort()
        p50 = times[len(times) // 2]
        per_item = p50 / self.cfg.bulk_entries
        single = next((r.rps for r in self.rows if r.name == "POST /tasks" and r.rps), None)
        versus = f"; {1000 / single / per_item:.0f}x POST /tasks per item" if single else ""
        self.rows.append(
            Row(
                database=self.kind,
                name="bulk-create 500 (p50)",
                value=p50,
                unit="ms",
                p50_ms=p50,
                p99_ms=times[-1],
                note=f"{per_item:.3f} ms an item{versus}; p99 column = max",
            )
        )
        self.log(f"bulk-create: p50 {p50:.0f} ms ({per_item:.3f} ms an item{versus})")

    def deep_tree(self, api: Api, seeded: Seeded) -> None:
        """10,000 items under 100 epics, one epic with 1,000 descendants (100 stories of 9
        subtasks each), made with bulk creates; then loads on that epic's read (progress
        over all 1,000) and its `ancestorId` list page."""
        ws = seeded.workspace_id
        project = api.call(
            "POST", f"/workspaces/{ws}/projects", {"name": "Tree", "key": "TREE"}, expect=201
        )

        def create(bodies: list[dict[str, object]]) -> list[str]:
            made: list[str] = []
            for start in range(0, len(bodies), self.cfg.bulk_entries):
                chunk = bodies[start : start + self.cfg.bulk_entries]
                data = api.call("POST", "/tasks/bulk-create", {"tasks": chunk}, expect=201)
                made += [item["$id"] for item in data["documents"]]
            return made

        def item(name: str, parent: str | None, **fields: object) -> dict[str, object]:
            body = {"name": name, "workspaceId": ws, "projectId": project["$id"], **fields}
            return {**body, "parentId": parent} if parent else body

        statuses = ("DONE", "IN_PROGRESS", "TODO")
        epics = create([item(f"Epic {n}", None, type="EPIC") for n in range(100)])
        big, others = epics[0], epics[1:]
        stories = create([item(f"Story {n}", big, type="STORY") for n in range(100)])
        create(
            [
                item(f"Subtask {n}", story, storyPoints=n % 5, status=statuses[n % 3])
                for story in stories
                for n in range(9)
            ]
        )
        create([item(f"Task {n}", epic) for epic in others for n in range(90)])
        self.log("deep tree: 10,010 items under 100 epics")
        self.run_load(
            api,
            "deep tree: GET epic of 1,000",
            [Request("GET", f"{API}/tasks/{big}")],
            "progress over 1,000 descendants; 10,010 items",
        )
        query = urlencode({"workspaceId": ws, "ancestorId": big, "limit": 50})
        self.run_load(
            api,
            "deep tree: list ancestorId",
            [Request("GET", f"{API}/tasks?{query}")],
            "page of 50 of 1,000 descendants",
        )

    def lists(self, api: Api, seeded: Seeded) -> None:
        ws = seeded.workspace_id

        def page(project: str) -> list[Request]:
            query = urlencode(
                {"workspaceId": ws, "projectId": seeded.projects[project]["$id"], "limit": 50}
            )
            return [Request("GET", f"{API}/tasks?{query}")]

        small = self.run_load(
            api, "GET /tasks (list 50, embeds)", page("board"), f"{self.cfg.board_items:,} items"
        )
        started = time.perf_counter()
        seed_by_copy(api, self.url, seeded, project="big", total=self.cfg.big_items)
        self.log(
            f"bulk-seeded {self.cfg.big_items:,} items in {time.perf_counter() - started:.1f} s"
        )
        large = self.run_load(
            api, "GET /tasks list at 100k", page("big"), f"{self.cfg.big_items:,} items"
        )
        self.custom_fields(api, seeded)
        self.queries(api, seeded)
        if small.rps and large.rps:
            self.rows.append(
                Row(
                    database=self.kind,
                    name="list at 100k vs 1k",
                    value=small.rps / large.rps,
                    unit="x",
                    ratio="",
                )
            )

    def custom_fields(self, api: Api, seeded: Seeded) -> None:
        """Issue 27: at 100,000 items in the workspace, a filter by a select field and a
        sort by a number field, each a page of 50 with its total; p95 of sequential calls,
        target 50 ms (PostgreSQL)."""
        if not api.has("GET", "/workspaces/{id}/fields"):
            self.skipped("GET /tasks by a custom field at 100k", "no custom fields")
            return
        seed_custom_fields(api, self.url, seeded, project="big")
        ws = seeded.workspace_id
        for name, params in (
            ("GET /tasks fields.severity=HIGH at 100k", {"fields.severity": "HIGH"}),
            ("GET /tasks sort=fields.estimate at 100k", {"sort": "fields.estimate"}),
            ("GET /tasks sort=-fields.estimate at 100k", {"sort": "-fields.estimate"}),
        ):
            query = urlencode({"workspaceId": ws, "limit": 50, **params})
            self._timed_p95(api, name, f"/tasks?{query}", "p95 of 40; target 50 ms")

    def _timed_p95(self, api: Api, name: str, path: str, note: str) -> None:
        times = sorted(api.timed("GET", path)[1] for _ in range(10 if self.cfg.quick else 40))
        p95 = times[int(len(times) * 0.95) - 1]
        self.rows.append(
            Row(
                database=self.kind,
                name=name,
                value=p95,
                unit="ms",
                p50_ms=times[len(times) // 2],
                p99_ms=times[-1],
                note=note,
            )
        )
        self.log(f"{name}: p95 {p95:.0f} ms")

    def scale_lists(self, api: Api, seeded: Seeded) -> None:
        """Issue 26: each documented sort and filter of `GET /tasks` on the big project (20
        templates copied to `big_items`), the workspace's list, and the board's first read."""
        ws = seeded.workspace_id
        big = seeded.projects["big"]["$id"]
        started = time.perf_counter()
        seed_by_copy(api, self.url, seeded, project="big", total=self.cfg.big_items, templates=20)
        elapsed = time.perf_counter() - started
        self.log(f"bulk-seeded {self.cfg.big_items:,} items in {elapsed:.1f} s")
        parent = seeded.items_in("big")[0]
        cases: list[tuple[str, dict[str, str]]] = [
            ("list", {}),
            ("list, workspace", {"projectId": ""}),
            ("sort=-priority", {"sort": "-priority"}),
            ("sort=dueDate", {"sort": "dueDate"}),
            ("sort=-updatedAt", {"sort": "-updatedAt"}),
            ("sort=createdAt", {"sort": "createdAt"}),
            ("assigneeId", {"assigneeId": seeded.member_id}),
            ("labels=docs", {"labels": "docs"}),
            ("parentId (none match)", {"parentId": parent}),
            ("search (20 match)", {"search": "faster"}),
            ("offset=5000", {"offset": "5000"}),
        ]
        # Timed one at a time (p50, p99 the slowest): a load of 1-second calls measures the
        # queue, and the machine's other work more than the statement.
        for name, extra in cases:
            query = {"workspaceId": ws, "projectId": big, "limit": "50", **extra}
            query = {key: value for key, value in query.items() if value}
            path = f"/tasks?{urlencode(query)}"
            self._timed_reads(api, f"GET /tasks {name}", path, "", warm=True)
        board = seeded.projects["board"]["$id"]
        self._timed_reads(
            api, "GET /sprints?projectId (5 sprints)", f"/sprints?projectId={board}", "", warm=True
        )

    def queries(self, api: Api, seeded: Seeded) -> None:
        """Issue 28's query set over the workspace of `big_items` (bench/queries.py)."""
        if not api.has("GET", "/views/{viewId}/items"):
            self.skipped("q: the query set", "route not in the service yet")
            return
        self.rows += measure_queries(
            self.kind, api, self.url, seeded, quick=self.cfg.quick, log=self.log
        )

    def patch(self, api: Api, seeded: Seeded) -> None:
        ids = seeded.items_in("board")[:50]
        bodies = [
            {"storyPoints": 13, "title": "Renamed by the benchmark", "flagged": True},
            {"storyPoints": 2, "title": "Bench item: make the board faster", "flagged": False},
        ]
        # Every request changes the item it names: the same item never gets the same body twice
        # in a row, so no PATCH is a no-op.
        requests = [
            Request("PATCH", f"{API}/tasks/{item}", orjson.dumps(body))
            for body in bodies
            for item in ids
        ]
        self.run_load(api, "PATCH /tasks/{id}", requests)

    def bulk_update(self, api: Api, seeded: Seeded) -> None:
        ids = seeded.items_in("board")[: self.cfg.bulk_entries]
        times = []
        for n in range(self.cfg.bulk_repeats + 1):
            status = ("IN_REVIEW", "TODO")[n % 2]
            body = {"tasks": [{"$id": i, "status": status} for i in ids]}
            _, elapsed = api.timed("POST", "/tasks/bulk-update", body)
            if n:
                times.append(elapsed)
        times.sort()
        p50 = times[len(times) // 2]
        self.rows.append(
            Row(
                database=self.kind,
                name="bulk-update 500 (p50)",
                value=p50,
                unit="ms",
                p50_ms=p50,
                p99_ms=times[-1],
                note=f"{len(ids)} entries, {len(times)} runs; p99 column = max",
            )
        )
        self.log(f"bulk-update: p50 {p50:.0f} ms")

    def complete_sprint(self, api: Api, seeded: Seeded) -> None:
        """Complete an ACTIVE sprint of `sprint_items` TODO items (copied in), moving them all
        to the backlog; `completions` times (the later sprints get the backlog's items put
        back in, by one `UPDATE`), p50."""
        times, moved = [], []
        for n in range(self.cfg.completions):
            sprint = sprint_to_complete(api, self.url, seeded, n=n, items=self.cfg.sprint_items)
            data, elapsed = api.timed("POST", f"/sprints/{sprint}/complete", {})
            times.append(elapsed)
            moved.append(data.get("movedItemCount") if isinstance(data, dict) else None)
            self.log(f"complete sprint: {elapsed:.0f} ms, moved {moved[-1]}")
        runs = f"; runs {', '.join(f'{t:.0f}' for t in times)} ms" if len(times) > 1 else ""
        self.rows.append(
            Row(
                database=self.kind,
                name="complete sprint of 5,000",
                value=sorted(times)[len(times) // 2],
                unit="ms",
                note=f"movedItemCount={moved[0]}{runs}",
            )
        )

    def sprint_report(self, api: Api, seeded: Seeded) -> None:
        """An ACTIVE sprint's report, computed from its history: 5,000 items at the start,
        then 20,000 changes through bulk updates (each item done, moved out to the backlog,
        moved back in, reopened: a scope change, or a burndown step, per change)."""
        sprint, project = self._project_with_sprint(api, seeded, "report")
        seed_by_copy(
            api,
            self.url,
            seeded,
            project="report",
            total=self.cfg.sprint_items,
            sprint_id=sprint,
            status="TODO",
        )
        api.call("PATCH", f"/sprints/{sprint}", {"status": "ACTIVE"})
        ids = seeded.items_in("report")
        changes: list[dict[str, object]] = [
            {"status": "DONE"},
            {"sprintId": None},
            {"sprintId": sprint},
            {"status": "TODO"},
        ]
        for change in changes:
            for first in range(0, len(ids), 500):
                entries = [{"$id": i, **change} for i in ids[first : first + 500]]
                api.call("POST", "/tasks/bulk-update", {"tasks": entries})
        self._timed_reads(
            api,
            "sprint report, 5,000 items (p50)",
            f"/sprints/{sprint}/report",
            f"{len(ids):,} items, {len(ids) * len(changes):,} changes; p99 column = max",
        )
        del project

    def velocity(self, api: Api, seeded: Seeded) -> None:
        """Velocity over 50 completed sprints, each with a few items."""
        _, project = self._project_with_sprint(api, seeded, "velocity", sprint=False)
        for n in range(50):
            sprint = api.call(
                "POST",
                "/sprints",
                {"name": f"Sprint {n}", "workspaceId": seeded.workspace_id, "projectId": project},
                expect=201,
            )["$id"]
            for points in (3, 5):
                body = {
                    "name": f"Velocity item {n}",
                    "workspaceId": seeded.workspace_id,
                    "projectId": project,
                    "sprintId": sprint,
                    "storyPoints": points,
                    "status": "DONE" if points == 3 else "TODO",
                }
                api.call("POST", "/tasks", body, expect=201)
            api.call("PATCH", f"/sprints/{sprint}", {"status": "ACTIVE"})
            api.call("POST", f"/sprints/{sprint}/complete", {})
        self._timed_reads(
            api,
            "velocity of 50 sprints (p50)",
            f"/projects/{project}/velocity?limit=50",
            "p99 column = max",
        )

    def _project_with_sprint(
        self, api: Api, seeded: Seeded, role: str, *, sprint: bool = True
    ) -> tuple[str, str]:
        project = api.call(
            "POST",
            f"/workspaces/{seeded.workspace_id}/projects",
            {"name": f"Bench {role}", "key": role[:4].upper()},
            expect=201,
        )
        seeded.projects[role] = project
        if not sprint:
            return "", project["$id"]
        body = {"name": "Reported", "workspaceId": seeded.workspace_id, "projectId": project["$id"]}
        return api.call("POST", "/sprints", body, expect=201)["$id"], project["$id"]

    def _timed_reads(
        self, api: Api, name: str, path: str, note: str, *, warm: bool = False
    ) -> None:
        if warm:  # (the first read of a cold index is the disk's)
            api.timed("GET", path)
        times = sorted(api.timed("GET", path)[1] for _ in range(3 if self.cfg.quick else 15))
        p50 = times[len(times) // 2]
        self.rows.append(
            Row(
                database=self.kind,
                name=name,
                value=p50,
                unit="ms",
                p50_ms=p50,
                p99_ms=times[-1],
                note=note,
            )
        )
        self.log(f"{name}: {p50:.0f} ms")

    def finish(self) -> None:
        for row in self.rows:
            judge(row, self.ceiling_rps)


TEN_FIELDS: list[tuple[str, Any]] = [
    ("text", "A note the benchmark writes"),
    ("number", 42.5),
    ("date", "2026-12-01"),
    ("select", "Two"),
    ("multiselect", ["One", "Three"]),
    ("url", "https://example.com/bench"),
    ("checkbox", True),
    ("text", "Another"),
    ("number", 7),
    ("select", "One"),
]
"""The custom fields of issue 27's create row: every type but `user`, two of three."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="2 s per load, fewer repeats (see bench/README.md)"
    )
    parser.add_argument(
        "--databases", default="sqlite,postgresql", help="comma-separated: sqlite, postgresql"
    )
    parser.add_argument("--duration", type=float, default=None, help="seconds per load")
    parser.add_argument("--connections", type=int, default=16, help="concurrent connections")
    parser.add_argument("--big-items", type=int, default=100_000, help="items in the big project")
    parser.add_argument(
        "--only",
        choices=["all", "api", "board", "changes", "fields", "lists", "queries"],
        default="all",
        help="api: the loads and timed calls; board: the board in Chromium (bench/board.py);"
        " changes: bulk update and sprint completion only (3 completions, p50);"
        " fields: custom fields at 100k alone (filter and sort, p95);"
        " lists: every sort and filter of GET /tasks on the big project (issue 26);"
        " queries: the query set at --big-items (bench/queries.py)",
    )
    parser.add_argument(
        "--fallback", action="store_true", help="use the Python load generator even if wrk is there"
    )
    args = parser.parse_args(argv)
    cfg = config(args)
    started = time.perf_counter()
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2:
        # The harness itself (seeding, one-off timings) stays off the server's core.
        os.sched_setaffinity(0, {int(LOAD_CPU)})
    loadgen = LoadGenerator(force_fallback=args.fallback)
    rows: list[Row] = []
    for kind in args.databases.split(","):
        with fresh_database(kind) as url:
            run = Run(kind, url, cfg, loadgen)
            try:
                if cfg.only in ("all", "api"):
                    run.measure_ceiling()
                run.measure_service()
            finally:
                run.finish()
                rows += run.rows
    elapsed = time.perf_counter() - started
    load_average = os.getloadavg() if hasattr(os, "getloadavg") else None
    meta: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": "quick" if cfg.quick else "full",
        "only": cfg.only,
        "load_generator": loadgen.name,
        "connections": cfg.connections,
        "seconds_per_load": cfg.duration,
        "pinning": pinning_note(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "elapsed_s": round(elapsed, 1),
        "load_average": load_average,
    }
    print()
    print(
        f"sprintboard bench ({meta['mode']}): load generator {loadgen.name}; "
        f"{cfg.connections} connections, {cfg.duration:g} s per load; {meta['pinning']}; "
        f"load average at the end {' '.join(f'{n:.1f}' for n in load_average or ())}"
    )
    print(table(rows))
    print(f"\n{elapsed:.0f} s in all; written to bench/results.json")
    write_json(rows, meta)
    failed = [row.name for row in rows if row.verdict == "FAIL"]
    if failed:
        print(f"FAILED (a plan scans or sorts work_items whole): {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
