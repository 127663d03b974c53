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
from sqlalchemy.engine import Engine, make_url

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.db import Database
from sprintboard.migrations import migrate
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
    if url in _emptying:
        _emptying.pop(url).dispose()
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


_emptying: dict[str, Engine] = {}


def empty_postgres(url: str) -> None:
    """Empty every table, as a new database is. TRUNCATE costs each table's files whatever it
    holds (~100 ms for the dozen a test writes, a third of a typical test), and a test's rows
    are few: the tables holding any (found in one statement) are emptied by DELETE, with
    foreign keys and triggers off for the transaction (`session_replication_role`), and the
    sequences start again (a rolled-back insert moves one too)."""
    engine = _emptying.get(url)
    if engine is None:
        # (pinged: a test of outages ends every connection to the database)
        engine = _emptying[url] = create_engine(url, pool_pre_ping=True)
    with engine.begin() as connection:
        names = connection.execute(text(_TABLES)).scalars().all()
        held = " UNION ALL ".join(
            f"SELECT '{name}' WHERE EXISTS (SELECT 1 FROM \"{name}\")" for name in names
        )
        written = connection.execute(text(held)).scalars().all()
        connection.execute(text("SET LOCAL session_replication_role = replica"))
        for name in written:
            connection.execute(text(f'DELETE FROM "{name}"'))
        for sequence in connection.execute(text(_SEQUENCES)).scalars():
            connection.execute(text(f"ALTER SEQUENCE {sequence} RESTART"))


_TABLES = """
SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'alembic_version'
"""
_SEQUENCES = "SELECT oid::regclass::text FROM pg_class WHERE relkind = 'S'"


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
