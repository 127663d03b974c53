"""Single sign-on with OpenID Connect (contract §19), against a real provider (the Node.js
`oidc-provider` package, `tests/oidc_provider.py`): the code flow with PKCE, `state` bound to
the browser, the ID token verified (signature, `iss`, `aud`, `exp`, `nonce`); who may sign
in; and that every tampered answer signs no one in."""

from collections.abc import Iterator
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest
from pydantic import SecretStr, ValidationError
from starlette.testclient import TestClient

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.db import Database
from tests.factories import API, Api, make_org_admin, make_user, make_workspace
from tests.identity.test_audit import entries
from tests.oidc_provider import Provider, running_provider

ROOT = "http://testserver"
CALLBACK = f"{ROOT}/auth/oidc/callback"


@pytest.fixture(scope="session")
def provider() -> Iterator[Provider]:
    with running_provider([CALLBACK]) as running:
        yield running


@pytest.fixture
def sso_settings(settings: Settings, provider: Provider) -> Settings:
    return settings.model_copy(
        update={
            "oidc_issuer": provider.issuer,
            "oidc_client_id": provider.client_id,
            "oidc_client_secret": SecretStr(provider.client_secret),
            "oidc_allowed_domains": ["allowed.example.com"],
        }
    )


@pytest.fixture
def browser(sso_settings: Settings, database: Database, provider: Provider) -> Iterator[TestClient]:
    provider.tamper(None)
    with TestClient(create_app(sso_settings, database=database), base_url=ROOT) as client:
        yield client


@pytest.fixture
def admin_api(browser: TestClient, database: Database) -> Api:
    return Api(browser, make_org_admin(database))


def through_provider(browser: TestClient) -> str:
    """Begins a login in `browser` and follows the provider to the callback URL it answers."""
    start = browser.get("/auth/oidc/login", follow_redirects=False)
    assert start.status_code == 302, start.text
    location = start.headers["location"]
    with httpx.Client() as at_provider:
        for _ in range(10):
            if location.startswith(CALLBACK):
                return location
            answer = at_provider.get(location, follow_redirects=False)
            assert answer.status_code in (302, 303), answer.text
            location = urljoin(location, answer.headers["location"])
    raise AssertionError(f"the provider never came back: {location}")


def sign_in(browser: TestClient) -> httpx.Response:
    return browser.get(through_provider(browser).removeprefix(ROOT), follow_redirects=False)


def me(browser: TestClient) -> httpx.Response:
    return browser.get(f"{API}/me")


def test_login_redirects_with_the_code_flow_pkce_state_and_nonce(
    browser: TestClient, provider: Provider
) -> None:
    start = browser.get("/auth/oidc/login", follow_redirects=False)
    assert start.status_code == 302
    location = urlsplit(start.headers["location"])
    assert f"{location.scheme}://{location.netloc}" == provider.issuer
    query = {key: values[0] for key, values in parse_qs(location.query).items()}
    assert query["response_type"] == "code"
    assert query["client_id"] == provider.client_id
    assert query["redirect_uri"] == CALLBACK
    assert query["code_challenge_method"] == "S256"
    assert len(query["code_challenge"]) == 43
    assert len(query["state"]) >= 32
    assert len(query["nonce"]) >= 32
    assert "openid" in query["scope"].split()
    cookie = start.headers["set-cookie"]
    assert cookie.startswith("sb_oidc=")
    assert "HttpOnly" in cookie
    assert "SameSite=lax" in cookie
    assert query["state"] not in cookie  # (sealed)


def test_a_verified_email_signs_its_user_in_whatever_its_case(
    browser: TestClient, admin_api: Api, provider: Provider
) -> None:
    user, _ = make_user(admin_api, name="Dana")
    provider.next_login("dana-1", user["email"].upper())
    answer = sign_in(browser)
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == "/"
    assert "sb_session=" in answer.headers["set-cookie"]
    assert me(browser).json()["data"]["$id"] == user["$id"]
    [created] = entries(admin_api, f"&action=session.created&actorId={user['$id']}")
    assert created["details"] == {"method": "oidc"}


def test_an_unverified_email_is_a_403_page_and_signs_no_one_in(
    browser: TestClient, admin_api: Api, provider: Provider
) -> None:
    user, _ = make_user(admin_api)
    provider.next_login("unverified", user["email"], verified=False)
    answer = sign_in(browser)
    assert answer.status_code == 403
    assert answer.headers["content-type"].startswith("text/html")
    assert "not verified" in answer.text
    assert "sb_session" not in answer.headers.get("set-cookie", "")
    assert me(browser).status_code == 401
    failed = entries(admin_api, "&action=session.failed")
    assert failed[-1]["details"]["email"] == user["email"]
    assert failed[-1]["actorId"] is None


