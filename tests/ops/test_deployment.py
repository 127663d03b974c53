"""The README's deployment recipe, run as written (contract §23).

The blocks of README.md whose first line names a file (`# /etc/sprintboard/sprintboard.env`,
the two systemd units, the nginx site) are read from the README itself, so the recipe and
this test cannot drift apart. The processes are started as systemd would: each unit's
`ExecStartPre` and `ExecStart`, with the environment file's variables and nothing of ours.
Only what names the machine changes: the database URL (a new PostgreSQL database), the Redis
URL (a redis-server of the test's own), the public URL, the ports (free ones), and the
installation path (this checkout's `.venv`). nginx runs the site as written, wrapped in the
few top-level lines its own `nginx.conf` would give.
"""

import re
import shlex
import shutil
import signal
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from sprintboard.config import Settings
from tests.conftest import POSTGRES_ADMIN_URL
from tests.servers import free_port
from tests.topology import SPRINTBOARD, Child, Redis, wait_until

README = Path(__file__).parents[2] / "README.md"
INSTALLED = "/opt/sprintboard/.venv/bin/sprintboard"
ENV_FILE = "/etc/sprintboard/sprintboard.env"
UNITS = (
    "/etc/systemd/system/sprintboard.service",
    "/etc/systemd/system/sprintboard-worker.service",
)
SITE = "/etc/nginx/conf.d/sprintboard.conf"


def recipe_files() -> dict[str, str]:
    """The README's code blocks that name a file in their first line, by that file."""
    found: dict[str, str] = {}
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", README.read_text(), re.M | re.S):
        first, _, rest = block.partition("\n")
        if first.startswith("# /"):
            found[first[2:].strip()] = rest
    return found


def environment_file(body: str) -> dict[str, str]:
    """systemd's EnvironmentFile: `NAME=value` lines, `#` comments."""
    pairs = (line.split("=", 1) for line in body.splitlines() if line and line[0] != "#")
    return {name.strip(): value.strip() for name, value in pairs}


def service(body: str) -> dict[str, str]:
    """The `[Service]` section of a unit."""
    section = body.split("[Service]", 1)[1].split("\n[", 1)[0]
    pairs = (line.split("=", 1) for line in section.splitlines() if "=" in line)
    return {name.strip(): value.strip() for name, value in pairs}


def command(line: str, port: int) -> list[str]:
    """A unit's command line, run from this checkout and on a free port."""
    argv = shlex.split(line)
    assert argv[0] == INSTALLED, line
    argv[0] = str(SPRINTBOARD)
    if "--port" in argv:
        argv[argv.index("--port") + 1] = str(port)
    return argv


@pytest.fixture
def new_postgres() -> Iterator[str]:
    name = f"sb_deploy_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_ADMIN_URL).set(drivername="postgresql", database=name)
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def test_the_readme_names_only_settings_that_exist() -> None:
    files = recipe_files()
    assert set(files) >= {ENV_FILE, *UNITS, SITE}, sorted(files)
    variables = environment_file(files[ENV_FILE])
    for name in variables:
        assert name.startswith("SPRINTBOARD_"), name
        assert name.removeprefix("SPRINTBOARD_").lower() in Settings.model_fields, name
    for required in ("DATABASE_URL", "SECRET_KEY", "REDIS_URL", "RATE_LIMIT_PREFIX"):
        assert f"SPRINTBOARD_{required}" in variables
    assert len(variables["SPRINTBOARD_SECRET_KEY"]) >= 32
    for unit in UNITS:
        assert service(files[unit])["EnvironmentFile"] == ENV_FILE


