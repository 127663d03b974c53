"""The board in a browser (issue 19): a sprint of 1,000 cards and a backlog of 10,000 items,
measured in Debian's Chromium driven by Playwright (never `playwright install`).

- **interactive**: navigation start to the `board:interactive` (`backlog:interactive`) mark
  the page sets once its columns (lists) are in the DOM and their handlers attached (p50).
- **scroll**: long tasks (PerformanceObserver `longtask`, 50 ms or more) while a script
  scrolls the board to its end, then the backlog, reading its next pages on the way; and,
  from a Chromium trace, the CPU time of the longest task (on a busy machine a task's wall
  time is stretched by the other processes, its CPU time is not).
- **drag**: a card dragged to another column; from the `drop` event to the card in its new
  column and a frame drawn (p50), and the `POST /tasks/bulk-update` it sends, request start
  to response end as the page's resource timing has it (p50).
- **remote change**: a second client (httpx, its own key) changes a card's status; from
  just before its request to the first page showing the card in the new column, with a
  frame drawn (p95; the page's and the harness's wall clocks are the same clock).
"""

import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter, time
from typing import Any
from urllib.parse import urlencode

import httpx
import orjson
from sqlalchemy import case, update

from bench.api import API, Api
from bench.report import Row
from bench.seed import Seeded, seed_by_copy
from sprintboard.db import Database
from sprintboard.models import WorkItem

CHROMIUM = "/usr/bin/chromium"
CARDS = 1_000
BACKLOG = 10_000
BOARD_STATUSES = ["TODO", "IN_PROGRESS", "IN_REVIEW", "DONE", "BACKLOG"]
CARD_FIELDS = [
    {"key": "severity", "name": "Severity", "type": "select", "options": ["Low", "High"]},
    {"key": "estimate", "name": "Estimate", "type": "number"},
]
CARD_VALUES = {"severity": "High", "estimate": 3}

# In every page of the run: a card's arrival in a column, seen by a MutationObserver, then a
# frame drawn (requestAnimationFrame, then a task: the frame's paint has been done by then).
WATCH = """
window.__bench = {
  seen: {},
  drops: [],
  longtasks: [],
  watch(key, status) {
    const id = `${key}@${status}`;
    delete this.seen[id];
    const there = () =>
      document.querySelector(`.column[data-status="${status}"] [data-key="${key}"]`);
    const done = () => {
      observer.disconnect();
      requestAnimationFrame(() => setTimeout(() => {
        this.seen[id] = { at: performance.now(), wall: performance.timeOrigin + performance.now() };
      }, 0));
    };
    const observer = new MutationObserver(() => { if (there()) done(); });
    if (there()) return done();
    observer.observe(document.body, { childList: true, subtree: true });
  },
  observeLongTasks() {
    this.longtasks = [];
    this.longtaskObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) this.longtasks.push(entry.duration);
    });
    this.longtaskObserver.observe({ type: "longtask" });
  },
};
document.addEventListener("drop", () => window.__bench.drops.push(performance.now()), true);
"""

SCROLL = """async ([selector, step]) => {
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const scroller = document.scrollingElement;
  for (let y = 0; y <= scroller.scrollHeight - innerHeight; y += step) {
    scroller.scrollTop = y;
    await frame();
  }
  for (const element of document.querySelectorAll(selector)) {
    for (let y = 0; y <= element.scrollHeight - element.clientHeight; y += step) {
      element.scrollTop = y;
      await frame();
    }
  }
  return scroller.scrollHeight;
}"""


@dataclass(frozen=True)
class Wall:
    project_id: str
    workspace_id: str
    sprint_id: str
    keys: list[str]
    """The sprint's cards, lowest position first (so the first ones are shown in any column)."""


