"""Starting, watching and stopping the server processes under test."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
SERVER_CPU = "0"
"""The server gets core 0 and the load generator core 1, when `taskset` is there."""
LOAD_CPU = "1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def pinned(command: Sequence[str], cpu: str) -> list[str]:
    """`command` pinned to one core, when the machine has two and `taskset` is installed."""
    if shutil.which("taskset") and (os.cpu_count() or 1) >= 2:
        return ["taskset", "-c", cpu, *command]
    return list(command)


def pinning_note() -> str:
    if shutil.which("taskset") and (os.cpu_count() or 1) >= 2:
        return f"server on core {SERVER_CPU}, load generator on core {LOAD_CPU} (taskset)"
    return "no pinning (taskset missing or a single core)"


class Server:
    """One server process on 127.0.0.1:`port`, started with `command`, ready once `/healthz`
    (or, for the ceiling, any path) answers 200.
    """

    def __init__(
        self, name: str, command: Sequence[str], *, env: dict[str, str], log: Path
    ) -> None:
        self.name = name
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._command = pinned([*command, "--port", str(self.port), "--workers", "1"], SERVER_CPU)
        self._env = env
        self._log_path = log
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> "Server":
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def start(self, timeout: float = 60.0) -> None:
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self._log_path.open("wb")
        self._process = subprocess.Popen(
            self._command, cwd=ROOT, env=self._env, stdout=log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self._process.returncode}; "
                    f"see {self._log_path}:\n{self._log_path.read_text()[-2000:]}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/healthz", timeout=1) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.name} did not become ready in {timeout:.0f} s")

    @property
    def pid(self) -> int:
        """The process that serves: with `--workers 1` uvicorn serves in the process we started
        (taskset execs into it, so the pid is the same)."""
        assert self._process is not None
        return self._process.pid

    def peak_rss_mb(self) -> float | None:
        """The process's peak resident set (VmHWM), in MiB."""
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return None

    def stop(self) -> None:
        if self._process is None or self._process.poll() is not None:
            return
        self._process.send_signal(signal.SIGINT)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
