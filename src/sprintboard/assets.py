"""The web folder's files as the pages serve them: read once per change, each with its digest,
and the HTML pages with every `/static/` address versioned by that digest.

A page carries an import map from each module's address to `/static/<module>?v=<digest>`, and
its own `href`/`src` attributes say the same, so a browser that has a module keeps it (the
versioned address is served as immutable) and asks for nothing on the next load, while a
changed file has a new address at once. Modules go on importing each other by plain relative
paths: the map versions them, so a module's text (and digest) does not change when one it
imports does. The pages themselves are small and always revalidated.
"""

import base64
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path

STATIC_PREFIX = "/static/"
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

_STATIC_ATTRIBUTE = re.compile(r'\b(href|src)="/static/([A-Za-z0-9_./-]+)"')
_FIRST_RESOURCE = re.compile(r"<(?:link|script)\b")
"""The import map goes before the page's first link or script: a module (or a
`modulepreload`) fetched before the map would not be mapped."""


@dataclass(frozen=True, slots=True)
class File:
    body: bytes
    digest: str
    """The body's SHA-256, shortened: its `ETag` and its version in addresses."""
    last_modified: bytes
    content_type: bytes
    inline_script: str | None = None
    """A page's import map: the one inline script, which its CSP allows by this hash
    (`'sha256-<base64>'`)."""

    @property
    def etag(self) -> bytes:
        return f'"{self.digest}"'.encode()


class Assets:
    """The files under `root`, each read again only when its size or modification time
    changes (a deployment never serves a stale copy; development needs no restart)."""

    def __init__(self, root: Path, *, slots: Mapping[bytes, bytes] | None = None) -> None:
        self.root = root
        self.slots = dict(slots or {})
        """Placeholders in the pages and what replaces them (the SSO button, when configured)."""
        self._files: dict[Path, tuple[tuple[int, int], File]] = {}
        self._pages: dict[Path, tuple[tuple[str, ...], File]] = {}

    def read(self, path: Path) -> File | None:
        """The file at `path` (under the root), or None when there is none."""
        try:
            stat = path.stat()
        except OSError:
            return None
        if not path.is_file():
            return None
        version = (stat.st_mtime_ns, stat.st_size)
        cached = self._files.get(path)
        if cached is not None and cached[0] == version:
            return cached[1]
        try:
            body = path.read_bytes()
        except OSError:
            return None
        file = File(
            body=body,
            digest=hashlib.sha256(body).hexdigest()[:20],
            last_modified=formatdate(stat.st_mtime, usegmt=True).encode(),
            content_type=CONTENT_TYPES[path.suffix.lower()].encode(),
        )
        self._files[path] = (version, file)
        return file

    def page(self, path: Path) -> File | None:
        """The HTML page at `path` with its import map and versioned addresses."""
        html = self.read(path)
        if html is None:
            return None
        modules = self._module_digests()
        key = (html.digest, *(f"{name}={digest}" for name, digest in modules.items()))
        cached = self._pages.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        body = html.body
        for slot, filling in self.slots.items():
            body = body.replace(slot, filling)
        text, import_map = versioned_page(body.decode("utf-8"), modules, self._digest_of)
        script_hash = base64.b64encode(hashlib.sha256(import_map.encode("utf-8")).digest())
        page = File(
            body=text.encode("utf-8"),
            digest=hashlib.sha256(text.encode("utf-8")).hexdigest()[:20],
            last_modified=html.last_modified,
            content_type=html.content_type,
            inline_script=f"'sha256-{script_hash.decode('ascii')}'",
        )
        self._pages[path] = (key, page)
        return page

    def _module_digests(self) -> dict[str, str]:
        digests: dict[str, str] = {}
        for module in sorted(self.root.rglob("*.js")):
            file = self.read(module)
            if file is not None:
                digests[module.relative_to(self.root).as_posix()] = file.digest
        return digests

    def _digest_of(self, relative: str) -> str | None:
        file = self.read(self.root / relative)
        return None if file is None else file.digest


def versioned_page(
    html: str, modules: dict[str, str], digest_of: Callable[[str], str | None]
) -> tuple[str, str]:
    """`html` with an import map of `modules` (name → digest) and each `/static/` address of
    its attributes versioned (one with no file stays as it is); and the map's text."""

    def version(match: re.Match[str]) -> str:
        digest = modules.get(match[2]) or digest_of(match[2])
        if digest is None:
            return match[0]
        return f'{match[1]}="{STATIC_PREFIX}{match[2]}?v={digest}"'

    imports = {
        f"{STATIC_PREFIX}{name}": f"{STATIC_PREFIX}{name}?v={digest}"
        for name, digest in modules.items()
    }
    # (`</` escaped: the names are plain, but the map must never end its script early.)
    data = json.dumps({"imports": imports}, separators=(",", ":")).replace("</", "<\\/")
    import_map = f'<script type="importmap">{data}</script>\n  '
    html = _STATIC_ATTRIBUTE.sub(version, html)
    first = _FIRST_RESOURCE.search(html)
    at = first.start() if first else len(html)
    return html[:at] + import_map + html[at:], data
