"""Idempotent POSTs: a client that sends `Idempotency-Key` may repeat the request safely.

Per API key and `Idempotency-Key`, for 24 hours:
- the first request claims the key: a row is inserted and committed in its own short
  transaction *before* the request runs, so of concurrent duplicates exactly one wins the
  unique constraint (`api_key_id`, `idempotency_key`);
- its successful (2xx) response is written into that row in the request's own transaction
  (`save_response`, called by the route just before it commits), so "created" and
  "remembered" commit together or not at all; any other outcome deletes the claim, so the
  client may retry;
- a repeat with the same method, path and body gets the stored status, body and headers
  (`Content-Type`, `Location`, `ETag`) plus `Idempotent-Replayed: true`, and creates nothing
  (a new API key's or webhook's secret is never stored in the clear: its replay shows
  `key: null` or `secret: null`);
- a repeat with another body is 409 `idempotency_key_reused`;
- a repeat while the first is still running waits for it (up to `WAIT_SECONDS`), then replays
  it, or answers 409 `idempotency_key_in_progress`. A claim left by a process that died is
  taken over once it is `ABANDONED_AFTER` old: its request never committed, so nothing exists.

This is ASGI middleware (it must see the raw body and run before the request's transaction
opens); requests without the header, or without a key that authenticates, pass straight
through. Rows expire by age and are purged as new ones are written.
"""

import asyncio
import hashlib
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sprintboard.credentials import bearer_secret, hash_secret
from sprintboard.db import Database
from sprintboard.errors import Conflict, InvalidRequest, error_response
from sprintboard.http.authentication import Authentication
from sprintboard.models import IdempotentRequest, utcnow

logger = logging.getLogger("sprintboard.idempotency")

HEADER = "Idempotency-Key"
TTL = timedelta(hours=24)
ABANDONED_AFTER = timedelta(minutes=1)
WAIT_SECONDS = 10.0
POLL_SECONDS = 0.05
PURGE_EVERY_SECONDS = 60.0
MAX_KEY_LENGTH = 255
REPLAYED_HEADERS = frozenset({"content-type", "location", "etag"})
_STATE = "idempotency_claim"
_SECRET_SHOWN_ONCE = (
    (re.compile(r"^/api/v1/(users/[^/]+/)?keys$"), "key"),
    (re.compile(r"^/api/v1/workspaces/[^/]+/webhooks$"), "secret"),
    (re.compile(r"^/api/v1/workspaces/[^/]+/integrations$"), "secret"),
    (re.compile(r"^/api/v1/workspaces/[^/]+/invitations$"), "url"),
)
"""Creates whose response shows a secret once: (path, the field that holds it)."""


@dataclass(slots=True)
class Claim:
    """This request holds the key; `saved` once its response is in the request's transaction."""

    row_id: str
    saved: bool = False


def save_response(session: Session, request: Request, response: Response) -> None:
    """Remember a successful response in the request's transaction (no-op without a claim)."""
    claim: Claim | None = request.scope.get("state", {}).get(_STATE)
    if claim is None or not 200 <= response.status_code < 300:
        return
    body = getattr(response, "body", None)
    if not isinstance(body, bytes):
        return
    body = _without_secret(request.scope["path"], body)
    session.execute(
        update(IdempotentRequest)
        .where(IdempotentRequest.id == claim.row_id)
        .values(
            status_code=response.status_code,
            response_body=body,
            response_headers=_kept_headers(response.raw_headers),
        )
    )
    claim.saved = True


def forget_saved_response(request: Request) -> None:
    """The request's transaction was rolled back, and with it the response it had saved."""
    claim: Claim | None = request.scope.get("state", {}).get(_STATE)
    if claim is not None:
        claim.saved = False


