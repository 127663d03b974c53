"""Every test that touches storage runs on SQLite and on PostgreSQL.

SQLite: a fresh file per test, copied from a migrated template. PostgreSQL: one migrated
database per test process (so parallel runs never meet), emptied before each test. PostgreSQL
is never skipped: if it cannot be reached, its tests fail.
"""

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.db import Database
from sprintboard.migrations import migrate
from sprintboard.models import Base
from sprintboard.wiring import wire
from tests.factories import TEST_SECRET_KEY, Api, make_org_admin

POSTGRES_ADMIN_URL = os.environ.get(
    "SPRINTBOARD_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
BACKENDS = ["sqlite", "postgresql"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fuzz-examples",
        type=int,
        default=None,
        help="examples per operation for tests/fuzz (default: a small number; `make fuzz`: 500)",
    )


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.db"
    migrate(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    name = f"sb_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    migrate(url)
    yield url
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, sqlite_template: Path, tmp_path: Path) -> str:
    if request.param == "sqlite":
        if request.node.get_closest_marker("postgresql_only"):
            pytest.skip("this test is about PostgreSQL")
        path = tmp_path / "sprintboard.db"
        shutil.copyfile(sqlite_template, path)
        return f"sqlite:///{path}"
    if request.node.get_closest_marker("sqlite_only"):
        pytest.skip("this test is about SQLite")
    url: str = request.getfixturevalue("postgres_url")
    empty_postgres(url)
    return url


def empty_postgres(url: str) -> None:
    engine = create_engine(url)
    tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    with engine.begin() as connection:
        connection.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    engine.dispose()


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    """(Wired as an app is: a test that records events itself gets their sprint history.)"""
    wire()
    database = Database(database_url)
    yield database
    database.dispose()


@pytest.fixture
def settings(database_url: str) -> Settings:
    """Receivers in tests listen on 127.0.0.1, so the address rule is lifted (one test in
    test_webhook_targets.py shows it holding by default)."""
    return Settings(
        database_url=database_url,
        deliver_events=False,
        gc_freeze=False,
        secret_key=TEST_SECRET_KEY,
        webhook_allow_private=True,
    )


@pytest.fixture
def app(settings: Settings, database: Database):  # type: ignore[no-untyped-def]
    return create_app(settings, database=database)


@pytest.fixture
def api(app) -> Iterator[Api]:  # type: ignore[no-untyped-def]
    """An unauthenticated client of the app; `api.as_(key)` gives an authenticated one."""
    from starlette.testclient import TestClient

    with TestClient(app, base_url="http://testserver") as client:
        yield Api(client)


@pytest.fixture
def admin(api: Api, database: Database) -> Api:
    """A client holding an organization admin's key."""
    return api.as_(make_org_admin(database))