def test_the_deployment_recipe_runs_as_written(new_postgres: str, tmp_path: Path) -> None:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(nginx).exists(), "nginx is not installed (.ci/run installs nginx-light)"
    files = recipe_files()
    serve_port, proxy_port = free_port(), free_port()
    redis = Redis(tmp_path)
    redis.start()
    environment = {
        **environment_file(files[ENV_FILE]),
        "SPRINTBOARD_DATABASE_URL": new_postgres,
        "SPRINTBOARD_REDIS_URL": redis.url,
        "SPRINTBOARD_PUBLIC_URL": f"http://127.0.0.1:{proxy_port}",
    }
    # What systemd gives a service besides its EnvironmentFile.
    process_env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", **environment}
    home = tmp_path / "opt-sprintboard"  # (WorkingDirectory)
    home.mkdir()

    serve_unit, worker_unit = (service(files[unit]) for unit in UNITS)
    children: list[Child] = []
    try:
        migrate = Child(
            "migrate",
            command(serve_unit["ExecStartPre"], serve_port),
            tmp_path / "migrate.log",
            env=process_env,
            cwd=home,
        )
        migrate.start()
        assert migrate.process is not None
        assert migrate.process.wait(180) == 0, migrate.tail()

        for name, unit in (("serve", serve_unit), ("worker", worker_unit)):
            child = Child(
                name,
                command(unit["ExecStart"], serve_port),
                tmp_path / f"{name}.log",
                env=process_env,
                cwd=home,
            )
            child.start()
            children.append(child)
        proxy = start_nginx(nginx, files[SITE], serve_port, proxy_port, tmp_path)
        children.append(proxy)
        base = f"http://127.0.0.1:{proxy_port}"

        def serving() -> bool:
            for child in children:
                child.check_alive()
            try:
                return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
            except httpx.TransportError:
                return False

        try:
            # (Starting is mostly imports: on a machine busy with other test runs, minutes.)
            wait_until(serving, 300, "serve answering /healthz through nginx")
        except TimeoutError as error:
            logs = "\n".join(f"--- {c.name}:\n{c.tail()}" for c in children)
            raise AssertionError(f"{error}\n{logs}") from None
        assert httpx.get(f"{base}/readyz", timeout=10).status_code == 200
        worker = children[1]
        wait_until(lambda: b"delivering webhook events" in worker.log.read_bytes(), 180, "worker")

        made = Child(
            "create-admin",
            [str(SPRINTBOARD), "create-admin", "--email", "ops@example.com"],
            tmp_path / "create-admin.log",
            env=process_env,
            cwd=home,
        )
        made.start()
        assert made.process is not None
        assert made.process.wait(120) == 0, made.tail()
        key = made.log.read_text().strip().splitlines()[-1]
        streamed_through_proxy(base, key)

        serve = children[0]
        timeout = float(serve_unit["TimeoutStopSec"])
        for child in children[:2]:
            child.send(getattr(signal, serve_unit["KillSignal"]))
        for child in children[:2]:
            assert child.process is not None
            assert child.process.wait(timeout) == 0, child.tail()
        assert "Traceback" not in serve.log.read_text()
    finally:
        for child in children:
            child.stop(signal.SIGTERM if child.name != "nginx" else signal.SIGQUIT)
        redis.stop()


def start_nginx(nginx: str, site: str, serve_port: int, proxy_port: int, root: Path) -> Child:
    """nginx serving the README's site, on free ports, with its files under `root`."""
    site = site.replace("127.0.0.1:8000", f"127.0.0.1:{serve_port}")
    site = re.sub(r"listen 80;", f"listen 127.0.0.1:{proxy_port};", site)
    prefix = root / "nginx"
    prefix.mkdir()
    (prefix / "sprintboard.conf").write_text(site)
    (prefix / "nginx.conf").write_text(
        f"daemon off;\nworker_processes 1;\npid {prefix}/nginx.pid;\n"
        f"error_log {prefix}/error.log;\nevents {{}}\n"
        f"http {{\n  access_log {prefix}/access.log;\n"
        f"  client_body_temp_path {prefix}/body;\n  proxy_temp_path {prefix}/proxy;\n"
        f"  include {prefix}/sprintboard.conf;\n}}\n"
    )
    child = Child(
        "nginx",
        [nginx, "-p", str(prefix), "-c", str(prefix / "nginx.conf")],
        root / "nginx.log",
    )
    child.start()
    return child


def streamed_through_proxy(base: str, key: str) -> None:
    """A change reaches an event stream opened through nginx while it is open (unbuffered)."""
    auth = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=f"{base}/api/v1", headers=auth, timeout=30) as api:
        workspace = api.post("/workspaces", json={"name": "Deployed"}).json()["data"]["$id"]
        project = api.post(
            f"/workspaces/{workspace}/projects", json={"name": "Ops", "key": "OPS"}
        ).json()["data"]["$id"]
        connected, seen = threading.Event(), threading.Event()

        def listen() -> None:
            with api.stream("GET", "/events/stream", params={"workspaceId": workspace}) as stream:
                connected.set()
                for line in stream.iter_lines():
                    if line == "event: task.created":
                        seen.set()
                        return

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        assert connected.wait(15), "the stream did not open through nginx"
        created = api.post(
            "/tasks", json={"name": "Through nginx", "workspaceId": workspace, "projectId": project}
        )
        assert created.status_code == 201, created.text
        assert seen.wait(15), "the stream's event did not come through nginx"
