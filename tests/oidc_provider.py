"""A real OpenID provider for the tests: the certified Node.js `oidc-provider` package,
installed by npm into a cache directory on first use and run as a process with
`tests/sso/provider.mjs`. Node serves the tests only. If it cannot be installed or started,
the tests that need it fail (never skip)."""

import fcntl
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.mailbox import free_port

VERSION = "9.13.3"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sprintboard-tests"
SCRIPT = Path(__file__).parent / "sso" / "provider.mjs"


def installed() -> Path:
    """The folder holding `node_modules/oidc-provider` (installed once, then reused; test
    processes that start at once take turns, by a lock file)."""
    folder = CACHE / f"oidc-provider-{VERSION}"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "node_modules" / "oidc-provider" / "package.json").exists():
            (folder / "package.json").write_text(json.dumps({"private": True, "type": "module"}))
            npm = shutil.which("npm")
            assert npm, "npm is needed to install the tests' OpenID provider (oidc-provider)"
            subprocess.run(
                [
                    npm,
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--prefix",
                    str(folder),
                    f"oidc-provider@{VERSION}",
                ],
                check=True,
                capture_output=True,
                timeout=300,
            )
    return folder


@dataclass
class Provider:
    issuer: str
    client_id: str
    client_secret: str

    def next_login(self, sub: str, email: str, *, verified: bool = True, name: str = "") -> None:
        claims: dict[str, Any] = {"sub": sub, "email": email, "email_verified": verified}
        if name:
            claims["name"] = name
        httpx.post(f"{self.issuer}/test/next-login", json=claims).raise_for_status()

    def tamper(self, mode: str | None) -> None:
        httpx.post(f"{self.issuer}/test/tamper", json={"mode": mode}).raise_for_status()


@contextmanager
def running_provider(redirect_uris: list[str]) -> Iterator[Provider]:
    folder = installed()
    script = folder / "provider.mjs"
    shutil.copyfile(SCRIPT, script)  # (beside its node_modules, where imports resolve)
    port = free_port()
    provider = Provider(f"http://127.0.0.1:{port}", "sprintboard-test", "a-client-secret-for-tests")
    node = shutil.which("node")
    assert node, "node is needed to run the tests' OpenID provider"
    log = (folder / f"provider-{port}.log").open("wb")  # (a pipe nobody reads could fill)
    process = subprocess.Popen(
        [node, str(script)],
        env={
            **os.environ,
            "PORT": str(port),
            "CLIENT_ID": provider.client_id,
            "CLIENT_SECRET": provider.client_secret,
            "REDIRECT_URIS": ",".join(redirect_uris),
        },
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, (folder / f"provider-{port}.log").read_text()
            try:
                if (
                    httpx.get(f"{provider.issuer}/.well-known/openid-configuration").status_code
                    == 200
                ):
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the OpenID provider did not start in 30 s"
            time.sleep(0.1)
        yield provider
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()
        (folder / f"provider-{port}.log").unlink(missing_ok=True)
