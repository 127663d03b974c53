"""The board's pages (contract §13): the web app in `sprintboard/web/`, shipped in the package.

`GET /` and the deep links (`/projects/{id}/board`, `/backlog`, `/settings`, `/sprints`, a
sprint's `/sprints/{id}/report`, `/tasks/{key}`, `/workspaces/{id}/members`, `/account`,
`/views/{id}`)
answer `web/index.html` whether or not the browser has a session: the app decides what to
show (its sign-in form is in that HTML). `/static/<path>` serves the other files of `web/`,
in its folders too (`lib/`, `views/board/`...: the board's modules import each other by path).
Neither kind is an API route: they stay out of the OpenAPI document, and anything else
(under `/api/` too) goes on to the router and its JSON 404.

This sits in front of the router instead of being routes: a `{path:path}` route would turn
`RouteIndex` off for every request. API requests pass by after one prefix check.
Files are read again when they change (`assets.py`); the pages address each file by its
version, which is served as immutable.
"""

import re
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from sprintboard.assets import CONTENT_TYPES, STATIC_PREFIX, Assets, File
from sprintboard.errors import error_response

WEB_ROOT = Path(__file__).with_name("web")
_PAGE = re.compile(
    r"^/(?:|account|workspaces/[^/]+/members|tasks/[^/]+|views/[^/]+"
    r"|projects/[^/]+/(?:board|backlog|settings|sprints|sprints/[^/]+/report))$"
)
_TOKEN_PAGES = {"invite": "invite.html", "reset": "reset.html"}
_TOKEN_PAGE = re.compile(r"^/(invite|reset)/[A-Za-z0-9_-]{1,256}$")
"""A link with a token (contract §19): its page reads the token from the address itself."""
_SSO_SLOT = b"<!-- sign in with SSO -->"
_SSO_LINK = b'<a id="signin-sso" class="sso" href="/auth/oidc/login">Sign in with SSO</a>'
_STATIC_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*$")
"""A path segment under `/static/`: no hidden files, no `..`, nothing a file system reads
specially."""

_PAGE_HEADERS = [
    # The HTML is small and unversioned: always asked again (a 304 when unchanged).
    (b"cache-control", b"no-cache"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]
_TOKEN_PAGE_HEADERS = [
    *(header for header in _PAGE_HEADERS if header[0] != b"referrer-policy"),
    # The token is in the address: never sent on, not even to this site's other pages.
    (b"referrer-policy", b"no-referrer"),
]


def _with_policy(
    headers: list[tuple[bytes, bytes]], page: File | None
) -> list[tuple[bytes, bytes]]:
    """`headers` and the page's CSP: scripts from this site only, no other origin and no
    inline script but the page's own import map, allowed by its hash."""
    allowed = f" {page.inline_script}" if page is not None and page.inline_script else ""
    policy = (
        f"script-src 'self'{allowed}; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
    )
    return [*headers, (b"content-security-policy", policy.encode("ascii"))]


_ASSET_HEADERS = [(b"cache-control", b"no-cache")]
"""A file asked for by its plain address (or an old version's) is revalidated: a 304 costs
one small round trip, and no old script runs against a new API."""
_VERSIONED_ASSET_HEADERS = [(b"cache-control", b"public, max-age=31536000, immutable")]
"""A file asked for by its current version (`?v=<digest>`, as the pages address them) never
changes: the browser keeps it and does not ask again (a changed file has a new address)."""


class WebPages:
    """Serves the pages and static files; passes everything else on to `app`."""

    def __init__(self, app: ASGIApp, root: Path = WEB_ROOT, *, sso: bool = False) -> None:
        self.app = app
        self.root = root
        self.sso = sso
        """Whether the sign-in form offers "Sign in with SSO" (OpenID Connect is configured)."""
        self.assets = Assets(root, slots={_SSO_SLOT: _SSO_LINK} if sso else {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if (
            scope["type"] != "http"
            or path.startswith("/api/")
            or scope["method"] not in ("GET", "HEAD")
        ):
            await self.app(scope, receive, send)
            return
        if _PAGE.match(path):
            page = self.assets.page(self.root / "index.html")
            await _serve(page, _with_policy(_PAGE_HEADERS, page), scope, receive, send)
        elif token_page := _TOKEN_PAGE.match(path):
            page = self.assets.page(self.root / _TOKEN_PAGES[token_page[1]])
            headers = _with_policy(_TOKEN_PAGE_HEADERS, page)
            await _serve(page, headers, scope, receive, send)
        elif path.startswith(STATIC_PREFIX):
            name = self._static_file(path[len(STATIC_PREFIX) :])
            file = None if name is None else self.assets.read(name)
            if file is None:
                await _not_found(scope, receive, send)
            else:
                current = _query_version(scope) == file.digest
                headers = _VERSIONED_ASSET_HEADERS if current else _ASSET_HEADERS
                await _serve(file, headers, scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def _static_file(self, relative: str) -> Path | None:
        parts = relative.split("/")
        if not all(_STATIC_NAME.match(part) for part in parts):
            return None
        if Path(parts[-1]).suffix.lower() not in CONTENT_TYPES:
            return None
        return self.root.joinpath(*parts)


async def _serve(
    file: File | None,
    headers: list[tuple[bytes, bytes]],
    scope: Scope,
    receive: Receive,
    send: Send,
) -> None:
    if file is None:
        await _not_found(scope, receive, send)
        return
    common = [(b"etag", file.etag), (b"last-modified", file.last_modified), *headers]
    if _header(scope, b"if-none-match") == file.etag:
        await send({"type": "http.response.start", "status": 304, "headers": common})
        await send({"type": "http.response.body", "body": b""})
        return
    response_headers = [
        (b"content-type", file.content_type),
        (b"content-length", str(len(file.body)).encode()),
        *common,
    ]
    await send({"type": "http.response.start", "status": 200, "headers": response_headers})
    body = file.body if scope["method"] == "GET" else b""
    await send({"type": "http.response.body", "body": body})


def _query_version(scope: Scope) -> str | None:
    """The `v` of the address's query (the version a page asked for), if any."""
    for pair in bytes(scope.get("query_string", b"")).split(b"&"):
        name, _, value = pair.partition(b"=")
        if name == b"v":
            return value.decode("ascii", "replace")
    return None


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    response = error_response(404, "NOT_FOUND", "No such route.")
    await response(scope, receive, send)
