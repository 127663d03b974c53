"""Integrations and their forges' deliveries, signed as each forge signs them."""

import hashlib
import hmac
import json
import uuid
from pathlib import Path
from typing import Any

import httpx

from tests.factories import Api

FORGES = Path(__file__).parent.parent / "data" / "forges"
EVENT_HEADER = {"github": "X-GitHub-Event", "gitea": "X-Gitea-Event", "gitlab": "X-Gitlab-Event"}
DELIVERY_HEADER = {
    "github": "X-GitHub-Delivery",
    "gitea": "X-Gitea-Delivery",
    "gitlab": "X-Gitlab-Event-UUID",
}
PULL_REQUEST = {"github": "pull_request", "gitea": "pull_request", "gitlab": "Merge Request Hook"}
PUSH = {"github": "push", "gitea": "push", "gitlab": "Push Hook"}


def example(name: str) -> Any:
    """A forge's published example payload (tests/data/forges/SOURCES.md)."""
    return json.loads((FORGES / name).read_text())


def make_integration(api: Api, workspace_id: str, provider: str, **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = api.ok(
        "POST", f"/workspaces/{workspace_id}/integrations", {"provider": provider, **fields}
    )
    return data


def signature_headers(provider: str, secret: str, body: bytes) -> dict[str, str]:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if provider == "github":
        return {"X-Hub-Signature-256": f"sha256={digest}"}
    if provider == "gitea":
        return {"X-Gitea-Signature": digest}
    return {"X-Gitlab-Token": secret}


def deliver(
    api: Api,
    integration: dict[str, Any],
    event: str,
    payload: Any,
    *,
    delivery_id: str | None = None,
    secret: str | None = None,
    body: bytes | None = None,
) -> httpx.Response:
    """POSTs the delivery to the integration's `url`, as the forge would (no API key)."""
    provider = integration["provider"]
    body = body if body is not None else json.dumps(payload).encode()
    headers = {
        "Content-Type": "application/json",
        EVENT_HEADER[provider]: event,
        DELIVERY_HEADER[provider]: delivery_id or str(uuid.uuid4()),
        **signature_headers(provider, secret or integration["secret"], body),
    }
    return api.as_(None).request("POST", integration["url"], content=body, headers=headers)
