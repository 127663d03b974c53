"""The backlog: inline create, planning by drag and by bulk move, paging from the server."""

from playwright.sync_api import Page, expect

from tests.browser.conftest import Board, open_signed_in, screenshot


def backlog_path(board: Board) -> str:
    return f"/projects/{board.project['$id']}/backlog"


def test_inline_create_with_c_shows_the_new_key(page: Page, board: Board, admin_key: str) -> None:
    open_signed_in(page, admin_key, backlog_path(board))
    expect(page.locator('[data-list="none"] .row')).to_have_count(2)
    page.locator("body").press("c")
    expect(page.get_by_label("New item title")).to_be_focused()
    page.keyboard.type("Add a search box")
    page.keyboard.press("Enter")
    expect(page.locator("#created-key")).to_have_text("Created WEB-7")
    row = page.locator('ol[data-list="none"] [data-key="WEB-7"]')
    expect(row).to_contain_text("Add a search box")
    created = board.item("WEB-7")
    assert (created["title"], created["sprintId"], created["status"]) == (
        "Add a search box",
        None,
        "BACKLOG",
    )
    # The field is ready for the next one.
    expect(page.get_by_label("New item title")).to_be_focused()


def test_drag_from_the_backlog_into_a_sprint(page: Page, board: Board, admin_key: str) -> None:
    key = board.items["Dark mode"]["key"]
    open_signed_in(page, admin_key, backlog_path(board))
    sprint_list = page.locator(f'ol[data-list="{board.sprint["$id"]}"]')
    page.locator(f'[data-key="{key}"]').drag_to(sprint_list)
    expect(sprint_list.locator(f'[data-key="{key}"]')).to_be_visible()
    assert board.item(key)["sprintId"] == board.sprint["$id"]
    screenshot(page, "backlog.png")


def test_select_several_and_move_them_at_once(page: Page, board: Board, admin_key: str) -> None:
    planned = board.create_sprint("Sprint 2")
    keys = [board.items["Dark mode"]["key"], board.items["Export to CSV"]["key"]]
    open_signed_in(page, admin_key, backlog_path(board))
    for key in keys:
        page.get_by_label(f"Select {key}").check()
    expect(page.locator(".selection")).to_have_text("2 selected")
    page.get_by_label("Move selected to").select_option(label="Sprint 2")
    page.get_by_role("button", name="Move", exact=True).click()
    target = page.locator(f'ol[data-list="{planned["$id"]}"]')
    for key in keys:
        expect(target.locator(f'[data-key="{key}"]')).to_be_visible()
        assert board.item(key)["sprintId"] == planned["$id"]


def test_a_long_backlog_is_read_a_page_at_a_time(page: Page, board: Board, admin_key: str) -> None:
    for n in range(58):
        board.create_item(f"Idea {n}", sprintId=None)
    open_signed_in(page, admin_key, backlog_path(board))
    rows = page.locator('ol[data-list="none"] .row')
    expect(rows).to_have_count(50)
    page.get_by_role("button", name="Show 10 more (10 not shown)").click()
    expect(rows).to_have_count(60)


def test_create_a_sprint_from_the_backlog(page: Page, board: Board, admin_key: str) -> None:
    open_signed_in(page, admin_key, backlog_path(board))
    page.get_by_role("button", name="Create sprint").click()
    dialog = page.get_by_role("dialog", name="Create sprint")
    dialog.get_by_label("Name").fill("Sprint 2")
    dialog.get_by_label("Goal").fill("Polish")
    dialog.get_by_role("button", name="Create sprint").click()
    expect(page.get_by_role("heading", name="Sprint 2")).to_be_visible()
    sprints = board.api.get("/sprints", params={"projectId": board.project["$id"]}).json()
    assert [(s["name"], s["status"]) for s in sprints["data"]["documents"]] == [
        ("Sprint 1", "ACTIVE"),
        ("Sprint 2", "PLANNED"),
    ]
