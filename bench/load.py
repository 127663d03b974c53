"""Load generators: wrk when it is there (installed from Debian's packages when missing and
running as root), else `bench.loadgen`, a small keep-alive client in Python, labelled as the
fallback in the report. Both get a list of requests to cycle through and answer a `LoadResult`.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx
import orjson

from bench.api import API, Api
from bench.server import LOAD_CPU, ROOT, VENV_BIN, Server, pinned


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: bytes | None = None


@dataclass(frozen=True)
class Load:
    """Requests sent in turn, over `connections` keep-alive connections, for `duration` s."""

    requests: list[Request]
    headers: dict[str, str] = field(default_factory=dict)
    connections: int = 32
    duration: float = 3.0


@dataclass(frozen=True)
class LoadResult:
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    """Connection errors, timeouts and non-2xx answers."""


def ensure_wrk() -> str | None:
    """The path of wrk, installing Debian's package when it is missing and we are root."""
    found = shutil.which("wrk")
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    print("installing wrk from Debian's packages ...", file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "wrk"]):
        subprocess.run(
            command, check=False, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    return shutil.which("wrk")


class LoadGenerator:
    def __init__(self, *, force_fallback: bool = False) -> None:
        self.wrk = None if force_fallback else ensure_wrk()

    @property
    def name(self) -> str:
        if self.wrk:
            return "wrk"
        return "FALLBACK bench.loadgen (Python asyncio keep-alive client; wrk unavailable)"

    def run(self, base_url: str, load: Load) -> LoadResult:
        with tempfile.TemporaryDirectory(prefix="sb-bench-") as tmp:
            if self.wrk:
                return self._run_wrk(base_url, load, Path(tmp) / "load.lua")
            return self._run_fallback(base_url, load, Path(tmp) / "load.json")

    def _run_wrk(self, base_url: str, load: Load, script: Path) -> LoadResult:
        script.write_text(_wrk_script(load))
        command = pinned(
            [
                self.wrk or "wrk",
                "-t1",
                f"-c{load.connections}",
                f"-d{max(1, round(load.duration))}s",
                "--timeout",
                "10s",
                "-s",
                str(script),
                base_url,
            ],
            LOAD_CPU,
        )
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        return _parse_result(done.stdout + done.stderr)

    def _run_fallback(self, base_url: str, load: Load, spec: Path) -> LoadResult:
        payload = asdict(load)
        payload["requests"] = [
            {
                "method": r.method,
                "path": r.path,
                "body": r.body.decode() if r.body is not None else None,
            }
            for r in load.requests
        ]
        payload["base_url"] = base_url
        spec.write_text(json.dumps(payload))
        command = pinned([sys.executable, "-m", "bench.loadgen", str(spec)], LOAD_CPU)
        output = subprocess.run(
            command, capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
        return _parse_result(output)


def run_together(loadgen: LoadGenerator, runs: list[tuple[str, Load]]) -> LoadResult:
    """Several loads at once, each `(base_url, load)` against its own server: their requests
    and errors added up, over the longest of their times; p50 and p99 are the worst of them."""
    with ThreadPoolExecutor(len(runs)) as pool:
        results = list(pool.map(lambda run: loadgen.run(*run), runs))
    requests = sum(r.requests for r in results)
    seconds = max(r.seconds for r in results)
    return LoadResult(
        requests=requests,
        seconds=seconds,
        rps=requests / seconds if seconds else 0.0,
        p50_ms=max(r.p50_ms for r in results),
        p99_ms=max(r.p99_ms for r in results),
        errors=sum(r.errors for r in results),
    )


def creates_from_two_servers(
    loadgen: LoadGenerator,
    api: Api,
    workspace_id: str,
    load: Load,
    *,
    env: dict[str, str],
    log: Path,
) -> tuple[LoadResult, LoadResult]:
    """`POST /tasks` from two server processes at once (`api`'s and a second one, logging to
    `log`; half of `load`'s connections each, for its duration): into one project, whose key
    counter they take turns on, then into two, which share only the workspace's event
    numbering. The first rate over the second is what the turns cost."""
    projects = [
        api.call("POST", f"/workspaces/{workspace_id}/projects", {"name": n, "key": n}, expect=201)
        for n in ("ONE", "TWO")
    ]
    half = max(1, load.connections // 2)
    command = [str(VENV_BIN / "sprintboard"), "serve"]
    with Server("second sprintboard", command, env=env, log=log) as second:
        results = []
        for targets in (projects[:1] * 2, projects):
            runs = []
            for base_url, project in zip([api.base_url, second.base_url], targets, strict=True):
                body = {"name": "Two", "workspaceId": workspace_id, "projectId": project["$id"]}
                request = Request("POST", f"{API}/tasks", orjson.dumps(body))
                check = httpx.post(
                    base_url + request.path, content=request.body, headers=load.headers
                )
                if check.status_code != 201:
                    raise RuntimeError(f"POST /tasks: {check.status_code} {check.text[:300]}")
                runs.append((base_url, Load([request], load.headers, half, load.duration)))
            results.append(run_together(loadgen, runs))
    return results[0], results[1]


def _parse_result(output: str) -> LoadResult:
    for line in output.splitlines():
        if line.startswith("BENCH_JSON "):
            data = json.loads(line.removeprefix("BENCH_JSON "))
            seconds = data["duration_us"] / 1e6
            return LoadResult(
                requests=data["requests"],
                seconds=seconds,
                rps=data["requests"] / seconds if seconds else 0.0,
                p50_ms=data["p50_us"] / 1000,
                p99_ms=data["p99_us"] / 1000,
                errors=data["errors"],
            )
    raise RuntimeError(f"no result in the load generator's output:\n{output}")


def _lua_string(value: str | bytes) -> str:
    text = value.decode() if isinstance(value, bytes) else value
    return "[==[" + text + "]==]"


def _wrk_script(load: Load) -> str:
    headers = "\n".join(
        f"wrk.headers[ {_lua_string(k)} ] = {_lua_string(v)}" for k, v in load.headers.items()
    )
    specs = ",\n".join(
        "{"
        + ", ".join(
            [_lua_string(r.method), _lua_string(r.path)]
            + ([_lua_string(r.body)] if r.body is not None else [])
        )
        + "}"
        for r in load.requests
    )
    return f"""
{headers}
local specs = {{
{specs}
}}
local prepared = {{}}
local counter = 0

init = function(args)
  for i, spec in ipairs(specs) do
    prepared[i] = wrk.format(spec[1], spec[2], nil, spec[3])
  end
end

request = function()
  counter = counter + 1
  return prepared[(counter % #prepared) + 1]
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {{"requests": %d, "duration_us": %d, "errors": %d, "p50_us": %d, "p99_us": %d}}\\n',
    summary.requests, summary.duration,
    e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""
