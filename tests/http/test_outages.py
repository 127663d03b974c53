"""Database outages (contract §14): while the database cannot be reached, 503 UNAVAILABLE with
`Retry-After`, never a 500; a connection that died while idle is replaced without failing the
request that finds it.

The shared PostgreSQL is never restarted here: an app points at a port where nothing
listens, and stale connections are made by ending this test database's own sessions.
"""

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url
from starlette.testclient import TestClient

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.db import Database
from tests.factories import TEST_SECRET_KEY, Api, make_org_admin
from tests.servers import free_port

KEY = "sb_" + "k" * 43


@pytest.fixture(params=["postgresql", "sqlite"])
def unreachable(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestClient]:
    """An app whose database cannot be reached: PostgreSQL on a closed port, or a SQLite
    file in a folder that does not exist."""
    if request.param == "postgresql":
        url = f"postgresql://postgres@127.0.0.1:{free_port()}/nowhere"
    else:
        url = f"sqlite:///{tmp_path / 'gone' / 'sprintboard.db'}"
    database = Database(url)
    settings = Settings(
        database_url=url, deliver_events=False, gc_freeze=False, secret_key=TEST_SECRET_KEY
    )
    with TestClient(create_app(settings, database=database), base_url="http://testserver") as c:
        yield c
    database.dispose()


def _assert_unavailable(response: object) -> None:
    assert getattr(response, "status_code", None) == 503, getattr(response, "text", response)
    error = response.json()["error"]  # type: ignore[attr-defined]
    assert error["code"] == "UNAVAILABLE"
    retry_after = int(response.headers["Retry-After"])  # type: ignore[attr-defined]
    assert retry_after > 0
    assert error["details"]["retryAfter"] == retry_after
    assert response.headers["X-Request-Id"]  # type: ignore[attr-defined]


def test_an_unreachable_database_is_503_with_retry_after(
    unreachable: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    api = Api(unreachable, KEY)
    _assert_unavailable(unreachable.get("/readyz"))
    _assert_unavailable(api.get("/me"))
    _assert_unavailable(api.post("/workspaces", json={"name": "A"}))
    _assert_unavailable(
        api.post("/workspaces", json={"name": "A"}, headers={"Idempotency-Key": "once"})
    )
    assert unreachable.get("/healthz").status_code == 200  # the process itself is up
    assert "unhandled error" not in caplog.text


@pytest.mark.postgresql_only
def test_connections_that_died_while_idle_are_replaced_without_failing_a_request(
    database: Database, api: Api
) -> None:
    admin = api.as_(make_org_admin(database))
    workspace = admin.ok("POST", "/workspaces", {"name": "Before"})
    admin.ok("GET", f"/workspaces/{workspace['$id']}")
    admin.ok("POST", "/workspaces", {"name": "Keyed"})
    url = make_url(database.url).set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as other:
        ended = other.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    assert ended is not None
    assert ended[0] >= 1  # the app's pooled and kept connections
    # A read (kept connection), a write (pooled), and the middleware's own lookups
    # (`Database.call`): each finds its connection dead, and none fails for it.
    assert admin.get(f"/workspaces/{workspace['$id']}").status_code == 200
    assert admin.post("/workspaces", json={"name": "After"}).status_code == 201
    replayable = admin.post(
        "/workspaces", json={"name": "Once"}, headers={"Idempotency-Key": "after-restart"}
    )
    assert replayable.status_code == 201, replayable.text
    assert admin.ok("GET", "/workspaces")["total"] == 4
