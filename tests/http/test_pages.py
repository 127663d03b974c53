"""The board's pages and files (contract §13), served beside the API without being part of it."""

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

from sprintboard.assets import Assets
from sprintboard.pages import WEB_ROOT
from tests.factories import API, Api

PAGES = [
    "/",
    "/projects/abc/board",
    "/projects/abc/backlog",
    "/projects/abc/settings",
    "/tasks/WEB-12",
    "/projects/abc/sprints",
    "/projects/abc/sprints/def/report",
    "/workspaces/abc/members",
    "/account",
    "/views/abc",
]


@pytest.mark.parametrize("path", PAGES)
def test_the_app_and_its_deep_links_answer_the_html_with_the_sign_in_form(
    api: Api, path: str
) -> None:
    response = api.client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    html = response.text
    assert "<form" in html
    assert 'name="key"' in html
    assert 'type="submit"' in html or "<button" in html
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-frame-options"] == "DENY"
    # Scripts from this site only (issue 26): an injected inline script does not run.
    assert "script-src 'self'" in response.headers["content-security-policy"].split(";")[0]
    assert api.client.head(path).status_code == 200


@pytest.mark.parametrize("path", ["/", "/invite/abc", "/reset/abc"])
def test_the_pages_policy_allows_their_import_map_and_no_other_inline_script(
    api: Api, path: str
) -> None:
    """The import map is an inline script: the CSP names its hash (no 'unsafe-inline'),
    so a browser runs it, and nothing else written into the page."""
    response = api.client.get(path)
    inline = re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", response.text, re.S)
    assert len(inline) == 1
    assert inline[0].startswith('{"imports":')
    digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
    scripts = response.headers["content-security-policy"].split(";")[0].split()
    assert scripts == ["script-src", "'self'", f"'sha256-{digest}'"]


def test_the_html_is_the_same_with_a_session(admin: Api) -> None:
    assert admin.key is not None
    assert admin.client.post(f"{API}/sessions", json={"key": admin.key}).status_code == 201
    assert "sb_session" in admin.client.cookies
    signed_in = admin.client.get("/projects/x/board")
    admin.client.cookies.clear()
    assert signed_in.status_code == 200
    assert signed_in.text == admin.client.get("/projects/x/board").text


def test_static_files_have_their_types_and_revalidate(api: Api) -> None:
    script = api.client.get("/static/app.js")
    assert script.status_code == 200
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert script.headers["cache-control"] == "no-cache"
    assert script.headers["x-content-type-options"] == "nosniff"
    etag = script.headers["etag"]
    again = api.client.get("/static/app.js", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""


def test_the_pages_address_each_file_by_its_version_which_never_changes(api: Api) -> None:
    html = api.client.get("/projects/abc/board").text
    imports = json.loads(re.search(r'<script type="importmap">(.*?)</script>', html)[1])  # type: ignore[index]
    modules = sorted(path.relative_to(WEB_ROOT).as_posix() for path in WEB_ROOT.rglob("*.js"))
    assert sorted(imports["imports"]) == [f"/static/{module}" for module in modules]
    assert html.index('type="importmap"') < html.index("<link")
    versioned = imports["imports"]["/static/lib/dom.js"]
    assert f'<link rel="modulepreload" href="{versioned}">' in html
    assert re.search(r'<script type="module" src="/static/app\.js\?v=[0-9a-f]{20}">', html)
    assert re.search(r'href="/static/styles\.css\?v=[0-9a-f]{20}"', html)
    answer = api.client.get(versioned)
    assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert answer.content == (WEB_ROOT / "lib" / "dom.js").read_bytes()
    assert answer.headers["etag"] == f'"{versioned.rsplit("=", 1)[1]}"'
    # An address of another version (a page from before a deployment) is not kept.
    old = api.client.get("/static/lib/dom.js?v=0123456789abcdef0123")
    assert old.headers["cache-control"] == "no-cache"
    assert old.content == answer.content


def test_a_changed_file_changes_its_address_and_no_other(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "index.html").write_text(
        '<html><head><title>x</title><script type="module" src="/static/app.js"></script>'
        '<link rel="modulepreload" href="/static/lib/a.js"></head></html>'
    )
    (tmp_path / "app.js").write_text('import { a } from "./lib/a.js";\n')
    (tmp_path / "lib" / "a.js").write_text("export const a = 1;\n")
    assets = Assets(tmp_path)
    before = assets.page(tmp_path / "index.html")
    assert before is not None
    (tmp_path / "lib" / "a.js").write_text("export const a = 22;\n")
    after = assets.page(tmp_path / "index.html")
    assert after is not None
    assert after.etag != before.etag
    changed = [
        (old, new)
        for old, new in zip(_addresses(before.body), _addresses(after.body), strict=True)
        if old != new
    ]
    assert {old.split("?")[0] for old, _ in changed} == {"/static/lib/a.js"}


def _addresses(body: bytes) -> list[str]:
    return re.findall(r"/static/[a-z/.]+\?v=[0-9a-f]{20}", body.decode())


def test_every_module_of_the_board_is_served_from_its_folder(api: Api) -> None:
    modules = sorted(path.relative_to(WEB_ROOT).as_posix() for path in WEB_ROOT.rglob("*.js"))
    assert "views/board/index.js" in modules
    for module in modules:
        response = api.client.get(f"/static/{module}")
        assert response.status_code == 200, module
        assert response.headers["content-type"] == "text/javascript; charset=utf-8"
        assert response.content == (WEB_ROOT / module).read_bytes()


@pytest.mark.parametrize(
    "path",
    [
        "/static/nope.js",
        "/static/views/../../pages.py",
        "/static/views/board/.hidden.js",
        "/static/../pages.py",
        "/static/%2e%2e/pages.py",
        "/static/..%2fpages.py",
        "/static/.hidden",
        "/static/",
        "/static/index.html/x.js",
        "/static/app.py",
        "/projects/abc/board/more",
        "/tasks",
    ],
)
def test_nothing_else_is_served_and_misses_are_the_json_404(api: Api, path: str) -> None:
    response = api.client.get(path)
    assert response.status_code == 404, path
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_pages_stay_out_of_the_api_and_its_document(api: Api) -> None:
    response = api.client.get(f"{API}/projects/abc/board")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
    assert api.client.post("/", json={}).status_code in (404, 405)
    paths = api.client.get(f"{API}/openapi.json").json()["paths"]
    assert not [p for p in paths if not p.startswith((API, "/healthz", "/readyz"))]


@pytest.mark.parametrize(
    "raw_path", ["/static/../pages.py", "/static/../../pyproject.toml", "/static/a/../../app.py"]
)
def test_no_path_leaves_the_web_folder(app, raw_path: str) -> None:  # type: ignore[no-untyped-def]
    """As a server hands it over, unnormalized (an HTTP client would fold the dots away)."""
    import asyncio

    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": raw_path,
        "raw_path": raw_path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"testserver")],
        "scheme": "http",
        "server": ("testserver", 80),
        "client": ("127.0.0.1", 1),
        "http_version": "1.1",
        "asgi": {"version": "3.0"},
    }
    asyncio.run(app.router(scope, receive, send))
    assert sent[0]["status"] == 404
