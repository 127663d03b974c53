"""The query bar of the board and the backlog, and a saved view's page (contract §18, §22)."""

from playwright.sync_api import Dialog, Page, expect

from tests.browser.conftest import Board, open_signed_in, screenshot


def test_the_board_narrows_by_a_query_and_saves_it_as_a_view(
    page: Page, board: Board, admin_key: str
) -> None:
    open_signed_in(page, admin_key, f"/projects/{board.project['$id']}/board")
    cards = page.locator(".card[data-key]")
    expect(cards).to_have_count(4)
    bar = page.get_by_role("search")
    query = bar.get_by_label("Query")
    query.fill("priority >= HIGH OR flagged = true")
    query.press("Enter")
    expect(cards).to_have_count(2)
    crash = board.items["Fix the crash on save"]["key"]
    schema = board.items["Design the schema"]["key"]
    expect(page.locator(f'.card[data-key="{crash}"]')).to_be_visible()
    expect(page.locator(f'.card[data-key="{schema}"]')).to_be_visible()
    query.fill("stauts = TODO")
    query.press("Enter")
    expect(bar.get_by_role("alert")).to_contain_text("did you mean 'status'?")
    expect(cards).to_have_count(2)  # (a query that cannot run changes nothing)
    query.fill("priority >= HIGH OR flagged = true")

    def name_it(dialog: Dialog) -> None:
        dialog.accept("Hot items")

    page.once("dialog", name_it)
    bar.get_by_role("button", name="Save as view").click()
    expect(page.get_by_role("heading", name="Hot items")).to_be_visible()
    assert page.url.split("/views/")[1]
    todo = page.get_by_role("region", name="Todo")
    expect(todo.locator(f'[data-key="{crash}"]')).to_be_visible()
    expect(
        page.get_by_role("region", name="In progress").locator(f'[data-key="{schema}"]')
    ).to_be_visible()
    page.reload()  # (a deep link)
    expect(page.get_by_role("heading", name="Hot items")).to_be_visible()
    screenshot(page, "view.png")


def test_the_backlog_takes_a_query_and_a_list_view_shows_it(
    page: Page, board: Board, admin_key: str
) -> None:
    open_signed_in(page, admin_key, f"/projects/{board.project['$id']}/backlog")
    rows = page.locator('ol[data-list="none"] .row')
    expect(rows).to_have_count(2)
    query = page.get_by_role("search", name="Query items").get_by_label("Query")
    query.fill('title ~ "dark"')
    query.press("Enter")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Dark mode")
    view = (
        board.api.post(
            f"/workspaces/{board.workspace['$id']}/views",
            json={"name": "Mine", "query": "assignee = currentUser()"},
        )
        .raise_for_status()
        .json()["data"]
    )
    page.goto(f"/views/{view['$id']}")
    expect(page.get_by_role("heading", name="Mine")).to_be_visible()
    items = page.get_by_role("list", name="Items").locator("[data-key]")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("Write the login page")