def seed_wall(api: Api, database_url: str, seeded: Seeded) -> Wall:
    """A workspace of its own with a project WALL: an ACTIVE sprint of 1,000 cards over the
    five statuses and 10,000 backlog items, copies of rows the API wrote (`seed_by_copy`).
    Each card shows two custom fields (issue 27): their values are written to the column
    items are read from (the typed values' table, which only filters and sorts read, is left
    empty)."""
    workspace = api.call("POST", "/workspaces", {"name": "Bench wall"}, expect=201)
    ws = workspace["$id"]
    for definition in CARD_FIELDS:
        api.call("POST", f"/workspaces/{ws}/fields", definition, expect=201)
    project = api.call(
        "POST", f"/workspaces/{ws}/projects", {"name": "Bench wall", "key": "WALL"}, expect=201
    )
    body = {"name": "Wall sprint", "workspaceId": ws, "projectId": project["$id"]}
    sprint = api.call("POST", "/sprints", body, expect=201)["$id"]
    wall = Seeded(
        workspace_id=ws,
        admin_id=seeded.admin_id,
        member_id=seeded.admin_id,
        projects={"wall": project},
    )
    seed_by_copy(
        api,
        database_url,
        wall,
        project="wall",
        total=CARDS + BACKLOG,
        templates=10,
        sprint_id=sprint,
        status="TODO",
    )
    in_sprint = WorkItem.number <= CARDS
    by_number = case(*((WorkItem.number % 5 == n, s) for n, s in enumerate(BOARD_STATUSES)))
    database = Database(database_url)
    try:
        with database.transaction() as session:
            session.execute(
                update(WorkItem)
                .where(WorkItem.project_id == project["$id"])
                .values(
                    sprint_id=case((in_sprint, sprint), else_=None),
                    status=case((in_sprint, by_number), else_="BACKLOG"),
                    custom_fields=CARD_VALUES,
                )
            )
    finally:
        database.dispose()
    api.call("PATCH", f"/sprints/{sprint}", {"status": "ACTIVE"})
    query = {"workspaceId": ws, "projectId": project["$id"], "sprintId": sprint, "limit": 100}
    page = api.call("GET", f"/tasks?{urlencode(query)}")
    keys = [item["key"] for item in sorted(page["documents"], key=lambda i: i["position"])]
    return Wall(project["$id"], ws, sprint, keys)


@dataclass
class TraceCpu:
    """What a Chromium trace says of the renderer's main thread (CPU, that is thread, time)."""

    tasks: list[float] = field(default_factory=list)
    """Each task's CPU time (ms)."""
    paint_ms: float = 0.0
    """The CPU time of its paints (recording display lists) together: cards painted again in
    every frame that scrolls show here first."""