def test_an_email_without_a_user_is_refused_unless_invited_or_its_domain_is_allowed(
    browser: TestClient, admin_api: Api, provider: Provider
) -> None:
    provider.next_login("stranger", "stranger@elsewhere.example.com")
    refused = sign_in(browser)
    assert refused.status_code == 403
    assert me(browser).status_code == 401

    workspace = make_workspace(admin_api)
    admin_api.ok(
        "POST",
        f"/workspaces/{workspace['$id']}/invitations",
        {"email": "Invited@Elsewhere.example.com", "role": "MEMBER"},
    )
    provider.next_login("invited", "invited@elsewhere.example.com", name="Ivy Invited")
    assert sign_in(browser).status_code == 303
    newcomer = me(browser).json()["data"]
    assert newcomer["name"] == "Ivy Invited"
    members = admin_api.ok("GET", f"/workspaces/{workspace['$id']}/members")["documents"]
    assert {m["userId"]: m["role"] for m in members}[newcomer["$id"]] == "MEMBER"
    assert admin_api.ok("GET", f"/workspaces/{workspace['$id']}/invitations")["documents"] == []
    browser.cookies.clear()

    provider.next_login("colleague", "Pat@Allowed.example.com")
    assert sign_in(browser).status_code == 303
    pat = me(browser).json()["data"]
    assert pat["email"] == "Pat@Allowed.example.com"
    assert browser.get(f"{API}/workspaces").json()["data"]["documents"] == []
    created = entries(admin_api, "&action=user.created")
    assert {e["target"]["$id"] for e in created} >= {newcomer["$id"], pat["$id"]}


def test_a_deactivated_user_is_refused(
    browser: TestClient, admin_api: Api, provider: Provider
) -> None:
    user, _ = make_user(admin_api)
    admin_api.ok("PATCH", f"/users/{user['$id']}", {"active": False})
    provider.next_login("gone", user["email"])
    assert sign_in(browser).status_code == 403
    assert me(browser).status_code == 401


def test_a_bad_state_or_another_browser_signs_no_one_in(
    browser: TestClient,
    admin_api: Api,
    provider: Provider,
    sso_settings: Settings,
    database: Database,
) -> None:
    user, _ = make_user(admin_api)
    provider.next_login("someone", user["email"])
    callback = through_provider(browser)
    query = parse_qs(urlsplit(callback).query)
    altered = callback.replace(f"state={query['state'][0]}", "state=not-the-state")
    answer = browser.get(altered.removeprefix(ROOT), follow_redirects=False)
    assert answer.status_code == 400
    assert me(browser).status_code == 401
    # (the login's cookie went with that answer: the genuine callback is no good after it)
    assert browser.get(callback.removeprefix(ROOT), follow_redirects=False).status_code == 400
    assert me(browser).status_code == 401

    provider.next_login("someone", user["email"])
    callback = through_provider(browser)
    with TestClient(create_app(sso_settings, database=database), base_url=ROOT) as other:
        answer = other.get(callback.removeprefix(ROOT), follow_redirects=False)
        assert answer.status_code == 400
        assert me(other).status_code == 401


@pytest.mark.parametrize("mode", ["signature", "audience", "nonce", "issuer", "expired"])
def test_a_tampered_id_token_signs_no_one_in(
    mode: str, browser: TestClient, admin_api: Api, provider: Provider
) -> None:
    user, _ = make_user(admin_api)
    provider.next_login("target", user["email"])
    provider.tamper(mode)
    try:
        answer = sign_in(browser)
    finally:
        provider.tamper(None)
    assert answer.status_code == 400, answer.text
    assert "sb_session" not in answer.headers.get("set-cookie", "")
    assert me(browser).status_code == 401
    assert entries(admin_api, f"&action=session.created&actorId={user['$id']}") == []


def test_the_sign_in_page_offers_sso_only_while_it_is_configured(
    browser: TestClient, settings: Settings, database: Database
) -> None:
    page = browser.get("/")
    assert 'href="/auth/oidc/login"' in page.text
    assert "Sign in with SSO" in page.text
    with TestClient(create_app(settings, database=database), base_url=ROOT) as plain:
        assert "Sign in with SSO" not in plain.get("/").text
        assert plain.get("/auth/oidc/login", follow_redirects=False).status_code == 404


@pytest.mark.parametrize(
    ("issuer", "accepted"),
    [
        ("https://id.example.com/realms/acme", True),
        ("http://127.0.0.1:8080", True),
        ("http://localhost:8080/", True),
        ("http://[::1]:8080", True),
        ("http://id.example.com", False),
        ("http://10.0.0.1", False),
        ("ftp://id.example.com", False),
    ],
)
def test_the_issuer_is_https_except_on_a_loopback_host(issuer: str, accepted: bool) -> None:
    if accepted:
        assert Settings(oidc_issuer=issuer).oidc_issuer == issuer.rstrip("/")
    else:
        with pytest.raises(ValidationError):
            Settings(oidc_issuer=issuer)
