"""Fresh databases for one run: a SQLite file under bench/.work/, or a PostgreSQL database
`bench_<random>` on 127.0.0.1:5432, dropped afterwards.
"""

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

WORK = Path(__file__).resolve().parent / ".work"
POSTGRES_ADMIN_URL = os.environ.get(
    "SPRINTBOARD_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


@contextmanager
def fresh_database(kind: str) -> Iterator[str]:
    """The URL of a new, empty database of `kind` (sqlite or postgresql), removed on exit."""
    name = f"bench_{secrets.token_hex(6)}"
    if kind == "sqlite":
        WORK.mkdir(parents=True, exist_ok=True)
        path = WORK / f"{name}.db"
        try:
            yield f"sqlite:///{path}"
        finally:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        return
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        url = make_url(POSTGRES_ADMIN_URL).set(database=name)
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
