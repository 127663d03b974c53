"""The `sprintboard` command, run as a user runs it: a subprocess with the environment set."""

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from sqlalchemy import create_engine, inspect

from tests.factories import TEST_SECRET_KEY, Api

SPRINTBOARD = str(Path(sys.executable).parent / "sprintboard")


def run(database_url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`sprintboard ARGS` with this database, the tests' server key (unless `env` says
    otherwise), and any other SPRINTBOARD_* variables."""
    return sprintboard(
        *args,
        **{
            "SPRINTBOARD_DATABASE_URL": database_url,
            "SPRINTBOARD_SECRET_KEY": TEST_SECRET_KEY,
            **env,
        },
    )


def sprintboard(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SPRINTBOARD, *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
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
        result = sprintboard(command, "--help")
        assert result.returncode == 0
        assert f"usage: sprintboard {command}" in result.stdout
    serve_help = sprintboard("serve", "--help").stdout
    for option in ("--host", "--port", "--workers"):
        assert option in serve_help


def test_bad_configuration_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """A value the service could not use is named, in one line, and nothing starts: an
    unparsable rate limit once let `serve` start and answer every request with a bare 500."""
    url = f"sqlite:///{tmp_path / 'never.db'}"
    for name, value in (
        ("SPRINTBOARD_RATE_LIMIT", "banana"),
        ("SPRINTBOARD_REDIS_URL", "banana"),
        ("SPRINTBOARD_LOG_LEVEL", "LOUD"),
        ("SPRINTBOARD_DATABASE_URL", "mysql://localhost/db"),
    ):
        result = run(url, "serve", "--port", "0", **{name: value})
        assert result.returncode == 2, (name, result.stderr)
        assert result.stderr.startswith(f"sprintboard: {name}: "), result.stderr
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "never.db").exists()
    # An empty value is no value: an env file's `SPRINTBOARD_REDIS_URL=` means "no Redis".
    assert run(url, "migrate", SPRINTBOARD_REDIS_URL="").returncode == 0


def test_an_unusable_database_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    for url in (f"sqlite:///{tmp_path / 'no' / 'such' / 'dir.db'}", "postgresql://u@127.0.0.1:1/x"):
        result = run(url, "migrate")
        assert result.returncode == 1, result.stderr
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith("sprintboard: cannot use the database: "), result.stderr
        assert "Traceback" not in result.stderr


def test_create_admin_checks_the_name_as_the_api_does(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'admins.db'}"
    for name in ("   ", "n" * 256):
        result = run(url, "create-admin", "--name", name, "--email", "a@example.com")
        assert result.returncode == 1, result.stderr
        assert result.stderr.strip().splitlines()[-1].startswith("--name: ")
    result = run(url, "create-admin", "--name", "  Ada  ", "--email", " ada@example.com ")
    assert result.returncode == 0, result.stderr
    assert "organization admin ada@example.com " in result.stderr


def test_serve_refuses_impossible_ports_and_worker_counts() -> None:
    for flag, value in (("--port", "99999"), ("--workers", "0")):
        result = sprintboard("serve", flag, value)
        assert result.returncode == 2
        assert f"argument {flag}: {value} is not between" in result.stderr


def test_version_is_one_line() -> None:
    result = sprintboard("--version")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"sprintboard \d+\.\d+\.\d+\S*\n", result.stdout)


def test_one_version_everywhere(api: Api) -> None:
    """The command, the OpenAPI document and the installed package say the same version (the
    document once said 1.0.0 while the command said 0.1.0)."""
    from importlib.metadata import version

    command = sprintboard("--version").stdout.split()[-1]
    document = api.get("/api/v1/openapi.json").json()["info"]["version"]
    assert command == document == version("sprintboard")


def test_a_port_in_use_is_one_line_and_status_1(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run(f"sqlite:///{tmp_path / 'x.db'}", "serve", "--port", str(port))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"127.0.0.1:{port}" in lines[0]
    assert "in use" in lines[0]


def test_log_format_text_or_json_and_no_alembic_chatter(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'logs.db'}"
    as_json = run(url, "migrate", SPRINTBOARD_LOG_FORMAT="json")  # (not a terminal: JSON anyway)
    records = [json.loads(line) for line in as_json.stderr.splitlines() if line.startswith("{")]
    assert [r for r in records if "Running upgrade" in r["message"]]
    as_text = run(url, "migrate", SPRINTBOARD_LOG_FORMAT="text")
    assert as_text.returncode == 0, as_text.stderr
    assert as_text.stderr == "database is up to date\n"  # nothing to do: no Alembic lines
    fresh = run(f"sqlite:///{tmp_path / 'text.db'}", "migrate", SPRINTBOARD_LOG_FORMAT="text")
    upgrades = [line for line in fresh.stderr.splitlines() if "Running upgrade" in line]
    assert upgrades
    assert not upgrades[0].startswith("{")
    assert " INFO " in upgrades[0]
    assert run(url, "migrate", SPRINTBOARD_LOG_FORMAT="xml").returncode == 2
