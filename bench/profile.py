"""`python -m bench.profile`: where a request's time goes, per scenario, from py-spy samples.

Seeds a small SQLite (or PostgreSQL) database like `make bench`, then for each scenario runs
the server under `py-spy record` while wrk drives it, and sorts every sample into one bucket
(framework, validation, auth, SQLAlchemy, driver, serialization, server, application).
py-spy is not a project dependency: `.venv/bin/pip install py-spy` first.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlencode

import orjson

from bench.api import API, Api
from bench.databases import WORK, fresh_database
from bench.load import Load, LoadGenerator, Request
from bench.seed import (
    Seeded,
    create_admin,
    seed_base,
    seed_board,
    seed_env,
    sprint_to_complete,
)
from bench.server import LOAD_CPU, VENV_BIN, Server

# First match wins, from the innermost frame outwards: a sample is charged to the most specific
# layer on its stack (a SQLAlchemy call made during authentication counts as "auth").
INCLUSIVE = [
    ("auth (authenticate, incl. its SQL)", "authenticate (sprintboard/identity/service.py"),
    ("rate limit (limits storage)", "Budget._count (sprintboard/http/ratelimit.py"),
    ("access checks (access.py, incl. SQL)", "(sprintboard/access.py"),
]
LAYERS = [
    # The driver's C calls do not show as frames: a sample whose innermost frame is the
    # plain-SQL runner is time in the driver (and the database, for SQLite).
    ("driver (sqlite3/psycopg)", ("sqlite3", "psycopg", "_sqlite3", "Raw.run (", "Raw.rows (")),
    ("SQLAlchemy", ("sqlalchemy/",)),
    ("pydantic validation", ("pydantic/", "pydantic_core")),
    ("serialization (orjson/json)", ("orjson", "json/", "sprintboard/responses.py")),
    ("FastAPI/Starlette", ("fastapi/", "starlette/")),
    ("uvicorn: HTTP parsing, socket writes", ("uvicorn/", "httptools", "asyncio/", "uvloop")),
    ("sprintboard (own code)", ("sprintboard/",)),
]


def bucket(stack: str) -> str:
    for name, needle in INCLUSIVE:
        if needle in stack:
            return name
    frames = stack.split(";")
    for frame in reversed(frames):
        for name, needles in LAYERS:
            if any(n in frame for n in needles):
                return name
    return "other (stdlib, idle)"


_IDLE_LEAVES = ("Runner.run (asyncio/runners.py", "run (asyncio/runners.py", "select (")


def _idle(stack: str) -> bool:
    """The event loop waiting for work (uvloop's loop is C, so its wait shows as `run`).
    py-spy can cut a deep stack's outer frames, so a request is recognized by its innermost
    frame, not by its root.
    """
    leaf = stack.rsplit(";", 1)[-1].strip()
    return not stack.strip() or leaf.startswith(_IDLE_LEAVES)


def analyse(raw: Path, top: int) -> str:
    buckets: Counter[str] = Counter()
    functions: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        if _idle(stack):
            continue
        total += n
        buckets[bucket(stack)] += n
        seen: set[str] = set()
        for frame in stack.split(";"):
            if "sprintboard/" not in frame:
                continue
            function = re.sub(r":\d+\)", ")", frame.strip())
            if function not in seen:
                seen.add(function)
                functions[function] += n
    lines = [f"  {total} samples in requests (the idle loop left out)"]
    for name, n in buckets.most_common():
        lines.append(f"  {n / total:6.1%}  {name}")
    lines.append("  hottest sprintboard functions (inclusive):")
    for frame, n in functions.most_common(top):
        lines.append(f"  {n / total:6.1%}  {frame.strip()}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    parser.add_argument("--database", default="sqlite", choices=["sqlite", "postgresql"])
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--only", default="", help="profile the scenarios whose name has this")
    parser.add_argument(
        "--completions", type=int, default=5, help="sprints of 5,000 completed (profiled)"
    )
    args = parser.parse_args(argv)
    py_spy = shutil.which("py-spy") or str(VENV_BIN / "py-spy")
    if not Path(py_spy).exists():
        sys.exit("py-spy is missing: .venv/bin/pip install py-spy")
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {int(LOAD_CPU)})
    loadgen = LoadGenerator()
    with fresh_database(args.database) as url:
        env = seed_env(url)
        key = create_admin(env)
        with Server(
            "seed", [str(VENV_BIN / "sprintboard"), "serve"], env=env, log=WORK / "p.log"
        ) as s:
            api = Api(s.base_url, key)
            seeded = seed_base(api)
            seed_board(api, url, seeded, items=1_000, sprints=5)
            api.close()
        board = seeded.items_in("board")
        ws, project = seeded.workspace_id, seeded.projects["board"]["$id"]
        flow = seeded.projects["flow"]["$id"]
        scenarios = {
            "GET /tasks/{id}": [Request("GET", f"{API}/tasks/{i}") for i in board[:100]],
            "GET /tasks list 50": [
                Request(
                    "GET",
                    f"{API}/tasks?" + urlencode({"workspaceId": ws, "projectId": project}),
                )
            ],
            "POST /tasks": [
                Request(
                    "POST",
                    f"{API}/tasks",
                    orjson.dumps(
                        {
                            "name": "Profiled",
                            "workspaceId": ws,
                            "projectId": flow,
                            "labels": ["backend"],
                            "assigneeIds": [seeded.member_id],
                        }
                    ),
                )
            ],
            "POST /tasks/bulk-update (500)": [
                Request(
                    "POST",
                    f"{API}/tasks/bulk-update",
                    orjson.dumps({"tasks": [{"$id": i, "status": status} for i in board[:500]]}),
                )
                for status in ("IN_REVIEW", "TODO")
            ],
        }
        for name, requests in scenarios.items():
            if args.only and args.only not in name:
                continue
            slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
            raw = WORK / f"profile-{args.database}-{slug}.txt"
            with Server(
                "profiled", [str(VENV_BIN / "sprintboard"), "serve"], env=env, log=WORK / "p.log"
            ) as server:
                spy = subprocess.Popen(
                    [py_spy, "record", "--pid", str(server.pid), "--rate", "250", "--format",
                     "raw", "--output", str(raw), "--duration", str(args.seconds + 1),
                     "--nonblocking"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )  # fmt: skip
                time.sleep(0.5)
                result = loadgen.run(
                    server.base_url,
                    Load(requests, api.headers, 4 if "bulk" in name else 16, float(args.seconds)),
                )
                spy.wait()
            print(f"{name} ({args.database}): {result.rps:,.0f} rps under py-spy")
            print(analyse(raw, args.top))
        name = "complete sprint of 5,000"
        if not args.only or args.only in name:
            raw = WORK / f"profile-{args.database}-complete-sprint.txt"
            with Server(
                "profiled", [str(VENV_BIN / "sprintboard"), "serve"], env=env, log=WORK / "p.log"
            ) as server:
                api = Api(server.base_url, key)
                times = completions(api, url, seeded, py_spy, server.pid, raw, args.completions)
                api.close()
            print(f"{name} ({args.database}): {', '.join(f'{t:.0f}' for t in times)} ms")
            print(analyse(raw, args.top))
    return 0


def completions(
    api: Api, url: str, seeded: Seeded, py_spy: str, pid: int, raw: Path, count: int
) -> list[float]:
    """Complete `count` ACTIVE sprints of 5,000 items (all moved to the backlog) while py-spy
    records the server, from the first completion to the last; returns their times (ms)."""
    spy: subprocess.Popen[bytes] | None = None
    times = []
    for n in range(count):
        sprint = sprint_to_complete(api, url, seeded, n=n, items=5_000)
        if n == 0:
            spy = subprocess.Popen(
                [py_spy, "record", "--pid", str(pid), "--rate", "250", "--format", "raw",
                 "--output", str(raw), "--nonblocking", "--idle"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
            time.sleep(0.5)
        times.append(api.timed("POST", f"/sprints/{sprint}/complete", {})[1])
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait()
    return times


if __name__ == "__main__":
    sys.exit(main())
