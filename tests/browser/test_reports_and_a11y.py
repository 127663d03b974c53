"""Reports render from the report endpoints (or say they cannot), and axe-core finds no serious
accessibility problem on the board's pages."""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, Route, expect

from tests.browser.conftest import Board, open_signed_in, screenshot, serious_violations


def contract_report(sprint_id: str) -> dict[str, Any]:
    """A report shaped as contract §11 describes it: 5 days of a 20-point sprint."""
    start = datetime.now(UTC).date() - timedelta(days=4)
    days = [str(start + timedelta(days=n)) for n in range(10)]
    remaining = [20, 18, 18, 13, 10]
    return {
        "sprintId": sprint_id,
        "status": "ACTIVE",
        "startDate": f"{days[0]}T00:00:00.000Z",
        "endDate": f"{days[-1]}T00:00:00.000Z",
        "startedAt": f"{days[0]}T09:00:00.000Z",
        "completedAt": None,
        "committed": {"items": 6, "points": 20},
        "added": {"items": 1, "points": 3},
        "removed": {"items": 0, "points": 0},
        "completed": {"items": 3, "points": 10},
        "carriedOver": {"items": 0, "points": 0, "to": None},
        "scopeChanges": [],
        "burndown": [
            {"date": d, "remainingPoints": r, "remainingItems": 6, "scopePoints": 20 + (n > 1) * 3}
            for n, (d, r) in enumerate(zip(days, remaining, strict=False))
        ],
        "ideal": [{"date": d, "points": round(20 - 20 * n / 9, 2)} for n, d in enumerate(days)],
    }


def test_the_burndown_is_drawn_from_the_report(page: Page, board: Board, admin_key: str) -> None:
    report = contract_report(board.sprint["$id"])

    def answer(route: Route) -> None:
        route.fulfill(
            status=200, content_type="application/json", body=json.dumps({"data": report})
        )

    page.route(f"**/api/v1/sprints/{board.sprint['$id']}/report", answer)
    open_signed_in(page, admin_key, f"/projects/{board.project['$id']}/board")
    page.get_by_role("button", name="Burndown").click()
    dialog = page.get_by_role("dialog", name="Sprint 1: burndown")
    expect(dialog.get_by_role("img", name="Burndown")).to_be_visible()
    expect(dialog.locator("polyline.remaining")).to_have_count(1)
    expect(dialog.locator("polyline.ideal")).to_have_count(1)
    expect(dialog).to_contain_text("Committed6 items · 20 pts")
    screenshot(page, "report.png")


def test_the_real_report_endpoints_render_or_say_why_not(
    page: Page, board: Board, admin_key: str
) -> None:
    open_signed_in(page, admin_key, f"/projects/{board.project['$id']}/board")
    status = page.request.get(f"/api/v1/sprints/{board.sprint['$id']}/report").status
    page.get_by_role("button", name="Burndown").click()
    dialog = page.get_by_role("dialog", name="Sprint 1: burndown")
    if status == 200:
        expect(dialog.get_by_role("img", name="Burndown")).to_be_visible()
    else:
        expect(dialog.locator(".empty")).to_contain_text("not available on this server yet")
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Velocity").click()
    velocity = page.get_by_role("dialog", name="Web App: velocity")
    expect(velocity.locator(".empty")).to_be_visible()


def test_no_serious_accessibility_violations(
    page: Page, board: Board, admin_key: str, axe: Path
) -> None:
    page.goto("/")
    expect(page.locator("body[data-ready]")).to_be_attached()
    assert serious_violations(page, axe) == []
    open_signed_in(page, admin_key, f"/projects/{board.project['$id']}/board")
    expect(page.locator(".card")).to_have_count(4)
    assert serious_violations(page, axe) == []
    page.locator("select[name=lanes]").select_option("assignee")
    expect(page.locator(".lane-title")).to_have_count(2)
    assert serious_violations(page, axe) == []
    page.locator(f'[data-key="{board.items["Set up CI"]["key"]}"]').click()
    expect(page.get_by_role("dialog").get_by_label("Title")).to_be_visible()
    assert serious_violations(page, axe) == []
    page.keyboard.press("Escape")
    page.goto(f"/projects/{board.project['$id']}/backlog")
    expect(page.locator(".row")).to_have_count(6)
    assert serious_violations(page, axe) == []
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    assert serious_violations(page, axe) == []
