"""The `sprintboard` command, run as a user runs it: a subprocess with the environment set."""

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import create_engine, inspect

from tests.factories import Api

SPRINTBOARD = str(Path(sys.executable).parent / "sprintboard")


def run(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SPRINTBOARD_DATABASE_URL": database_url}
    return subprocess.run(
        [SPRINTBOARD, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_create_admin_migrates_an_empty_database_and_prints_the_key_last(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    result = run(url, "create-admin", "--name", "Ada", "--email", "ada@example.com")
    assert result.returncode == 0, result.stderr
    key = result.stdout.strip().splitlines()[-1]
    assert key.startswith("sb_")
    assert len(key) >= 3 + 27  # at least 160 random bits in URL-safe base64
    assert key not in result.stderr
    tables = inspect(create_engine(url)).get_table_names()
    assert {"users", "api_keys", "work_items", "alembic_version"} <= set(tables)
    again = run(url, "migrate")
    assert again.returncode == 0, again.stderr


def test_create_admin_keys_authenticate_and_a_second_run_reuses_the_admin(
    database_url: str, api: Api
) -> None:
    first = run(database_url, "create-admin", "--name", "Grace", "--email", "grace@example.com")
    second = run(database_url, "create-admin", "--email", "GRACE@example.com")
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    keys = [result.stdout.strip().splitlines()[-1] for result in (first, second)]
    assert keys[0] != keys[1]
    identities = [api.as_(key).ok("GET", "/me") for key in keys]
    assert identities[0]["$id"] == identities[1]["$id"]
    assert identities[0]["name"] == "Grace"
    assert identities[0]["isOrgAdmin"] is True
    assert api.as_(keys[0] + "x").get("/me").status_code == 401


def test_every_command_explains_itself() -> None:
    for command in ("serve", "migrate", "create-admin"):
        result = subprocess.run(
            [SPRINTBOARD, command, "--help"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert result.returncode == 0
        assert f"usage: sprintboard {command}" in result.stdout
    serve_help = subprocess.run(
        [SPRINTBOARD, "serve", "--help"], capture_output=True, text=True, timeout=30, check=False
    ).stdout
    for option in ("--host", "--port", "--workers"):
        assert option in serve_help