class IdempotencyMiddleware:
    def __init__(self, app: ASGIApp, *, authentication: Authentication) -> None:
        self.app = app
        self.key_owner = authentication.key_owner
        self._purged_at = 0.0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        key = _header(scope, b"idempotency-key")
        secret = bearer_secret(scope["headers"])
        if key is None or secret is None:
            await self.app(scope, receive, send)
            return
        if not 1 <= len(key) <= MAX_KEY_LENGTH or not key.isprintable() or not key.isascii():
            reason = "too_long" if len(key) > MAX_KEY_LENGTH else "invalid_value"
            error = InvalidRequest(
                HEADER, reason, f"{HEADER}: 1 to {MAX_KEY_LENGTH} printable ASCII characters."
            )
            await error_response(error.status, error.code, error.message, error.details)(
                scope, receive, send
            )
            return
        database: Database = scope["app"].state.database
        api_key_id = await database.call(_api_key_id, database, hash_secret(secret), self.key_owner)
        if api_key_id is None:
            await self.app(scope, receive, send)
            return
        body, receive = await _read_body(receive)
        fingerprint = hashlib.sha256(
            b"\0".join(
                [
                    scope["method"].encode(),
                    scope["path"].encode(),
                    scope["query_string"],
                    _canonical(body),
                ]
            )
        ).hexdigest()
        await database.call(self._purge_expired, database)
        outcome = await _claim(database, api_key_id, key, fingerprint)
        if not isinstance(outcome, Claim):
            await outcome(scope, receive, send)
            return
        scope.setdefault("state", {})[_STATE] = outcome
        status = 0
        headers: list[tuple[bytes, bytes]] = []
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal status, headers
            if message["type"] == "http.response.start":
                status, headers = message["status"], list(message.get("headers", []))
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, capture)
        finally:
            body = b"".join(chunks)
            await database.call(_settle, database, outcome, scope["path"], status, headers, body)

    def _purge_expired(self, database: Database) -> None:
        now = time.monotonic()
        if now - self._purged_at < PURGE_EVERY_SECONDS:
            return
        self._purged_at = now
        with database.transaction() as session:
            session.execute(
                delete(IdempotentRequest).where(IdempotentRequest.created_at < utcnow() - TTL)
            )


async def _claim(
    database: Database, api_key_id: str, key: str, fingerprint: str
) -> Claim | Response:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        outcome = await database.call(_try_claim, database, api_key_id, key, fingerprint, deadline)
        if outcome is not None:
            return outcome
        await asyncio.sleep(POLL_SECONDS)


def _try_claim(
    database: Database, api_key_id: str, key: str, fingerprint: str, deadline: float
) -> Claim | Response | None:
    """The key's claim, the answer to give instead, or None: the first request with this
    key is still in progress, ask again shortly."""
    while True:
        row_id = _insert(database, api_key_id, key, fingerprint)
        if row_id is not None:
            return Claim(row_id)
        with database.session(write=False) as session:
            row = session.scalar(
                select(IdempotentRequest).where(
                    IdempotentRequest.api_key_id == api_key_id,
                    IdempotentRequest.idempotency_key == key,
                )
            )
        if row is None:
            continue  # the first request failed and let go of the key: try to take it
        now = utcnow()
        if row.created_at <= now - TTL:
            _release(database, row.id, row.created_at)
            continue
        if row.request_hash != fingerprint:
            return _conflict(
                "idempotency_key_reused",
                f"This {HEADER} was used for a different request.",
            )
        if row.status_code is not None:
            return _replay(row)
        if row.created_at <= now - ABANDONED_AFTER and _take_over(database, row.id, row.created_at):
            return Claim(row.id)
        if time.monotonic() >= deadline:
            return _conflict(
                "idempotency_key_in_progress",
                f"A request with this {HEADER} is still in progress; retry later.",
            )
        return None


def _insert(database: Database, api_key_id: str, key: str, fingerprint: str) -> str | None:
    try:
        with database.transaction() as session:
            row = IdempotentRequest(
                api_key_id=api_key_id, idempotency_key=key, request_hash=fingerprint
            )
            session.add(row)
            session.flush()
            return row.id
    except IntegrityError:
        return None


