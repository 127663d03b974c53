"""The search palette (contract §22, "Search"): Ctrl+K or ⌘K opens it, it finds items by key
or words, Enter opens the item, and it runs actions ("Create item", "Go to backlog")."""

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import Board, open_signed_in
from tests.browser.test_items import admin_key_of


def open_palette(page: Page, keys: str = "Control+k"):  # type: ignore[no-untyped-def]
    page.keyboard.press(keys)
    palette = page.get_by_role("dialog", name="Search")
    expect(palette).to_be_visible()
    search = palette.get_by_role("combobox", name="Search items and actions")
    expect(search).to_be_focused()
    return palette, search


def test_ctrl_k_finds_an_item_by_key_and_enter_opens_it(page: Page, board: Board) -> None:
    open_signed_in(page, admin_key_of(board), f"/projects/{board.project['$id']}/board")
    expect(page.locator(".card")).to_have_count(4)
    item = board.items["Design the schema"]
    palette, search = open_palette(page)
    search.fill(item["key"])
    expect(search).to_have_attribute("aria-expanded", "true")
    expect(palette.get_by_role("option").first).to_contain_text(f"{item['key']} Design the schema")
    expect(search).to_have_attribute("aria-activedescendant", re.compile(".+"))
    search.press("Enter")
    expect(page).to_have_url(re.compile(f"/tasks/{item['$id']}$"))
    expect(page.get_by_role("heading", name=f"{item['key']} Design the schema")).to_be_visible()
    expect(palette).to_have_count(0)


def test_cmd_k_finds_items_by_words_from_any_page(page: Page, board: Board) -> None:
    open_signed_in(page, admin_key_of(board), "/")
    palette, search = open_palette(page, "Meta+k")
    search.fill("crash on save")
    option = palette.get_by_role("option", name=re.compile("Fix the crash on save"))
    expect(option.first).to_be_visible()
    option.first.click()
    expect(page.get_by_role("heading", name=re.compile("Fix the crash on save"))).to_be_visible()


def test_the_palette_runs_actions(page: Page, board: Board) -> None:
    project = board.project
    open_signed_in(page, admin_key_of(board), f"/projects/{project['$id']}/board")
    expect(page.locator(".card")).to_have_count(4)
    palette, search = open_palette(page)
    expect(palette.get_by_role("option", name=re.compile("Create item"))).to_be_visible()
    search.fill("backlog")
    expect(palette.get_by_role("option", name=re.compile("Go to backlog"))).to_be_visible()
    search.press("ArrowDown")  # (the items found first, if any; here none match)
    palette.get_by_role("option", name=re.compile("Go to backlog")).click()
    expect(page).to_have_url(re.compile(f"/projects/{project['$id']}/backlog$"))

    expect(page.locator(".row")).to_have_count(6)
    palette, search = open_palette(page)
    search.fill("create")
    search.press("Enter")
    create = page.get_by_role("dialog", name="Create item")
    create.get_by_label("Title").fill("Made from the palette")
    create.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name=re.compile("Made from the palette"))).to_be_visible()
    found = board.api.get(
        "/tasks", params={"workspaceId": board.workspace["$id"], "search": "from the palette"}
    ).json()["data"]["documents"]
    assert [(i["title"], i["projectId"]) for i in found] == [
        ("Made from the palette", project["$id"])
    ]


def test_escape_closes_the_palette(page: Page, board: Board) -> None:
    open_signed_in(page, admin_key_of(board), f"/projects/{board.project['$id']}/backlog")
    palette, _ = open_palette(page)
    page.keyboard.press("Escape")
    expect(palette).to_have_count(0)