def _main_thread_cpu(trace: Any) -> TraceCpu:
    """The CPU time in ms of each task of the renderer's main thread in a trace, and of its
    paints."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    main = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "thread_name"
        and e["args"].get("name") == "CrRendererMain"
    }
    ours = [e for e in events if e.get("ph") == "X" and (e["pid"], e["tid"]) in main]
    return TraceCpu(
        tasks=[e.get("tdur", 0) / 1000 for e in ours if e.get("name") == "RunTask"],
        paint_ms=sum(e.get("tdur", 0) / 1000 for e in ours if e.get("name") == "Paint"),
    )


def _p(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


class BoardBench:
    def __init__(self, kind: str, api: Api, key: str, *, quick: bool) -> None:
        self.kind = kind
        self.api = api
        self.key = key
        self.quick = quick
        self.rows: list[Row] = []

    def log(self, message: str) -> None:
        print(f"[{self.kind}] board: {message}", file=sys.stderr, flush=True)

    def row(self, name: str, value: float, unit: str, note: str, **extra: Any) -> None:
        # Every other process on the machine takes the browser's CPU: say how busy it was.
        if hasattr(os, "getloadavg"):
            note += f"; load {os.getloadavg()[0]:.1f}"
        self.rows.append(
            Row(database=self.kind, name=name, value=value, unit=unit, note=note, **extra)
        )
        self.log(f"{name}: {value:,.1f} {unit} ({note})")

    @contextmanager
    def browser(self) -> Iterator[Any]:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as driver:
            browser = driver.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
            )
            try:
                yield browser
            finally:
                browser.close()

    def signed_in_page(self, browser: Any) -> Any:
        # The CSP is bypassed: the waits below poll a predicate Playwright compiles with
        # `new Function`, which the pages' `script-src` refuses (nothing measured uses it).
        context = browser.new_context(
            base_url=self.api.base_url, viewport={"width": 1280, "height": 800}, bypass_csp=True
        )
        context.set_default_timeout(30_000)
        context.add_init_script(WATCH)
        made = context.request.post(f"{API}/sessions", data={"key": self.key})
        if made.status != 201:
            raise RuntimeError(f"sign-in: {made.status} {made.text()}")
        page = context.new_page()
        page.on("pageerror", lambda error: self.log(f"page error: {error}"))
        return page

    def run(self, wall: Wall) -> list[Row]:
        board = f"/projects/{wall.project_id}/board"
        backlog = f"/projects/{wall.project_id}/backlog"
        loads = 3 if self.quick else 7
        with self.browser() as browser:
            page = self.signed_in_page(browser)
            for name, path, mark in [
                ("board of 1,000: interactive (p50)", board, "board:interactive"),
                ("backlog of 10,000: interactive (p50)", backlog, "backlog:interactive"),
            ]:
                times = [self.interactive(page, path, mark) for _ in range(loads + 1)][1:]
                self.row(
                    name,
                    statistics.median(times),
                    "ms",
                    f"navigation start to `{mark}`, {loads} loads after one; max {max(times):.0f}",
                    p50_ms=statistics.median(times),
                    p99_ms=max(times),
                )
            self.scroll_board(page, board)
            self.scroll_backlog(page, backlog)
            self.drags(page, board, wall)
            self.remote(page, board, wall)
            page.context.close()
        return self.rows

    def interactive(self, page: Any, path: str, mark: str) -> float:
        page.goto("about:blank")
        page.goto(path)
        page.wait_for_function(f"performance.getEntriesByName({mark!r}).length > 0")
        started: float = page.evaluate(
            f"performance.getEntriesByName({mark!r})[0].startTime"
        )  # relative to the navigation's start (timeOrigin)
        return started

    def longtasks(self, page: Any) -> list[float]:
        tasks: list[float] = page.evaluate(
            "(() => { __bench.longtaskObserver.takeRecords().forEach("
            "(e) => __bench.longtasks.push(e.duration)); return __bench.longtasks; })()"
        )
        return tasks

    def scroll_row(self, name: str, tasks: list[float], cpu: TraceCpu, what: str) -> None:
        """`tasks`: the long tasks' wall times; `cpu`: every task's CPU time (the trace's
        thread time), which other processes on the machine do not stretch, and the paints'."""
        what += f"; longest {max(tasks):.0f} ms" if tasks else ""
        over = sum(c >= 50 for c in cpu.tasks)
        longest = max(cpu.tasks, default=0)
        what += f"; longest task's CPU {longest:.0f} ms, {over} of 50 ms or more"
        what += f"; paint {cpu.paint_ms:.0f} ms CPU in all"
        self.row(name, float(len(tasks)), "long tasks", what)

    @contextmanager
    def cpu_of_tasks(self, page: Any) -> Iterator[TraceCpu]:
        """The CPU time of each task the page's main thread ran meanwhile (ms), from a
        Chromium trace: what a long task would be on an idle machine."""
        cpu = TraceCpu()
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "trace.json"
            browser = page.context.browser
            browser.start_tracing(
                page=page,
                path=str(path),
                categories=["devtools.timeline", "disabled-by-default-devtools.timeline"],
            )
            try:
                yield cpu
            finally:
                browser.stop_tracing()
            read = _main_thread_cpu(orjson.loads(path.read_bytes()))
            cpu.tasks, cpu.paint_ms = read.tasks, read.paint_ms

    def scroll_board(self, page: Any, path: str) -> None:
        page.goto(path)
        page.wait_for_function("performance.getEntriesByName('board:interactive').length > 0")
        page.wait_for_timeout(300)
        page.evaluate("__bench.observeLongTasks()")
        with self.cpu_of_tasks(page) as cpu:
            height = page.evaluate(SCROLL, [".cards", 200])
        self.scroll_row(
            "board of 1,000: scroll",
            self.longtasks(page),
            cpu,
            f"200 px a frame through {height:,} px",
        )

    def scroll_backlog(self, page: Any, path: str) -> None:
        """Down the backlog to its end, reading the next page whenever the end is reached."""
        page.goto(path)
        page.wait_for_function("performance.getEntriesByName('backlog:interactive').length > 0")
        page.wait_for_timeout(300)
        page.evaluate("__bench.observeLongTasks()")
        pages = 4 if self.quick else 10
        with self.cpu_of_tasks(page) as cpu:
            self.scroll_backlog_pages(page, pages)
        rows = page.locator('.rows[data-list="none"] .row').count()
        self.scroll_row(
            "backlog of 10,000: scroll",
            self.longtasks(page),
            cpu,
            f"200 px a frame, reading {pages} more pages on the way ({rows} rows)",
        )

    def scroll_backlog_pages(self, page: Any, pages: int) -> None:
        for _ in range(pages):
            page.evaluate(SCROLL, [".rows", 200])
            more = page.locator(".backlog-list[data-list=none] button.more")
            if not more.count():
                break
            before = page.locator('.rows[data-list="none"] .row').count()
            more.click()
            page.wait_for_function(
                f"document.querySelectorAll('.rows[data-list=\"none\"] .row').length > {before}"
            )
        page.evaluate(SCROLL, [".rows", 200])

    def drags(self, page: Any, path: str, wall: Wall) -> None:
        page.goto(path)
        page.wait_for_function("performance.getEntriesByName('board:interactive').length > 0")
        drags = 8 if self.quick else 20
        placed: list[float] = []
        answered: list[float] = []
        for n in range(drags):
            # The first card of a column, to the head of the next: both on screen, so that
            # no scrolling moves the card under the pointer while it is dragged.
            now = BOARD_STATUSES[n % len(BOARD_STATUSES)]
            target = BOARD_STATUSES[(n + 1) % len(BOARD_STATUSES)]
            page.evaluate("scrollTo(0, 0)")
            source = page.locator(f'.column[data-status="{now}"] .card').first
            key = source.get_attribute("data-key")
            posts = page.evaluate(
                "performance.getEntriesByType('resource')"
                ".filter((e) => e.name.includes('/tasks/bulk-update')).length"
            )
            page.evaluate(f"__bench.drops = []; __bench.watch({key!r}, {target!r})")
            source.drag_to(page.locator(f'.column[data-status="{target}"] > header'))
            page.wait_for_function(f"__bench.seen[{f'{key}@{target}'!r}]")
            page.wait_for_function(
                "performance.getEntriesByType('resource')"
                f".filter((e) => e.name.includes('/tasks/bulk-update')).length > {posts}"
            )
            drop, seen, post = page.evaluate(
                f"""[__bench.drops[0], __bench.seen[{f"{key}@{target}"!r}].at,
                performance.getEntriesByType('resource')
                  .filter((e) => e.name.includes('/tasks/bulk-update')).at(-1)]"""
            )
            placed.append(seen - drop)
            answered.append(post["responseEnd"] - post["startTime"])
            page.wait_for_timeout(100)
        self.row(
            "drag: card placed (p50)",
            statistics.median(placed),
            "ms",
            f"drop event to card in its column + a frame; {drags} drags; max {max(placed):.0f}",
            p50_ms=statistics.median(placed),
            p99_ms=max(placed),
        )
        self.row(
            "drag: bulk update answered (p50)",
            statistics.median(answered),
            "ms",
            f"POST /tasks/bulk-update as the page times it; max {max(answered):.0f}",
            p50_ms=statistics.median(answered),
            p99_ms=max(answered),
        )

    def remote(self, page: Any, path: str, wall: Wall) -> None:
        page.goto(path)
        page.wait_for_function("document.body.dataset.live === 'stream'")
        changes = 20 if self.quick else 50
        shown: list[float] = []
        with httpx.Client(base_url=self.api.base_url, headers=self.api.headers) as other:
            for n in range(changes):
                # Among a column's first cards, whatever column it goes to (every column
                # draws its first 20 at once; the drags put at most 4 more before them).
                key = wall.keys[n % 30]
                now = page.locator(f'[data-key="{key}"]').evaluate(
                    "(e) => e.closest('.column').dataset.status"
                )
                target = BOARD_STATUSES[(BOARD_STATUSES.index(now) + 2) % len(BOARD_STATUSES)]
                page.evaluate(f"__bench.watch({key!r}, {target!r})")
                started = time() * 1000
                response = other.patch(f"{API}/tasks/{key}", json={"status": target})
                response.raise_for_status()
                page.wait_for_function(f"__bench.seen[{f'{key}@{target}'!r}]", timeout=10_000)
                wall_at: float = page.evaluate(f"__bench.seen[{f'{key}@{target}'!r}].wall")
                shown.append(wall_at - started)
        p95 = _p(shown, 0.95)
        self.row(
            "remote change shown (p95)",
            p95,
            "ms",
            f"PATCH by a second client to the card in the first page's column + a frame; "
            f"{changes} changes; p50 {statistics.median(shown):.0f}",
            p50_ms=statistics.median(shown),
            p99_ms=max(shown),
        )


def measure_board(
    kind: str, api: Api, key: str, database_url: str, seeded: Seeded, *, quick: bool
) -> list[Row]:
    started = perf_counter()
    wall = seed_wall(api, database_url, seeded)
    bench = BoardBench(kind, api, key, quick=quick)
    bench.log(f"seeded 1,000 cards and 10,000 backlog items in {perf_counter() - started:.1f} s")
    return bench.run(wall)
