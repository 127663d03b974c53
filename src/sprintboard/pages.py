"""The board's pages (contract §13): the web app in `sprintboard/web/`, shipped in the package.

`GET /` and the deep links (`/projects/{id}/board`, `/backlog`, `/settings`, `/tasks/{key}`,
`/views/{id}`)
answer `web/index.html` whether or not the browser has a session: the app decides what to
show (its sign-in form is in that HTML). `/static/<path>` serves the other files of `web/`,
in its folders too (`lib/`, `views/board/`...: the board's modules import each other by path).
Neither kind is an API route: they stay out of the OpenAPI document, and anything else
(under `/api/` too) goes on to the router and its JSON 404.

This sits in front of the router instead of being routes: a `{path:path}` route would turn
`RouteIndex` off for every request. API requests pass by after one prefix check.
Files are read on each request that finds them changed (their size and modification time are
their `ETag`), so a deployment never serves a stale copy and development needs no restart.
"""

import hashlib
import re
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from sprintboard.errors import error_response

WEB_ROOT = Path(__file__).with_name("web")
STATIC_PREFIX = "/static/"
_PAGE = re.compile(r"^/(?:|projects/[^/]+/(?:board|backlog|settings)|tasks/[^/]+|views/[^/]+)$")
_TOKEN_PAGES = {"invite": "invite.html", "reset": "reset.html"}
_TOKEN_PAGE = re.compile(r"^/(invite|reset)/[A-Za-z0-9_-]{1,256}$")
"""A link with a token (contract §19): its page reads the token from the address itself."""
_STATIC_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*$")
"""A path segment under `/static/`: no hidden files, no `..`, nothing a file system reads
specially."""

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".ico": "image/x-icon",
    ".webp": "image/webp",
    ".woff2": "font/woff2",
    ".txt": "text/plain; charset=utf-8",
}
"""What is served, by extension; a file of another kind is not (404)."""

_PAGE_HEADERS = [
    # The HTML is small and unversioned: always asked again (a 304 when unchanged).
    (b"cache-control", b"no-cache"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"frame-ancestors 'none'; base-uri 'none'; object-src 'none'"),
    (b"referrer-policy", b"same-origin"),
]
_TOKEN_PAGE_HEADERS = [
    *(header for header in _PAGE_HEADERS if header[0] != b"referrer-policy"),
    # The token is in the address: never sent on, not even to this site's other pages.
    (b"referrer-policy", b"no-referrer"),
]
_ASSET_HEADERS = [(b"cache-control", b"no-cache")]
"""Assets are not fingerprinted, so a browser revalidates them (a 304 costs one small
round trip) rather than running an old script against a new API."""


@dataclass(frozen=True, slots=True)
class _File:
    body: bytes
    etag: bytes
    last_modified: bytes
    content_type: bytes


class WebPages:
    """Serves the pages and static files; passes everything else on to `app`."""

    def __init__(self, app: ASGIApp, root: Path = WEB_ROOT) -> None:
        self.app = app
        self.root = root
        self._cache: dict[Path, tuple[tuple[int, int], _File]] = {}

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
            await self._serve(self.root / "index.html", _PAGE_HEADERS, scope, receive, send)
        elif token_page := _TOKEN_PAGE.match(path):
            page = self.root / _TOKEN_PAGES[token_page[1]]
            await self._serve(page, _TOKEN_PAGE_HEADERS, scope, receive, send)
        elif path.startswith(STATIC_PREFIX):
            file = self._static_file(path[len(STATIC_PREFIX) :])
            if file is None:
                await _not_found(scope, receive, send)
            else:
                await self._serve(file, _ASSET_HEADERS, scope, receive, send)
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
        self,
        path: Path,
        headers: list[tuple[bytes, bytes]],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        file = self._read(path)
        if file is None:
            await _not_found(scope, receive, send)
            return
        common = [
            (b"etag", file.etag),
            (b"last-modified", file.last_modified),
            *headers,
        ]
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

    def _read(self, path: Path) -> _File | None:
        try:
            stat = path.stat()
        except OSError:
            return None
        if not path.is_file():
            return None
        version = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == version:
            return cached[1]
        try:
            body = path.read_bytes()
        except OSError:
            return None
        digest = hashlib.sha256(body).hexdigest()[:20]
        file = _File(
            body=body,
            etag=f'"{digest}"'.encode(),
            last_modified=formatdate(stat.st_mtime, usegmt=True).encode(),
            content_type=CONTENT_TYPES[path.suffix.lower()].encode(),
        )
        self._cache[path] = (version, file)
        return file


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    response = error_response(404, "NOT_FOUND", "No such route.")
    await response(scope, receive, send)
