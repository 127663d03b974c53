"""`GET /auth/oidc/login` and `GET /auth/oidc/callback` (contract §19): browser pages, not
API routes. They wait on the issuer (discovery, the code's exchange, its keys), so they are
plain Starlette routes: a request's transaction (`TransactionalRoute`) never suspends, and
this one opens its own only once the issuer has answered.

The login's `state`, `nonce` and PKCE verifier travel sealed (server key) in a cookie bound
to the browser that began it (`SameSite=Lax`: the issuer's redirect back is a cross-site
navigation), good for 10 minutes: a callback from another browser, a replayed or altered
`state` is a bad state (400), and nobody is signed in.
"""

import functools
import html
import json
import logging
from typing import Any

from cryptography.fernet import InvalidToken
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from sprintboard import audit
from sprintboard.config import Settings
from sprintboard.db import Database
from sprintboard.identity import sessions
from sprintboard.mail.outbox import link_root
from sprintboard.serverkey import SecretBox
from sprintboard.sso import service
from sprintboard.sso.client import BadResponse, Login, OidcClient

logger = logging.getLogger("sprintboard.sso")

COOKIE = "sb_oidc"
COOKIE_PATH = "/auth/oidc"
LOGIN_SECONDS = 600
CALLBACK = "/auth/oidc/callback"


def routes(settings: Settings, box: SecretBox) -> list[Route]:
    """The two routes; none while OIDC is not configured (then they are 404s)."""
    if not settings.oidc_configured:
        return []
    assert settings.oidc_issuer
    assert settings.oidc_client_id
    assert settings.oidc_client_secret
    client = OidcClient(
        settings.oidc_issuer,
        settings.oidc_client_id,
        settings.oidc_client_secret.get_secret_value(),
    )
    endpoints = _Endpoints(client, box, settings.oidc_allowed_domains)
    return [
        Route("/auth/oidc/login", endpoints.login, methods=["GET"], include_in_schema=False),
        Route(CALLBACK, endpoints.callback, methods=["GET"], include_in_schema=False),
    ]


class _Endpoints:
    def __init__(self, client: OidcClient, box: SecretBox, allowed_domains: list[str]) -> None:
        self.client = client
        self.box = box
        self.allowed_domains = allowed_domains

    async def login(self, request: Request) -> Response:
        try:
            url, login = await self.client.begin(link_root(request) + CALLBACK)
        except (BadResponse, OSError, ValueError) as error:
            logger.warning("single sign-on could not begin: %s", error)
            return _page(
                502,
                "Single sign-on is unavailable",
                "The identity provider did not answer; try again later.",
            )
        response = RedirectResponse(url, status_code=302)
        sealed = self.box.seal(json.dumps(_fields(login)))
        response.set_cookie(
            COOKIE,
            sealed,
            max_age=LOGIN_SECONDS,
            path=COOKIE_PATH,
            secure=request.url.scheme == "https",
            httponly=True,
            samesite="lax",
        )
        return response

    async def callback(self, request: Request) -> Response:
        response = await self._callback(request)
        response.delete_cookie(COOKIE, path=COOKIE_PATH)
        return response

    async def _callback(self, request: Request) -> Response:
        login = self._login_of(request)
        state = request.query_params.get("state")
        if login is None or not state or state != login.state:
            return _page(
                400,
                "Sign-in failed",
                "This sign-in was not begun in this browser, or it took too long. Start again.",
            )
        if "error" in request.query_params or not request.query_params.get("code"):
            return _page(400, "Sign-in failed", "The identity provider did not sign you in.")
        try:
            claims = await self.client.finish(
                redirect_uri=link_root(request) + CALLBACK,
                code=request.query_params["code"],
                login=login,
            )
        except BadResponse as error:
            logger.warning("single sign-on refused: %s", error)
            return _page(
                400, "Sign-in failed", "The identity provider's answer could not be verified."
            )
        except OSError as error:
            logger.warning("single sign-on failed: %s", error)
            return _page(
                502,
                "Single sign-on is unavailable",
                "The identity provider did not answer; try again later.",
            )
        database: Database = request.app.state.database
        address = request.client.host if request.client else None
        token, refused = await database.call(
            functools.partial(_sign_in, database, claims, self.allowed_domains, address)
        )
        if refused is not None:
            return _page(403, "You cannot sign in here", refused.message)
        assert token is not None
        response = RedirectResponse("/", status_code=303)
        sessions.set_cookie(response, request, token)
        return response

    def _login_of(self, request: Request) -> Login | None:
        sealed = request.cookies.get(COOKIE)
        if not sealed:
            return None
        try:
            fields = json.loads(self.box.open_fresh(sealed, LOGIN_SECONDS))
            return Login(state=fields["state"], nonce=fields["nonce"], verifier=fields["verifier"])
        except (InvalidToken, ValueError, KeyError, TypeError):
            return None


def _fields(login: Login) -> dict[str, str]:
    return {"state": login.state, "nonce": login.nonce, "verifier": login.verifier}


def _sign_in(
    database: Database, claims: dict[str, Any], allowed_domains: list[str], address: str | None
) -> tuple[str | None, service.Refused | None]:
    """In one transaction, committed also when refused (its `session.failed` entry)."""
    with database.transaction() as session:
        audit.at_address(session, address)
        try:
            token, _ = service.sign_in(session, claims=claims, allowed_domains=allowed_domains)
        except service.Refused as refused:
            return None, refused
        return token, None


def _page(status: int, title: str, message: str) -> HTMLResponse:
    body = (
        "<!doctype html><html lang=en><meta charset=utf-8>"
        f"<title>{html.escape(title)} · Sprintboard</title>"
        f"<main><h1>{html.escape(title)}</h1><p>{html.escape(message)}</p>"
        '<p><a href="/">Back to the sign-in page</a></p></main></html>'
    )
    return HTMLResponse(body, status_code=status, headers={"cache-control": "no-store"})
