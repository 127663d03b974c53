"""The fallback load generator: keep-alive HTTP/1.1 connections driven by asyncio.

Slower than wrk (it spends its own core on Python), so its figures understate the server on a
fast path; the report says when it was used. Run as `python -m bench.loadgen SPEC.json`.
"""

import asyncio
import json
import sys
import time
from typing import Any
from urllib.parse import urlsplit


def _encode(spec: dict[str, Any], host: str, headers: dict[str, str]) -> bytes:
    body = spec["body"].encode() if spec["body"] is not None else b""
    lines = [f"{spec['method']} {spec['path']} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if spec["body"] is not None:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = None
    chunked = False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if length is not None:
        await reader.readexactly(length)
    elif chunked:
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    return status


async def _connection(
    host: str, port: int, requests: list[bytes], start: int, deadline: float, out: dict[str, Any]
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    index = start
    try:
        while time.perf_counter() < deadline:
            sent = time.perf_counter()
            writer.write(requests[index % len(requests)])
            index += 1
            status = await _read_response(reader)
            out["latencies"].append(time.perf_counter() - sent)
            if not 200 <= status < 400:
                out["errors"] += 1
    except (OSError, asyncio.IncompleteReadError):
        out["errors"] += 1
    finally:
        writer.close()


async def _run(spec: dict[str, Any]) -> dict[str, Any]:
    url = urlsplit(spec["base_url"])
    host, port = url.hostname or "127.0.0.1", url.port or 80
    requests = [_encode(r, f"{host}:{port}", spec["headers"]) for r in spec["requests"]]
    out: dict[str, Any] = {"latencies": [], "errors": 0}
    started = time.perf_counter()
    deadline = started + spec["duration"]
    await asyncio.gather(
        *(_connection(host, port, requests, i, deadline, out) for i in range(spec["connections"]))
    )
    elapsed = time.perf_counter() - started
    latencies = sorted(out["latencies"])

    def percentile(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(len(latencies) * p))] if latencies else 0.0

    return {
        "requests": len(latencies),
        "duration_us": int(elapsed * 1e6),
        "errors": out["errors"],
        "p50_us": int(percentile(0.50) * 1e6),
        "p99_us": int(percentile(0.99) * 1e6),
    }


def main() -> None:
    with open(sys.argv[1]) as file:
        spec = json.load(file)
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    print("BENCH_JSON " + json.dumps(asyncio.run(_run(spec))))


if __name__ == "__main__":
    main()
