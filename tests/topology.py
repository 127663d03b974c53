"""The deployment topology, run for real on this machine (for tests/ops/test_topology.py).

A PostgreSQL cluster and a Redis server of its own, on free loopback ports in a temporary
directory, so that a test may stop and restart them without disturbing the servers that the
rest of the suite shares; `sprintboard serve` instances and `sprintboard worker` processes
(the installed console command, as deployed); and a webhook receiver that checks every
Standard Webhooks signature and records what arrived when, and what it answered.

Every process is a child of the test process, started from the thread that runs the tests,
and is killed with it should the test process die without cleaning up (PR_SET_PDEATHSIG,
which fires when the *thread* that started the child ends: never start one from a helper
thread). Nothing here skips: whatever cannot start raises, quoting its log.
"""

import contextlib
import ctypes
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import orjson
import psycopg
import redis
from standardwebhooks import Webhook as Verifier

from sprintboard.db import Database
from sprintboard.migrations import migrate
from tests.factories import make_org_admin
from tests.servers import free_port

SPRINTBOARD = Path(sys.executable).with_name("sprintboard")
PG_BIN_ENV = "SPRINTBOARD_TEST_PG_BIN"
"""Where `initdb` and `postgres` are, if not in the newest /usr/lib/postgresql/*/bin."""


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        time.sleep(0.05)


_LIBC = ctypes.CDLL(None, use_errno=True)
"""Looked up here, not in the child: between fork and exec a child of a process with threads
must not take locks (the dynamic loader's among them)."""


def _die_with_parent(signum: int) -> Callable[[], None]:
    def set_parent_death_signal() -> None:  # (in the child, after any change of user)
        _LIBC.prctl(1, signum)  # PR_SET_PDEATHSIG

    return set_parent_death_signal


def _tail(path: Path, size: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-size:]
    except OSError:
        return "(no log)"


