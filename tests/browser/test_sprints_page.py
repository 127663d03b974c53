"""Sprints (contract §22): `/projects/{id}/sprints` lists every sprint, a completed one with its
committed and completed points and a link to its report; "Start sprint" asks for the end date
and goal first; a sprint's name, dates and goal are edited in place."""

from datetime import UTC, datetime, timedelta

from playwright.sync_api import Page, expect

from tests.browser.conftest import Board, open_signed_in
from tests.browser.test_reports_and_a11y import serious_violations


def test_the_sprints_page_lists_every_sprint_starts_and_edits_them(
    page: Page, board: Board, admin_key: str
) -> None:
    api = board.api
    planned = board.create_sprint("Sprint 2")
    api.post(f"/sprints/{board.sprint['$id']}/complete", json={}).raise_for_status()
    velocity = api.get(f"/projects/{board.project['$id']}/velocity").json()["data"]["sprints"][0]

    open_signed_in(page, admin_key, f"/projects/{board.project['$id']}/board")
    page.get_by_role("navigation", name="Project").get_by_role("link", name="Sprints").click()
    expect(page.get_by_role("heading", name="Web App: sprints")).to_be_visible()
    done = page.get_by_role("row", name="Sprint 1")
    expect(done).to_contain_text("Completed")
    expect(done).to_contain_text(
        f"{velocity['committedPoints']:g} committed · {velocity['completedPoints']:g} completed"
    )
    expect(done).to_contain_text("Ship the board")
    done.get_by_role("link", name="Sprint 1 report").click()
    expect(page.get_by_role("heading", name="Sprint 1: report")).to_be_visible()
    expect(page.locator(".figures")).to_contain_text("Completed")
    page.get_by_role("link", name="All sprints").click()

    end = (datetime.now(UTC).date() + timedelta(days=10)).isoformat()
    page.get_by_role("row", name="Sprint 2").get_by_role("button", name="Start sprint").click()
    dialog = page.get_by_role("dialog", name="Start sprint: Sprint 2")
    dialog.get_by_label("End date").fill(end)
    dialog.get_by_label("Goal").fill("Take payments")
    dialog.get_by_role("button", name="Start sprint").click()
    expect(page.get_by_role("row", name="Sprint 2")).to_contain_text("Active")
    started = api.get(f"/sprints/{planned['$id']}").json()["data"]
    assert (started["status"], started["endDate"][:10], started["goal"]) == (
        "ACTIVE",
        end,
        "Take payments",
    )

    page.get_by_role("button", name="Edit sprint Sprint 2").click()
    dialog = page.get_by_role("dialog", name="Edit sprint: Sprint 2")
    dialog.get_by_label("Name").fill("Payments sprint")
    dialog.get_by_label("End date").fill("2031-02-03")
    dialog.get_by_label("Goal").fill("Take card payments")
    dialog.get_by_role("button", name="Save").click()
    expect(page.get_by_role("row", name="Payments sprint")).to_contain_text("Take card payments")
    edited = api.get(f"/sprints/{planned['$id']}").json()["data"]
    assert (edited["name"], edited["endDate"][:10]) == ("Payments sprint", "2031-02-03")


def test_start_sprint_in_the_backlog_asks_for_the_end_date_and_goal(
    page: Page, board: Board, admin_key: str
) -> None:
    api = board.api
    api.post(f"/sprints/{board.sprint['$id']}/complete", json={}).raise_for_status()
    planned = board.create_sprint("Sprint 2", goal="A first goal")
    board.create_sprint("Sprint 3")
    open_signed_in(page, admin_key, f"/projects/{board.project['$id']}/backlog")
    # Only the next planned sprint can start.
    expect(page.get_by_role("button", name="Start sprint")).to_have_count(1)
    page.get_by_role("button", name="Start sprint").click()
    dialog = page.get_by_role("dialog", name="Start sprint: Sprint 2")
    expect(dialog.get_by_label("Goal")).to_have_value("A first goal")
    dialog.get_by_label("End date").fill("")
    dialog.get_by_role("button", name="Start sprint").click()
    # (The end date is required: the browser keeps the dialog open.)
    assert api.get(f"/sprints/{planned['$id']}").json()["data"]["status"] == "PLANNED"
    dialog.get_by_label("End date").fill("2031-01-31")
    dialog.get_by_label("Goal").fill("Ship the backlog")
    dialog.get_by_role("button", name="Start sprint").click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("button", name="Start sprint")).to_have_count(0)
    started = api.get(f"/sprints/{planned['$id']}").json()["data"]
    assert (started["status"], started["endDate"][:10], started["goal"]) == (
        "ACTIVE",
        "2031-01-31",
        "Ship the backlog",
    )


def test_the_new_pages_fit_a_phone_and_axe_finds_nothing_serious(
    page: Page, board: Board, admin_key: str
) -> None:
    api = board.api
    api.post(f"/sprints/{board.sprint['$id']}/complete", json={}).raise_for_status()
    project, workspace = board.project["$id"], board.workspace["$id"]
    open_signed_in(page, admin_key, "/")
    pages = [
        ("/", "Your projects"),
        (f"/workspaces/{workspace}/members", "members"),
        ("/account", "Your account"),
        (f"/projects/{project}/sprints", "Web App: sprints"),
        (f"/projects/{project}/sprints/{board.sprint['$id']}/report", "Sprint 1: report"),
    ]
    for path, heading in pages:
        page.goto(path)
        expect(page.get_by_role("heading", name=heading).first).to_be_visible()
        assert serious_violations(page) == [], path
    # (At this width the header's menu is the mobile work's: here, the page's own content.)
    page.set_viewport_size({"width": 390, "height": 844})
    for path, heading in pages:
        page.goto(path)
        expect(page.get_by_role("heading", name=heading).first).to_be_visible()
        sideways = page.evaluate(
            "(m => m.scrollWidth - m.clientWidth)(document.getElementById('main'))"
        )
        assert sideways <= 0, f"{path}'s content is wider than the phone by {sideways}px"
