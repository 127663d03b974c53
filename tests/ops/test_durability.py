"""Acknowledged writes survive the server being killed (SIGKILL) and restarted under load;
reads recover from a dropped database connection.
"""

import gc
import os
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from starlette.testclient import TestClient

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.db import Database, normalize_url
from sprintboard.sql import raw
from tests.factories import TEST_SECRET_KEY, make_org_admin
from tests.servers import SPRINTBOARD, Server, _wait_ready, free_port

KILLS = 3
LOAD_THREADS = 3
SECONDS_BETWEEN_KILLS = 1.0


class Serve:
    """`sprintboard serve` on a fixed port, which this test kills and restarts."""

    def __init__(self, database_url: str, workdir: Path) -> None:
        self.port = free_port()
        self.database_url = database_url
        self.workdir = workdir
        self.process: subprocess.Popen[bytes] | None = None
        self.server = Server(f"http://127.0.0.1:{self.port}", workdir / "stderr.log")

    def start(self) -> None:
        with self.server.stderr.open("ab") as stderr:
            self.process = subprocess.Popen(
                [str(SPRINTBOARD), "serve", "--port", str(self.port)],
                env={
                    **os.environ,
                    "SPRINTBOARD_DATABASE_URL": self.database_url,
                    "SPRINTBOARD_SECRET_KEY": TEST_SECRET_KEY,
                    "SPRINTBOARD_RATE_LIMIT": "1000000/minute",
                    "SPRINTBOARD_DELIVER_EVENTS": "false",
                    "SPRINTBOARD_LOG_LEVEL": "WARNING",
                },
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                cwd=self.workdir,
            )
        _wait_ready(self.process, self.server, timeout=30)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def test_acknowledged_writes_survive_sigkill(
    database_url: str, database: Database, tmp_path: Path
) -> None:
    key = make_org_admin(database)
    headers = {"Authorization": f"Bearer {key}"}
    serve = Serve(database_url, tmp_path)
    acknowledged: list[dict[str, Any]] = []
    stop = threading.Event()
    try:
        serve.start()
        base = f"{serve.server.base_url}/api/v1"
        with httpx.Client(base_url=base, headers=headers) as client:
            workspace = client.post("/workspaces", json={"name": "Durable"}).json()["data"]
            project = client.post(
                f"/workspaces/{workspace['$id']}/projects", json={"name": "Durable"}
            ).json()["data"]

        def load(worker: int) -> None:
            sent = 0
            with httpx.Client(base_url=base, headers=headers, timeout=5) as client:
                while not stop.is_set():
                    title = f"task {worker}-{sent}"
                    sent += 1
                    try:
                        response = client.post(
                            "/tasks",
                            json={
                                "name": title,
                                "workspaceId": workspace["$id"],
                                "projectId": project["$id"],
                            },
                        )
                    except httpx.TransportError:
                        time.sleep(0.05)  # the server is down: the write was not acknowledged
                        continue
                    if response.status_code == 201:
                        acknowledged.append(response.json()["data"])

        threads = [threading.Thread(target=load, args=(n,)) for n in range(LOAD_THREADS)]
        for thread in threads:
            thread.start()
        for _ in range(KILLS):
            time.sleep(SECONDS_BETWEEN_KILLS)
            serve.kill()
            serve.start()
        time.sleep(SECONDS_BETWEEN_KILLS)
        stop.set()
        for thread in threads:
            thread.join()

        assert len(acknowledged) > 20, f"too little load to mean anything:\n{serve.server.log()}"
        with httpx.Client(base_url=base, headers=headers) as client:
            listed = client.get(
                "/tasks", params={"workspaceId": workspace["$id"], "limit": 500}
            ).json()["data"]
            stored = {task["$id"]: task for task in listed["documents"]}
            offset = 500
            while offset < listed["total"]:
                page = client.get(
                    "/tasks",
                    params={"workspaceId": workspace["$id"], "limit": 500, "offset": offset},
                ).json()["data"]
                stored.update({task["$id"]: task for task in page["documents"]})
                offset += 500
    finally:
        stop.set()
        serve.stop()

    missing = [task["key"] for task in acknowledged if task["$id"] not in stored]
    assert not missing, f"acknowledged but lost: {missing}"
    for task in acknowledged:
        assert stored[task["$id"]]["title"] == task["title"]
        assert stored[task["$id"]]["key"] == task["key"]
    keys = [task["key"] for task in stored.values()]
    assert len(keys) == len(set(keys)), "a work item key was handed out twice"
    if database.dialect == "sqlite":
        path = normalize_url(database_url).database
        assert path is not None
        with sqlite3.connect(path) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.postgresql_only
def test_reads_recover_after_the_server_drops_their_connection(database: Database) -> None:
    """The connection kept for plain-SQL reads is replaced once it is found broken, and the
    statement that found it runs again on the new one: no read fails for it (contract §14).
    """
    reads = raw(database.session(write=False))
    assert reads is raw(database.session(write=False))  # one kept connection per thread
    (pid,) = reads.row("SELECT pg_backend_pid()") or ()
    with database.engine.connect() as other:
        other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    assert reads.row("SELECT 1") == (1,)
    (new_pid,) = reads.row("SELECT pg_backend_pid()") or ()
    assert new_pid != pid
    assert raw(database.session(write=False)).row("SELECT 1") == (1,)


def test_a_thread_per_request_does_not_use_up_the_pool(database: Database) -> None:
    """Each thread keeps one connection for its reads and gives it back when it ends: a
    client that runs every request on a new thread (a TestClient used without `with`) can
    send far more requests than the pool holds.
    """
    key = make_org_admin(database)
    settings = Settings(database_url=database.url, deliver_events=False, secret_key=TEST_SECRET_KEY)
    app = create_app(settings, database=database)
    client = TestClient(app, base_url="http://testserver")
    headers = {"Authorization": f"Bearer {key}"}
    for _ in range(45):  # the pool holds 15 connections on SQLite, 30 on PostgreSQL
        assert client.get("/api/v1/me", headers=headers).status_code == 200
    gc.collect()
    assert database.engine.pool.checkedout() <= 1  # type: ignore[attr-defined]


@pytest.mark.sqlite_only
def test_a_write_session_holds_the_sqlite_write_lock_from_its_start(database: Database) -> None:
    """`BEGIN IMMEDIATE` when a write session opens: no two writers can both read and then
    deadlock on upgrading to write. A read session takes no lock.
    """
    path = normalize_url(database.url).database
    assert path is not None
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        reader = database.session(write=False)
        raw(reader).row("SELECT 1")
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        reader.close()
        writer = database.session(write=True)
        try:
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
        finally:
            writer.rollback()
            writer.close()
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
    finally:
        other.close()
