"""Run the real `sprintboard serve` command as a subprocess, for tests that need processes."""

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.factories import TEST_SECRET_KEY

SPRINTBOARD = Path(sys.executable).with_name("sprintboard")


@dataclass(frozen=True)
class Server:
    base_url: str
    """`http://127.0.0.1:PORT` (the API is under `/api/v1`)."""
    stderr: Path

    def log(self) -> str:
        """What the server wrote to stderr so far (for failure messages)."""
        return self.stderr.read_text(errors="replace")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def running_server(
    database_url: str, *, workers: int = 1, env: dict[str, str] | None = None, timeout: float = 90
) -> Iterator[Server]:
    """`sprintboard serve` on a free port against `database_url`, ready when entered.

    Stopped with SIGTERM on exit (killed if it does not stop in 10 s). Its stderr goes to a
    temporary file, quoted in the error if it does not become ready.
    """
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="sprintboard-server-") as tmp:
        stderr_path = Path(tmp) / "stderr.log"
        server = Server(f"http://127.0.0.1:{port}", stderr_path)
        with stderr_path.open("wb") as stderr:
            process = subprocess.Popen(
                [str(SPRINTBOARD), "serve", "--port", str(port), "--workers", str(workers)],
                env={
                    **os.environ,
                    "SPRINTBOARD_DATABASE_URL": database_url,
                    "SPRINTBOARD_SECRET_KEY": TEST_SECRET_KEY,
                    "SPRINTBOARD_WEBHOOK_ALLOW_PRIVATE": "true",  # (receivers on 127.0.0.1)
                    **(env or {}),
                },
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                cwd=tmp,
            )
            try:
                _wait_ready(process, server, timeout)
                yield server
            finally:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def _wait_ready(process: subprocess.Popen[bytes], server: Server, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{server.log()}")
        try:
            if httpx.get(f"{server.base_url}/readyz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"server not ready within {timeout} s:\n{server.log()}")
