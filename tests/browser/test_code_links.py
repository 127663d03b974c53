"""The item's drawer shows the pull requests and commits that name it (contract §20), each
with its state, as links out to the forge."""

import json
import re

import httpx
from playwright.sync_api import Page, expect

from tests.browser.conftest import Board
from tests.browser.test_items import open_drawer
from tests.integrations.forge_factories import example, signature_headers


def test_the_drawer_lists_the_items_pull_requests_and_commits(page: Page, board: Board) -> None:
    key = board.items["Write the login page"]["key"]
    integration = (
        board.api.post(
            f"/workspaces/{board.workspace['$id']}/integrations", json={"provider": "github"}
        )
        .raise_for_status()
        .json()["data"]
    )
    payload = example("github-pull_request-opened.json")
    payload["pull_request"]["title"] = f"{key}: the login page"
    body = json.dumps(payload).encode()
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": "browser-1",
        **signature_headers("github", integration["secret"], body),
    }
    httpx.post(integration["url"], content=body, headers=headers).raise_for_status()

    drawer = open_drawer(page, board, key)
    code = drawer.get_by_role("region", name="Code")
    pull_request = code.locator('[data-link-kind="pull_request"]')
    expect(pull_request).to_contain_text(re.compile(r"Pull request #2: .*the login page"))
    expect(pull_request).to_have_attribute("data-state", "open")
    out = pull_request.get_by_role("link")
    expect(out).to_have_attribute("href", payload["pull_request"]["html_url"])
    expect(out).to_have_attribute("rel", "noopener noreferrer")
