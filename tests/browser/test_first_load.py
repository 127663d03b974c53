"""The board's files are asked for once: a second load takes every module from the cache."""

from playwright.sync_api import Page

from tests.browser.conftest import Board, open_signed_in

NETWORK_FILES = """() => performance.getEntriesByType("resource")
  .filter((entry) => new URL(entry.name).pathname.startsWith("/static/"))
  .filter((entry) => entry.transferSize > 0)
  .map((entry) => entry.name)"""
"""The page's files that came over the network (a cache hit transfers nothing; a 304 does)."""


def test_a_second_load_of_the_board_asks_for_no_file(
    page: Page, board: Board, admin_key: str
) -> None:
    open_signed_in(page, admin_key, f"/projects/{board.project['$id']}/board")
    page.locator(".card").first.wait_for()
    first = page.evaluate(NETWORK_FILES)
    assert any("/static/views/board/index.js?v=" in name for name in first), first
    page.goto(f"/projects/{board.project['$id']}/backlog")
    page.get_by_role("button", name="Sign out").wait_for()
    assert page.evaluate(NETWORK_FILES) == []
