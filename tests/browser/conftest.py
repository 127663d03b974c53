"""Browser tests: Debian's Chromium, driven by Playwright, against a real `sprintboard serve`.

One server (SQLite in a temporary folder) serves the whole module run; each test makes its
own workspace, project and items through the API, so no test reads another's data. The
browser is never downloaded (no `playwright install`): it is /usr/bin/chromium, and a
browser that cannot start fails the tests rather than skipping them.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    expect,
    sync_playwright,
)

from tests.servers import Server, running_server

CHROMIUM = os.environ.get("SPRINTBOARD_TEST_CHROMIUM", "/usr/bin/chromium")
AXE_VERSION = "4.14.1"
"""axe-core, installed from npm by the `axe` fixture (MPL-2.0; not shipped in this repository)."""
CACHE = Path(os.environ.get("SPRINTBOARD_TEST_CACHE", Path.home() / ".cache" / "sprintboard-tests"))
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
SPRINTBOARD = Path(sys.executable).with_name("sprintboard")


@dataclass
class Board:
    """A workspace with one project, an ACTIVE sprint holding items, as a test's own data."""

    api: httpx.Client
    workspace: dict[str, Any]
    project: dict[str, Any]
    sprint: dict[str, Any]
    items: dict[str, dict[str, Any]]
    """By title."""

    def item(self, key: str) -> dict[str, Any]:
        data: dict[str, Any] = self.api.get(f"/tasks/{key}").raise_for_status().json()["data"]
        return data

    def create_item(self, title: str, **fields: Any) -> dict[str, Any]:
        body = {"name": title, "workspaceId": self.workspace["$id"]}
        body["projectId"] = self.project["$id"]
        data: dict[str, Any] = (
            self.api.post("/tasks", json={**body, **fields}).raise_for_status().json()["data"]
        )
        return data

    def create_sprint(self, name: str, **fields: Any) -> dict[str, Any]:
        body = {
            "name": name,
            "workspaceId": self.workspace["$id"],
            "projectId": self.project["$id"],
        }
        data: dict[str, Any] = (
            self.api.post("/sprints", json={**body, **fields}).raise_for_status().json()["data"]
        )
        return data


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    folder = tmp_path_factory.mktemp("browser")
    url = f"sqlite:///{folder / 'board.db'}"
    made = subprocess.run(
        [str(SPRINTBOARD), "create-admin", "--name", "Ada Admin", "--email", "ada@example.com"],
        env={**os.environ, "SPRINTBOARD_DATABASE_URL": url},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    key = made.stdout.strip().splitlines()[-1]
    # A generous rate limit: a test run makes a few hundred requests with one key.
    with running_server(url, env={"SPRINTBOARD_RATE_LIMIT": "100000/minute"}) as running:
        yield running, key


@pytest.fixture(scope="package")
def base_url(server: tuple[Server, str]) -> str:
    return server[0].base_url


@pytest.fixture(scope="package")
def admin_key(server: tuple[Server, str]) -> str:
    return server[1]


@pytest.fixture(scope="package")
def api(base_url: str, admin_key: str) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=f"{base_url}/api/v1",
        headers={"Authorization": f"Bearer {admin_key}"},
        timeout=30,
    ) as client:
        yield client


@pytest.fixture(scope="session")
def axe() -> Path:
    """axe-core's browser script (see `axe_script`)."""
    return axe_script()


