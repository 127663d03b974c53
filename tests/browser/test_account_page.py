"""`/account` (contract §22): a person sets their password and makes and revokes API keys in
the page; the sign-in page and the token pages are there for them."""

import re
import uuid

import httpx
from playwright.sync_api import Page, expect

from tests.browser.conftest import open_signed_in

PASSWORD = "a long enough secret"


def test_a_person_sets_a_password_and_manages_keys_on_the_account_page(
    page: Page, api: httpx.Client, base_url: str
) -> None:
    email = f"kim-{uuid.uuid4().hex[:8]}@example.com"
    kim = api.post("/users", json={"name": "Kim Keys", "email": email}).json()["data"]
    first = api.post(f"/users/{kim['$id']}/keys", json={"name": "first"}).json()["data"]["key"]
    open_signed_in(page, first, "/")
    page.get_by_role("link", name="Kim Keys").click()
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()
    expect(page).to_have_url(f"{base_url}/account")

    page.get_by_label("New password").fill(PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.locator("#toast")).to_contain_text("Your password is changed")
    # Changing it again needs the current one.
    page.get_by_label("New password").fill("another long secret")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("alert").first).to_contain_text("current password is not right")

    page.get_by_role("button", name="New API key").click()
    dialog = page.get_by_role("dialog", name="New API key")
    dialog.get_by_label("Name").fill("CI scripts")
    dialog.get_by_role("button", name="Create key").click()
    secret = dialog.get_by_label("Your new key")
    expect(secret).to_have_value(re.compile(r"^sb_"))
    made = secret.input_value()
    dialog.get_by_role("button", name="Close").click()
    me = httpx.get(f"{base_url}/api/v1/me", headers={"Authorization": f"Bearer {made}"})
    assert me.json()["data"]["email"] == email
    keys = page.get_by_role("table")
    expect(keys.get_by_role("row", name="CI scripts")).to_contain_text("active")
    page.get_by_role("button", name="Revoke CI scripts").click()
    expect(keys.get_by_role("row", name="CI scripts")).to_contain_text("revoked")
    gone = httpx.get(f"{base_url}/api/v1/me", headers={"Authorization": f"Bearer {made}"})
    assert gone.status_code == 401

    # The password signs in from the sign-in page.
    page.get_by_role("button", name="Sign out").click()
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Log in with password").click()
    expect(page.get_by_role("link", name="Kim Keys")).to_be_visible()


def test_the_sign_in_page_offers_both_forms_and_the_token_pages_exist(page: Page) -> None:
    page.goto("/")
    expect(page.get_by_label("Email")).to_be_visible()
    expect(page.get_by_label("Password", exact=True)).to_be_visible()
    expect(page.get_by_label("API key")).to_be_visible()
    page.goto("/reset/not-a-real-token")
    page.get_by_label("New password (10 characters or more)").fill(PASSWORD)
    page.get_by_role("button", name="Set password").click()
    expect(page.locator("#token-error")).to_contain_text("no longer valid")
    page.goto("/invite/not-a-real-token")
    expect(page.get_by_role("button", name="Join")).to_be_visible()
