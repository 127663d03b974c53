"""A real `sprintboard serve` with an organization admin's key, for the client's commands."""

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sprintboard.client import Client
from sprintboard.db import Database
from sprintboard.migrations import migrate
from tests.conftest import BACKENDS, empty_postgres
from tests.factories import make_org_admin
from tests.servers import running_server

SPRINTBOARD = str(Path(sys.executable).parent / "sprintboard")
SECRET_KEY = "a-test-secret-key-of-at-least-32-characters"


@dataclass(frozen=True)
class Served:
    url: str
    key: str

    def client(self, key: str | None = None) -> Client:
        return Client(self.url, key or self.key)

    def run(self, *args: str, key: str | None = None, stdin: str | None = None) -> "Result":
        """`sprintboard ARGS` as a user runs it, pointed at this server."""
        done = subprocess.run(
            [SPRINTBOARD, *args],
            env={
                **os.environ,
                "SPRINTBOARD_URL": self.url,
                "SPRINTBOARD_API_KEY": key or self.key,
            },
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return Result(done.returncode, done.stdout, done.stderr)


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """One server per module and database: starting one takes seconds, and the tests of a
    module each make a workspace of their own, so they never meet.
    """
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('served') / 'sprintboard.db'}"
        migrate(url)
    else:
        url = request.getfixturevalue("postgres_url")
        empty_postgres(url)
    database = Database(url)
    try:
        key = make_org_admin(database)
    finally:
        database.dispose()
    env = {"SPRINTBOARD_SECRET_KEY": SECRET_KEY, "SPRINTBOARD_RATE_LIMIT": "100000/minute"}
    with running_server(url, env=env) as running:
        yield Served(running.base_url, key)