def axe_script() -> Path:
    """axe-core's browser script, installed with npm into a cache folder on first use. A
    missing npm or a failed install fails the accessibility tests: they never skip."""
    folder = CACHE / f"axe-core-{AXE_VERSION}"
    script = folder / "node_modules" / "axe-core" / "axe.min.js"
    if script.exists():
        return script
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is needed to install axe-core for the accessibility checks")
    CACHE.mkdir(parents=True, exist_ok=True)
    # Installed beside, then renamed: two test processes may install it at once.
    staging = Path(tempfile.mkdtemp(dir=CACHE, prefix="axe-core-"))
    flags = ["--no-audit", "--no-fund", "--ignore-scripts"]
    done = subprocess.run(
        [npm, "install", "--prefix", str(staging), *flags, f"axe-core@{AXE_VERSION}"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.fail(f"npm could not install axe-core {AXE_VERSION}: {done.stderr[-2000:]}")
    try:
        staging.rename(folder)
    except OSError:  # another process got there first: its copy is the same
        shutil.rmtree(staging, ignore_errors=True)
    if not script.exists():
        pytest.fail(f"axe-core {AXE_VERSION} installed without {script.name}")
    return script


def serious_violations(page: Page, axe: Path | None = None) -> list[str]:
    """axe-core's serious and critical findings on the page as it is now (its default rules)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        # (Evaluated, not added as a <script>: the pages' CSP runs only the site's scripts.)
        page.evaluate((axe or axe_script()).read_text() + "\n;undefined")
    results = page.evaluate("async () => (await axe.run(document)).violations")
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in results
        if v["impact"] in ("serious", "critical")
    ]


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    # No skip: a missing or broken Chromium fails every browser test.
    launched = playwright.chromium.launch(
        executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
    )
    yield launched
    launched.close()


@pytest.fixture
def context(browser: Browser, base_url: str) -> Iterator[BrowserContext]:
    made = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 800})
    made.set_default_timeout(10_000)
    # As long as an action may take: a loaded CI machine can take over 5 s (the default) to
    # draw a long board; what a test times itself (the live update) says its own timeout.
    expect.set_options(timeout=10_000)
    yield made
    made.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    made = context.new_page()
    # Script errors are printed, so a failing test's output says what the page said.
    made.on("pageerror", lambda error: print(f"page error: {error}"))
    made.on("console", lambda message: print(f"console {message.type}: {message.text}"))
    return made


@pytest.fixture
def board(api: httpx.Client, request: pytest.FixtureRequest) -> Board:
    """A fresh workspace and project with an ACTIVE sprint of four items (TODO, TODO,
    IN_PROGRESS, DONE) and two items in the backlog."""
    name = request.node.name[:60]
    workspace = api.post("/workspaces", json={"name": name}).raise_for_status().json()["data"]
    project = (
        api.post(f"/workspaces/{workspace['$id']}/projects", json={"name": "Web App", "key": "WEB"})
        .raise_for_status()
        .json()["data"]
    )
    made = Board(api, workspace, project, {}, {})
    today = datetime.now(UTC).date()
    made.sprint = made.create_sprint(
        "Sprint 1",
        goal="Ship the board",
        startDate=str(today - timedelta(days=3)),
        endDate=str(today + timedelta(days=11)),
    )
    api.patch(f"/sprints/{made.sprint['$id']}", json={"status": "ACTIVE"}).raise_for_status()
    sprint_id = made.sprint["$id"]
    me = api.get("/me").raise_for_status().json()["data"]["$id"]
    for title, fields in [
        (
            "Write the login page",
            {"status": "TODO", "storyPoints": 3, "labels": ["frontend"], "assigneeIds": [me]},
        ),
        ("Fix the crash on save", {"status": "TODO", "type": "BUG", "priority": "URGENT"}),
        ("Design the schema", {"status": "IN_PROGRESS", "storyPoints": 5, "flagged": True}),
        ("Set up CI", {"status": "DONE", "storyPoints": 2}),
    ]:
        made.items[title] = made.create_item(title, sprintId=sprint_id, **fields)
    for title in ["Dark mode", "Export to CSV"]:
        made.items[title] = made.create_item(title, sprintId=None)
    return made


def sign_in(page: Page, key: str, path: str = "/") -> None:
    """A person's sign-in: open the page, type the key into the form, submit."""
    page.goto(path)
    page.locator("input[name=key]").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Sign out").wait_for()


def open_signed_in(page: Page, key: str, path: str) -> None:
    """Straight to `path` with a session made through the API, as the form would make it
    (quicker than typing; the sign-in form has tests of its own)."""
    made = page.request.post("/api/v1/sessions", data={"key": key})
    assert made.status == 201, made.text()
    page.goto(path)
    # Attached, not visible: on a phone's width the account bar is behind the menu button.
    page.get_by_role("button", name="Sign out", include_hidden=True).wait_for(state="attached")


def screenshot(page: Page, name: str) -> None:
    """A small PNG for the README (docs/screenshots/)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=False)
