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
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.server import LOAD_CPU, ROOT, pinned


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