def _take_over(database: Database, row_id: str, created_at: datetime) -> bool:
    """Claim a key whose first request died with its process (compare-and-set on its age)."""
    with database.transaction() as session:
        result = session.execute(
            update(IdempotentRequest)
            .where(
                IdempotentRequest.id == row_id,
                IdempotentRequest.status_code.is_(None),
                IdempotentRequest.created_at == created_at,
            )
            .values(created_at=utcnow())
        )
        return bool(getattr(result, "rowcount", 0))


def _release(database: Database, row_id: str, created_at: datetime | None = None) -> None:
    condition = [IdempotentRequest.id == row_id]
    if created_at is None:
        condition.append(IdempotentRequest.status_code.is_(None))
    else:
        condition.append(IdempotentRequest.created_at == created_at)
    with database.transaction() as session:
        session.execute(delete(IdempotentRequest).where(*condition))


def _settle(
    database: Database,
    claim: Claim,
    path: str,
    status: int,
    headers: list[tuple[bytes, bytes]],
    body: bytes,
) -> None:
    """After the request: keep a success the route did not save itself, else let go."""
    try:
        if 200 <= status < 300:
            if claim.saved:
                return
            body = _without_secret(path, body)
            with database.transaction() as session:
                session.execute(
                    update(IdempotentRequest)
                    .where(IdempotentRequest.id == claim.row_id)
                    .values(
                        status_code=status,
                        response_body=body,
                        response_headers=_kept_headers(headers),
                    )
                )
        else:
            _release(database, claim.row_id)
    except Exception:
        # The claim then expires as abandoned; the response the client got stands.
        logger.exception("could not settle an idempotency key")


def _without_secret(path: str, body: bytes) -> bytes:
    """A new API key's secret is stored only as a hash, and a new webhook's only encrypted,
    so a replay shows the record without it (`key: null`, `secret: null`): the record is the
    same, and a client that lost the secret revokes the key or replaces the webhook.
    """
    field = next((name for pattern, name in _SECRET_SHOWN_ONCE if pattern.match(path)), None)
    if field is None:
        return body
    document = orjson.loads(body)
    if isinstance(document.get("data"), dict) and field in document["data"]:
        document["data"][field] = None
    return orjson.dumps(document)


def _replay(row: IdempotentRequest) -> Response:
    headers: dict[str, Any] = dict(row.response_headers or {})
    headers["Idempotent-Replayed"] = "true"
    return Response(row.response_body or b"", status_code=row.status_code or 200, headers=headers)


def _conflict(reason: str, message: str) -> Response:
    error = Conflict(reason, message)
    return error_response(error.status, error.code, error.message, error.details)


def _kept_headers(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    return {
        name.decode("latin-1"): value.decode("latin-1")
        for name, value in headers
        if name.lower().decode("latin-1") in REPLAYED_HEADERS
    }


def _api_key_id(
    database: Database, secret_hash: str, key_owner: Callable[[Session, str], Any]
) -> str | None:
    """The key's id if it may be used (`Authentication.key_owner`); the route then answers
    401 to anything else, a repeat included."""
    with database.session(write=False) as session:
        usable = key_owner(session, secret_hash)
    return usable[0] if usable is not None else None


def _canonical(body: bytes) -> bytes:
    """The body as JSON with sorted keys and no spacing, so equal documents compare equal."""
    try:
        return orjson.dumps(orjson.loads(body), option=orjson.OPT_SORT_KEYS)
    except orjson.JSONDecodeError:
        return body


async def _read_body(receive: Receive) -> tuple[bytes, Receive]:
    """The whole body (the body guard outside has bounded it), and a `receive` that replays it."""
    messages: list[Message] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")

    async def replayed() -> Message:
        if messages:
            return messages.pop(0)
        return await receive()

    return body, replayed


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1").strip())
    return None
