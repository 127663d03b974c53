"""`sprintboard backup` and `restore` (contract §23), run as a user runs them: subprocesses
against a real `serve`, on SQLite and on PostgreSQL."""

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, func, inspect, select, table, text
from sqlalchemy.engine import make_url

from sprintboard.db import Database
from sprintboard.models import WorkItem
from tests.agent_servers import SECRET_KEY, Served
from tests.conftest import POSTGRES_ADMIN_URL
from tests.factories import make_org_admin
from tests.servers import running_server

SPRINTBOARD = str(Path(sys.executable).parent / "sprintboard")
SERVE_ENV = {"SPRINTBOARD_SECRET_KEY": SECRET_KEY, "SPRINTBOARD_RATE_LIMIT": "100000/minute"}


def sprintboard(database_url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SPRINTBOARD, *args],
        env={
            **os.environ,
            "SPRINTBOARD_DATABASE_URL": database_url,
            "SPRINTBOARD_SECRET_KEY": SECRET_KEY,
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@contextmanager
def empty_database(like: str, tmp_path: Path, name: str) -> Iterator[str]:
    """A database of the same kind as `like` with nothing in it: a SQLite file not yet made,
    or a new PostgreSQL database (dropped afterwards)."""
    if make_url(like).get_backend_name() == "sqlite":
        yield f"sqlite:///{tmp_path / f'{name}.db'}"
        return
    database = f"sb_restore_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{database}"'))
    try:
        yield make_url(like).set(database=database).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        admin.dispose()


def contents(database_url: str) -> dict[str, int]:
    """Every table of the database with its number of rows."""
    database = Database(database_url)
    try:
        with database.engine.connect() as connection:
            return {
                name: connection.scalar(select(func.count()).select_from(table(name))) or 0
                for name in inspect(connection).get_table_names()
            }
    finally:
        database.dispose()


def export(served: Served, workspace_id: str) -> dict[str, Any]:
    result = served.run("export", "--workspace", workspace_id)
    assert result.code == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    document.pop("exportedAt")  # (when it was taken: the only field that may differ)
    return document


class Writer(threading.Thread):
    """Creates work items one after another through the API until stopped."""

    def __init__(self, served: Served, workspace_id: str, project_id: str) -> None:
        super().__init__(daemon=True)
        self.served, self.workspace_id, self.project_id = served, workspace_id, project_id
        self.titles: list[str] = []
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        deadline = time.monotonic() + 60
        try:
            with self.served.client() as api:
                while not self.stop.is_set() and time.monotonic() < deadline:
                    title = f"Written {len(self.titles)}"
                    api.create_task(
                        workspaceId=self.workspace_id, projectId=self.project_id, title=title
                    )
                    self.titles.append(title)
        except BaseException as error:
            self.error = error

    def wait_for(self, count: int) -> None:
        deadline = time.monotonic() + 30
        while len(self.titles) < count and self.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(self.titles) >= count, self.error


def test_a_copy_taken_under_writes_restores_whole_and_exports_as_the_original(
    database_url: str, tmp_path: Path
) -> None:
    database = Database(database_url)
    try:
        key = make_org_admin(database)
    finally:
        database.dispose()
    with running_server(database_url, env=SERVE_ENV) as running:
        served = Served(running.base_url, key)
        with served.client() as api:
            workspace = api.create_workspace("Backed up")["$id"]
            project = api.create_project(workspace, name="Ops", key="OPS")["$id"]
            w = {"workspaceId": workspace, "projectId": project}
            sprint = api.create_sprint(**w, name="Now", goal="Keep a copy")
            first = api.create_task(**w, title="First", sprintId=sprint["$id"], storyPoints=3)
            api.add_comment(first["$id"], "Before the backup")
            api.update_sprint(sprint["$id"], status="ACTIVE")

        writer = Writer(served, workspace, project)
        writer.start()
        try:
            writer.wait_for(5)
            written_before = len(writer.titles)
            under_writes = sprintboard(database_url, "backup", str(tmp_path / "busy.copy"))
            written_after = len(writer.titles)
            writer.wait_for(written_after + 3)  # (the service kept taking writes)
        finally:
            writer.stop.set()
            writer.join()
        assert writer.error is None, writer.error
        assert under_writes.returncode == 0, under_writes.stderr
        assert "backup written: " in under_writes.stderr
        assert "server key is not in the copy" in under_writes.stderr

        original = export(served, workspace)
        idle = sprintboard(database_url, "backup", str(tmp_path / "idle.copy"))
        assert idle.returncode == 0, idle.stderr

    with empty_database(database_url, tmp_path, "restored") as target:
        restored = sprintboard(target, "restore", str(tmp_path / "idle.copy"))
        assert restored.returncode == 0, restored.stderr
        assert "server key is not in the copy" in restored.stderr
        with running_server(target, env=SERVE_ENV) as running:
            assert export(Served(running.base_url, key), workspace) == original

    with empty_database(database_url, tmp_path, "restored-busy") as target:
        restored = sprintboard(target, "restore", str(tmp_path / "busy.copy"))
        assert restored.returncode == 0, restored.stderr
        titles = items_in(target)
    # One moment of the database: the items written before it, in order, none half-written.
    assert titles[0] == "First"
    written = titles[1:]
    assert written_before <= len(written) <= written_after + 1
    assert written == writer.titles[: len(written)]


def items_in(database_url: str) -> list[str]:
    """The titles of the database's work items in the order they were made."""
    database = Database(database_url)
    try:
        with database.engine.connect() as connection:
            return list(connection.scalars(select(WorkItem.title).order_by(WorkItem.number)))
    finally:
        database.dispose()


def test_a_database_that_holds_anything_is_refused_and_left_as_it_was(
    database_url: str, tmp_path: Path
) -> None:
    database = Database(database_url)
    try:
        make_org_admin(database)
    finally:
        database.dispose()
    copy = tmp_path / "full.copy"
    assert sprintboard(database_url, "backup", str(copy)).returncode == 0
    before = contents(database_url)
    assert before["users"] == 1
    refused = sprintboard(database_url, "restore", str(copy))
    assert refused.returncode == 2, refused.stderr
    assert "nothing changed" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert contents(database_url) == before

    # "Holds anything" means any table, even one without rows that is not ours.
    with empty_database(database_url, tmp_path, "one-table") as target:
        other = Database(target)
        with other.engine.begin() as connection:
            connection.execute(text("CREATE TABLE notes (body TEXT)"))
        other.dispose()
        refused = sprintboard(target, "restore", str(copy))
        assert refused.returncode == 2, refused.stderr
        assert contents(target) == {"notes": 0}


def test_a_copy_of_the_other_kind_is_refused(tmp_path: Path) -> None:
    sqlite_url = f"sqlite:///{tmp_path / 'target.db'}"
    dump = tmp_path / "pg.copy"
    dump.write_bytes(b"PGDMP\x01\x0f\x00")
    refused = sprintboard(sqlite_url, "restore", str(dump))
    assert refused.returncode == 2
    assert "is a PostgreSQL backup" in refused.stderr
    assert not (tmp_path / "target.db").exists()


def test_missing_postgresql_programs_are_named(tmp_path: Path) -> None:
    """Only PATH is searched: without the client programs on it, each command says which
    one it needs; SQLite needs none."""
    no_programs = str(tmp_path / "empty-bin")
    os.mkdir(no_programs)
    url = "postgresql://postgres@127.0.0.1:5432/postgres"
    backup = sprintboard(url, "backup", str(tmp_path / "x.copy"), PATH=no_programs)
    assert backup.returncode == 1
    assert (
        backup.stderr.strip()
        .splitlines()[-1]
        .startswith("sprintboard: pg_dump was not found on PATH")
    ), backup.stderr
    assert not (tmp_path / "x.copy").exists()
    assert list(tmp_path.iterdir()) == [tmp_path / "empty-bin"]  # (no draft left behind)

    dump = tmp_path / "pg.copy"
    dump.write_bytes(b"PGDMP\x01\x0f\x00")
    restore = sprintboard(url, "restore", str(dump), PATH=no_programs)
    assert restore.returncode == 1
    assert "pg_restore was not found on PATH" in restore.stderr

    sqlite_url = f"sqlite:///{tmp_path / 'small.db'}"
    assert sprintboard(sqlite_url, "migrate").returncode == 0
    backup = sprintboard(sqlite_url, "backup", str(tmp_path / "small.copy"), PATH=no_programs)
    assert backup.returncode == 0, backup.stderr
    assert (tmp_path / "small.copy").read_bytes().startswith(b"SQLite format 3\x00")


def test_backup_and_restore_explain_themselves() -> None:
    for command in ("backup", "restore"):
        result = subprocess.run(
            [SPRINTBOARD, command, "--help"], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0
        words = " ".join(result.stdout.split())
        assert f"usage: sprintboard {command} [-h] FILE" in words
        assert "server key" in words
        assert "2 refused" in words