class Child:
    """One process of the topology: started, killed and started again under one name, with
    its standard output and error appended to one log file."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        log: Path,
        *,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        user: str | None = None,
        death_signal: int = signal.SIGKILL,
    ) -> None:
        self.name = name
        self.argv = argv
        self.log = log
        self.env = env
        self.cwd = cwd
        self.user = user
        self.death_signal = death_signal
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.log_offset = 0
        """Where the log of the latest start begins."""

    def start(self) -> None:
        assert not self.alive, f"{self.name} is already running"
        with self.log.open("ab") as log:
            self.log_offset = log.tell()
            log.write(f"--- start {self.starts + 1}: {' '.join(self.argv)}\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                cwd=self.cwd,
                user=self.user,
                group=self.user,
                extra_groups=[] if self.user else None,
                preexec_fn=_die_with_parent(self.death_signal),
            )
        self.starts += 1

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def check_alive(self) -> None:
        if not self.alive:
            code = self.process.returncode if self.process else None
            raise RuntimeError(f"{self.name} exited with {code}:\n{self.tail()}")

    def send(self, signum: int) -> None:
        assert self.process is not None
        self.process.send_signal(signum)

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 20) -> None:
        """Stop with `signum`; SIGKILL if it does not end within `timeout` seconds."""
        if self.process is None:
            return
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signum)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        else:
            self.process.wait()

    def tail(self) -> str:
        return _tail(self.log)


def _postgres_bin() -> Path:
    if configured := os.environ.get(PG_BIN_ENV):
        return Path(configured)
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/postgres"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if not found:
        raise RuntimeError(
            f"no PostgreSQL server binaries in /usr/lib/postgresql; set {PG_BIN_ENV}"
        )
    return found[-1].parent


class Postgres:
    """A PostgreSQL cluster of its own: `postgres` in the foreground as a child process.

    PostgreSQL refuses to run as root, so as root (CI) it runs as the `postgres` user, in
    directories that user owns. Durability settings are off for speed: the tests restart
    the server cleanly and never crash the machine.
    """

    def __init__(self, root: Path) -> None:
        self.bin = _postgres_bin()
        self.data = root / "pgdata"
        self.sockets = root / "pgsock"
        self.port = free_port()
        self.user = "postgres" if os.geteuid() == 0 else None
        self.child = Child(
            "postgres",
            [
                str(self.bin / "postgres"),
                *("-D", str(self.data), "-p", str(self.port), "-k", str(self.sockets)),
                *("-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"),
                *("-c", "fsync=off", "-c", "synchronous_commit=off"),
                *("-c", "full_page_writes=off", "-c", "log_min_messages=warning"),
            ],
            root / "postgres.log",
            cwd=root,
            user=self.user,
            death_signal=signal.SIGQUIT,  # (immediate shutdown: the backends go with it)
        )

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def init(self) -> None:
        for path in (self.data, self.sockets):
            path.mkdir(mode=0o700)
            if self.user:
                entry = pwd.getpwnam(self.user)
                os.chown(path, entry.pw_uid, entry.pw_gid)
        initdb = subprocess.run(
            [
                *(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust"),
                *("-E", "UTF8", "--locale", "C", "--no-sync", "--no-instructions"),
            ],
            user=self.user,
            group=self.user,
            extra_groups=[] if self.user else None,
            capture_output=True,
            timeout=120,
            check=False,
        )
        if initdb.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{initdb.stdout.decode()}{initdb.stderr.decode()}")

    def start(self, timeout: float = 60) -> None:
        self.child.start()
        wait_until(self._answers, timeout, "PostgreSQL accepting connections")

    def stop(self) -> None:
        """A fast shutdown (SIGINT): clients are disconnected, the data stays."""
        self.child.stop(signal.SIGINT, timeout=30)

    def create_database(self, name: str) -> None:
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=5) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')

    def _answers(self) -> bool:
        self.child.check_alive()
        try:
            with psycopg.connect(self.url(), connect_timeout=2) as connection:
                connection.execute("SELECT 1")
        except psycopg.OperationalError:
            return False
        return True


class Redis:
    """A redis-server of its own, keeping nothing on disk (a restart starts empty)."""

    def __init__(self, root: Path) -> None:
        self.port = free_port()
        executable = shutil.which("redis-server")
        if executable is None:
            raise RuntimeError("redis-server is not installed")
        self.child = Child(
            "redis",
            [
                *(executable, "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(root)),
            ],
            root / "redis.log",
            cwd=root,
        )
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 30) -> None:
        self.child.start()
        wait_until(self._answers, timeout, "Redis answering PING")

    def stop(self) -> None:
        self.child.stop(signal.SIGTERM)

    def client(self) -> "redis.Redis":
        return redis.Redis.from_url(self.url, socket_timeout=2, socket_connect_timeout=2)

    def _answers(self) -> bool:
        self.child.check_alive()
        client = self.client()
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()


class Sprintboard(Child):
    """`sprintboard serve` on a fixed port (kept across restarts) or `sprintboard worker`."""

    def __init__(self, name: str, args: list[str], root: Path, env: dict[str, str]) -> None:
        workdir = root / name  # (its own working directory: no stray .env is read)
        workdir.mkdir()
        self.port = free_port() if args[0] == "serve" else None
        if self.port is not None:
            args = [*args, "--host", "127.0.0.1", "--port", str(self.port)]
        super().__init__(
            name, [str(SPRINTBOARD), *args], root / f"{name}.log", env=env, cwd=workdir
        )

    @property
    def base_url(self) -> str:
        assert self.port is not None
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float = 180) -> None:
        """Wait until it serves (a worker: delivers). A start is mostly imports: a few
        seconds each, but on a machine shared with other test runs, six starting at once took
        over a minute and a half."""
        wait_until(self._ready, timeout, f"{self.name} ready")

    def _ready(self) -> bool:
        self.check_alive()
        if self.port is None:  # a worker says so once it has migrated and begins delivering
            with self.log.open("rb") as log:
                log.seek(self.log_offset)
                return b"delivering webhook events" in log.read()
        try:
            return httpx.get(f"{self.base_url}/readyz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False


def sprintboard_env(**settings: str) -> dict[str, str]:
    """This process's environment less any SPRINTBOARD_* variable, plus `settings` as
    SPRINTBOARD_* variables (`database_url=...`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPRINTBOARD_")}
    env.update({f"SPRINTBOARD_{name.upper()}": value for name, value in settings.items()})
    return env


def secret_key() -> str:
    return secrets.token_urlsafe(30)  # 40 characters


# --- the webhook receiver ----------------------------------------------------------------


@dataclass
class Arrival:
    """One request the receiver got."""

    webhook_id: str
    path: str
    body: dict[str, Any]
    signed: bool
    """Whether its Standard Webhooks signature checked out with that path's secret."""
    peer_port: int
    received_at: float
    answered_at: float | None = None
    """When the answer was written (None until then, or if writing it failed)."""
    status: int | None = None


@dataclass
class Behaviour:
    """How slowly the receiver answers: the first arrival of every `slow_every`-th new
    webhook-id waits `slow_seconds` (0: never slow)."""

    slow_every: int = 0
    slow_seconds: float = 0.0
    new_ids: int = 0


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


class Receiver:
    """A webhook receiver on 127.0.0.1: each webhook posts to its own path, whose secret is
    registered with `expect`; every request is verified and recorded, and answered 200 (400
    if its signature is wrong)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.arrivals: list[Arrival] = []
        self.secrets: dict[str, str] = {}
        self.behaviour: dict[str, Behaviour] = {}
        self.seen: set[str] = set()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                receiver._handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def expect(self, path: str, secret: str, behaviour: Behaviour | None = None) -> None:
        with self.lock:
            self.secrets[path] = secret
            self.behaviour[path] = behaviour or Behaviour()

    def at(self, path: str) -> list[Arrival]:
        with self.lock:
            return [a for a in self.arrivals if a.path == path]

    def in_flight(self, path: str) -> list[Arrival]:
        with self.lock:
            return [a for a in self.arrivals if a.path == path and a.answered_at is None]

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        body = request.rfile.read(int(request.headers.get("content-length", 0)))
        headers = {k.lower(): v for k, v in request.headers.items()}
        path = request.path
        with self.lock:
            secret = self.secrets.get(path)
            behaviour = self.behaviour.get(path, Behaviour())
        signed = False
        if secret is not None:
            try:
                Verifier(secret).verify(body, headers)
                signed = True
            except Exception:
                signed = False
        webhook_id = headers.get("webhook-id", "")
        arrival = Arrival(
            webhook_id=webhook_id,
            path=path,
            body=orjson.loads(body) if body else {},
            signed=signed,
            peer_port=request.client_address[1],
            received_at=time.monotonic(),
        )
        with self.lock:
            self.arrivals.append(arrival)
            delay = 0.0
            if webhook_id not in self.seen:
                self.seen.add(webhook_id)
                if behaviour.slow_every and behaviour.new_ids % behaviour.slow_every == 0:
                    delay = behaviour.slow_seconds
                behaviour.new_ids += 1
        time.sleep(delay)
        status = 200 if signed else 400
        try:
            request.send_response(status)
            request.send_header("content-length", "0")
            request.end_headers()
            request.wfile.flush()
        except OSError:  # the sender is gone (a killed worker)
            return
        with self.lock:
            arrival.status = status
            arrival.answered_at = time.monotonic()

    def __enter__(self) -> "Receiver":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def pid_of_connection(local_port: int, pids: Iterable[int]) -> int | None:
    """Which of `pids` holds the TCP socket whose local port is `local_port` (Linux /proc):
    the process on the other end of a connection the receiver accepted."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == local_port:
                    inodes.add(fields[9])
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if target.startswith("socket:[") and target[8:-1] in inodes:
                        return pid
    return None


@dataclass
class Topology:
    """What the test runs, by name; `logs()` quotes every process's log for a failure."""

    root: Path
    postgres: Postgres
    redis: Redis
    receiver: Receiver
    admin_key: str
    serves: list[Sprintboard]
    """The two instances taking the mixed load (rate limit out of the way)."""
    limited: list[Sprintboard]
    """A second pair on the same database and Redis, with a small rate limit."""
    workers: list[Sprintboard]
    children: list[Sprintboard] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.children = [*self.serves, *self.limited, *self.workers]

    def revive(self) -> None:
        """Start again whichever sprintboard process is not running, and wait until ready."""
        dead = [c for c in self.children if not c.alive]
        for child in dead:
            if child.process is not None:
                child.process.wait()
            child.start()
        for child in dead:
            child.wait_ready()

    def logs(self, size: int = 3000) -> str:
        return "\n".join(
            f"===== {c.name} (started {c.starts} times) =====\n{_tail(c.log, size)}"
            for c in [self.postgres.child, self.redis.child, *self.children]
        )


@contextlib.contextmanager
def running_topology(*, fast_limit: str, small_limit: str) -> Iterator[Topology]:
    """Start everything (some seconds); on exit, whatever happened, stop every process and
    remove the directory."""
    # Not pytest's tmp_path: that is private to root, and PostgreSQL runs as `postgres`.
    root = Path(tempfile.mkdtemp(prefix="sprintboard-topology-"))
    root.chmod(0o711)  # (the `postgres` user must reach its directories inside)
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, root, ignore_errors=True)
        postgres = Postgres(root)
        postgres.init()
        stack.callback(postgres.stop)
        postgres.start()
        postgres.create_database("sprintboard")
        redis_server = Redis(root)
        stack.callback(redis_server.stop)
        redis_server.start()
        receiver = stack.enter_context(Receiver())

        common = {
            "database_url": postgres.url("sprintboard"),
            "redis_url": redis_server.url,
            "secret_key": secret_key(),
            "webhook_allow_private": "true",
            "log_level": "INFO",
        }
        # The admin's key as `sprintboard create-admin` makes it, made here: one process
        # start less, and its import is the slowest part of starting.
        migrate(common["database_url"])
        database = Database(common["database_url"])
        try:
            admin_key = make_org_admin(database)
        finally:
            database.dispose()

        def serve(name: str, rate_limit: str) -> Sprintboard:
            env = sprintboard_env(**common, deliver_events="false", rate_limit=rate_limit)
            return Sprintboard(name, ["serve"], root, env)

        topology = Topology(
            root,
            postgres,
            redis_server,
            receiver,
            admin_key,
            serves=[serve("serve-1", fast_limit), serve("serve-2", fast_limit)],
            limited=[serve("limited-1", small_limit), serve("limited-2", small_limit)],
            workers=[
                Sprintboard(
                    f"worker-{n}",
                    ["worker", "--poll-interval", "0.2", "--batch-size", "5"],
                    root,
                    sprintboard_env(**common),
                )
                for n in (1, 2)
            ],
        )
        for child in topology.children:
            stack.callback(child.stop)  # (stopped before the servers they use)
            child.start()
        try:
            for child in topology.children:
                child.wait_ready()
        except Exception as error:
            raise RuntimeError(f"{error}\n{topology.logs()}") from error
        yield topology
