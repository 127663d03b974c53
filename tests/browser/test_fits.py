"""Every screen fits (contract §22): at 390 by 844 no page scrolls sideways (a board's columns
scroll inside it), the header's controls are visible or one click away behind a menu button
with `aria-expanded`, and axe-core finds no serious or critical violation on any page."""

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, FloatRect, Page, ViewportSize, expect

from tests.browser.conftest import Board, open_signed_in, serious_violations
from tests.browser.test_items import admin_key_of

PHONE: ViewportSize = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser: Browser, base_url: str) -> Iterator[BrowserContext]:
    made = browser.new_context(base_url=base_url, viewport=PHONE, is_mobile=True, has_touch=True)
    made.set_default_timeout(10_000)
    expect.set_options(timeout=10_000)
    yield made
    made.close()


@pytest.fixture
def page(phone: BrowserContext) -> Page:
    made = phone.new_page()
    made.on("pageerror", lambda error: print(f"page error: {error}"))
    return made


def scrolls_sideways(page: Page) -> list[str]:
    """What sticks out past the viewport's right edge (nothing, when the page fits)."""
    result: list[str] = page.evaluate(
        """() => {
            const width = document.documentElement.clientWidth;
            if (document.documentElement.scrollWidth <= width) return [];
            const inScroller = (el) => {
                for (let p = el.parentElement; p; p = p.parentElement) {
                    const style = getComputedStyle(p);
                    if (/(auto|scroll|hidden)/.test(style.overflowX)) return true;
                }
                return false;
            };
            return [...document.querySelectorAll("body *")]
                .filter((el) => el.getBoundingClientRect().right > width + 1 && !inScroller(el))
                .slice(0, 5)
                .map((el) => `${el.tagName}.${el.className} ${el.getBoundingClientRect().right}`);
        }"""
    )
    return result or (
        ["the page"]
        if page.evaluate(
            "document.documentElement.scrollWidth > document.documentElement.clientWidth"
        )
        else []
    )


def within_width(box: FloatRect | None) -> bool:
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] + 1


def header_reachable(page: Page) -> None:
    """Each header control is visible, or the menu button (aria-expanded) shows it."""
    controls = (
        page.locator("header.topbar")
        .get_by_role("button")
        .or_(page.locator("header.topbar").get_by_role("link"))
    )
    menu = page.get_by_role("button", name="Menu")
    hidden = [c for c in controls.all() if not c.is_visible()]
    if not hidden:
        return
    expect(menu).to_be_visible()
    expect(menu).to_have_attribute("aria-expanded", "false")
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    for control in hidden:
        expect(control).to_be_visible()
        box = control.bounding_box()
        assert within_width(box)
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "false")


def fits(page: Page, axe: Path, *, header: bool = True) -> None:
    assert scrolls_sideways(page) == []
    if header:
        header_reachable(page)
    assert serious_violations(page, axe) == []


def test_the_sign_in_page_fits(page: Page, axe: Path) -> None:
    page.goto("/")
    expect(page.locator("body[data-ready]")).to_be_attached()
    fits(page, axe)


def test_home_fits(page: Page, board: Board, axe: Path) -> None:
    # A name with no space to break at wraps rather than push the page sideways.
    board.api.post("/workspaces", json={"name": "a_workspace_name_" + "x" * 60}).raise_for_status()
    open_signed_in(page, admin_key_of(board), "/")
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    fits(page, axe)


def test_the_board_fits_its_columns_scroll_inside(page: Page, board: Board, axe: Path) -> None:
    open_signed_in(page, admin_key_of(board), f"/projects/{board.project['$id']}/board")
    expect(page.locator(".card")).to_have_count(4)
    fits(page, axe)
    columns = page.locator(".columns")
    assert columns.evaluate("(el) => el.scrollWidth > el.clientWidth")  # scrolls inside
    columns.evaluate("(el) => { el.scrollLeft = el.scrollWidth; }")
    assert scrolls_sideways(page) == []


def test_the_backlog_fits(page: Page, board: Board, axe: Path) -> None:
    open_signed_in(page, admin_key_of(board), f"/projects/{board.project['$id']}/backlog")
    expect(page.locator(".row")).to_have_count(6)
    fits(page, axe)
    # A row's title reads on a line or two, not a word per line.
    title = page.locator(".row .title").first
    box = title.bounding_box()
    assert box is not None
    assert box["width"] > 120


def test_settings_fit(page: Page, board: Board, axe: Path) -> None:
    open_signed_in(page, admin_key_of(board), f"/projects/{board.project['$id']}/settings")
    expect(page.locator("tr[data-status]").first).to_be_visible()
    fits(page, axe)


def test_the_item_page_and_drawer_fit(page: Page, board: Board, axe: Path) -> None:
    item = board.items["Write the login page"]
    board.api.patch(
        f"/tasks/{item['$id']}",
        json={"description": "A long line: " + "https://example.com/" + "x" * 120},
    ).raise_for_status()
    open_signed_in(page, admin_key_of(board), f"/tasks/{item['$id']}")
    expect(page.get_by_label("Title")).to_have_value("Write the login page")
    fits(page, axe)
    page.goto(f"/projects/{board.project['$id']}/board")
    page.locator(f'[data-key="{item["key"]}"]').click()
    drawer = page.get_by_role("dialog", name=re.compile(item["key"]))
    expect(drawer.get_by_label("Title")).to_be_visible()
    fits(page, axe, header=False)
    box = drawer.bounding_box()
    assert within_width(box)


DIALOGS: list[tuple[str, Callable[[Page], None]]] = [
    ("Inbox", lambda page: page.get_by_role("button", name=re.compile("^Inbox")).click()),
    ("Search", lambda page: page.keyboard.press("Control+k")),
    ("Keyboard shortcuts", lambda page: page.keyboard.press("?")),
]


@pytest.mark.parametrize(("name", "opens"), DIALOGS, ids=[name for name, _ in DIALOGS])
def test_dialogs_fit(
    page: Page, board: Board, axe: Path, name: str, opens: Callable[[Page], None]
) -> None:
    open_signed_in(page, admin_key_of(board), f"/projects/{board.project['$id']}/backlog")
    expect(page.locator(".row")).to_have_count(6)
    if name == "Inbox":
        menu = page.get_by_role("button", name="Menu")
        if menu.is_visible():
            menu.click()
    opens(page)
    dialog = page.get_by_role("dialog", name=name)
    expect(dialog).to_be_visible()
    fits(page, axe, header=False)
    box = dialog.bounding_box()
    assert within_width(box)


@pytest.mark.parametrize("kind", ["invite", "reset"])
def test_token_pages_fit(page: Page, axe: Path, kind: str) -> None:
    page.goto(f"/{kind}/not-a-real-token")
    page.wait_for_load_state("networkidle")
    fits(page, axe, header=False)
