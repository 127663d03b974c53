"""Rate limits: a budget per API key (or browser session), and a budget of failed
authentications per client address.

It is ASGI middleware around the routes, not a dependency, so that a request over budget is
refused before its body is read and before it opens a database session (on SQLite a write
session takes the database lock). To count without a query, a key is identified by the
SHA-256 of its secret: one secret is one key, and the digest is what the database stores.

Each budget is a fixed window (`SPRINTBOARD_RATE_LIMIT`, default `600/minute`, parsed by the
`limits` package), counted in this process, or in Redis through `limits`' RedisStorage when
`SPRINTBOARD_REDIS_URL` is set, so that every instance draws on one budget. A hit is two
storage calls: increment (which starts the window on its first hit) and read its expiry.
If Redis fails, each instance counts in its own process instead (as without Redis) and
tries Redis again after a few seconds, so an outage costs one short timeout per interval,
logged once, never an error to the client; responses keep their `RateLimit-*` headers.

Authenticated routes (everything under `/api/v1` but the OpenAPI document) get the
`RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` headers of the key's budget
whenever the request carries a key; every other response, and every 401, shows the client
address's budget of failed authentications. A response of 401 counts against the client
address; an address that has used up its failures gets 429 for every authenticated route
until its window resets.
"""

import hashlib
import logging
import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse
from limits.storage import RedisStorage, Storage
from starlette._utils import get_route_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sprintboard.config import Settings
from sprintboard.errors import RateLimited, error_response

logger = logging.getLogger("sprintboard.ratelimit")

API_PREFIX = "/api/v1/"
UNLIMITED_PATHS = frozenset({"/api/v1/openapi.json"})
REDIS_TIMEOUT = 0.25
"""Seconds a Redis call may take before the limiter gives up on it (and fails open)."""
OUTAGE_BACKOFF = 5.0
"""Seconds the limiter stays off after a storage failure before it tries the storage again."""


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    limit: int
    remaining: int
    reset: int
    """Seconds until the window resets."""

    def headers(self) -> list[tuple[bytes, bytes]]:
        return [
            (b"ratelimit-limit", str(self.limit).encode()),
            (b"ratelimit-remaining", str(self.remaining).encode()),
            (b"ratelimit-reset", str(self.reset).encode()),
        ]


class Outage:
    """Whether a storage is taken to be down: shared by the budgets kept in that storage."""

    def __init__(self) -> None:
        self.until = 0.0

    def ongoing(self) -> bool:
        return bool(self.until) and time.monotonic() < self.until

    def began(self, error: Exception) -> None:
        if not self.until:
            logger.warning("rate-limit storage unavailable, counting in this process: %r", error)
        self.until = time.monotonic() + OUTAGE_BACKOFF

    def ended(self) -> None:
        if self.until:
            logger.warning("rate-limit storage available again")
            self.until = 0.0


class Budget:
    """One limit (`600/minute`) counted per identifier in a `limits` storage."""

    def __init__(
        self, item: RateLimitItem, storage: "Counters", namespace: str, outage: Outage
    ) -> None:
        self.item = item
        self.storage = storage
        self.namespace = namespace
        self.outage = outage
        self._expiry = item.get_expiry()
        self._fallback = storage if isinstance(storage, LocalCounters) else LocalCounters()
        """Where this process counts while the shared storage is out."""

    def hit(self, identifier: str) -> Verdict:
        """Count one request."""
        return self._count(identifier, 1)

    def peek(self, identifier: str) -> Verdict:
        """The state of the budget without counting anything."""
        return self._count(identifier, 0)

    def _count(self, identifier: str, amount: int) -> Verdict:
        key = self.item.key_for(self.namespace, identifier)
        if not self.outage.ongoing():
            try:
                verdict = self._verdict(self.storage, key, amount)
            except Exception as error:
                self.outage.began(error)
            else:
                self.outage.ended()
                return verdict
        return self._verdict(self._fallback, key, amount)

    def _verdict(self, storage: "Counters", key: str, amount: int) -> Verdict:
        used = storage.incr(key, self._expiry, amount=amount) if amount else storage.get(key)
        reset_at = storage.get_expiry(key)
        limit = self.item.amount
        allowed = used <= limit if amount else used < limit
        reset = max(1, math.ceil(reset_at - time.time())) if used else 0
        return Verdict(allowed, limit, max(0, limit - used), reset)


class LocalCounters:
    """Fixed-window counters in this process: the part of the `limits` storage interface that
    `Budget` uses. `limits`' own MemoryStorage starts a timer thread on most increments
    (about 0.1 ms each), too dear on every request; here expired windows are swept lazily.
    """

    SWEEP_EVERY = 10_000

    def __init__(self) -> None:
        self._windows: dict[str, tuple[float, int]] = {}
        self._calls = 0

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        now = time.time()
        self._calls += 1
        if self._calls % self.SWEEP_EVERY == 0:
            self._windows = {k: w for k, w in self._windows.items() if w[0] > now}
        ends, used = self._windows.get(key, (0.0, 0))
        if ends <= now:
            ends, used = now + expiry, 0
        used += amount
        self._windows[key] = (ends, used)
        return used

    def get(self, key: str) -> int:
        ends, used = self._windows.get(key, (0.0, 0))
        return used if ends > time.time() else 0

    def get_expiry(self, key: str) -> float:
        ends, _ = self._windows.get(key, (0.0, 0))
        return max(ends, time.time())


Counters = Storage | LocalCounters


def make_storage(settings: Settings) -> Counters:
    if settings.redis_url:
        return RedisStorage(
            settings.redis_url,
            key_prefix=settings.rate_limit_prefix,
            socket_connect_timeout=REDIS_TIMEOUT,
            socket_timeout=REDIS_TIMEOUT,
        )
    return LocalCounters()


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, *, settings: Settings) -> None:
        self.app = app
        storage = make_storage(settings)
        outage = Outage()
        self.keys = Budget(parse(settings.rate_limit), storage, "key", outage)
        self.failures = Budget(parse(settings.auth_failure_limit), storage, "authfail", outage)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = client[0] if client else "unknown"
        path = get_route_path(scope)  # (less any root_path)
        if (
            not path.startswith(API_PREFIX)
            or path in UNLIMITED_PATHS
            or scope["method"] == "OPTIONS"
        ):
            # Not limited (health checks, the API's documents), but showing a budget as every
            # response does: the address's failed authentications, not counted here.
            await self.app(scope, receive, _with_headers(send, self.failures.peek(address), scope))
            return
        secret = _bearer_secret(scope)
        # Past its budget of failed authentications an address is refused whatever it sends
        # that fails to authenticate; a valid key still works, so one misbehaving client
        # behind a shared address cannot lock everyone else out. (A request with a key looks
        # at that budget only if its answer is a 401.)
        failures = self.failures.peek(address) if secret is None else None
        if failures is not None and not failures.allowed:
            await self._refuse(failures, scope, receive, send)
            return
        verdict = self.keys.hit(hashlib.sha256(secret).hexdigest()) if secret is not None else None
        if verdict is not None and not verdict.allowed:
            await self._refuse(verdict, scope, receive, send)
            return
        # Every API response shows a budget: the key's, or for a request without one, the
        # address's budget of failed authentications.
        shown = verdict if verdict is not None else failures
        shown_headers = shown.headers() if shown is not None else []
        scope.setdefault("state", {})[_SHOWN] = shown_headers
        refused: Verdict | None = None

        async def send_with_headers(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start":
                headers = shown_headers
                if message["status"] == 401:
                    # A failed authentication counts against the address, and its answer
                    # shows that budget (not the budget of a key that does not authenticate);
                    # past it, a request that sent a key gets the 429 instead.
                    failed = self.failures.hit(address)
                    headers = failed.headers()
                    if secret is not None and not failed.allowed:
                        refused = failed
                if headers:
                    message["headers"] = [*message.get("headers", []), *headers]
            if refused is None:
                await send(message)

        await self.app(scope, receive, send_with_headers)
        if refused is not None:
            await self._refuse(refused, scope, receive, send)

    @staticmethod
    async def _refuse(verdict: Verdict, scope: Scope, receive: Receive, send: Send) -> None:
        error = RateLimited(retry_after=max(1, verdict.reset))
        response = error_response(error.status, error.code, error.message, error.details)
        response.raw_headers += [
            (b"retry-after", str(error.details["retryAfter"]).encode()),
            *verdict.headers(),
        ]
        await response(scope, receive, send)


_SHOWN = "rate_limit_headers"


def shown_headers(scope: Scope) -> list[tuple[bytes, bytes]]:
    """The headers this request's response shows (or would have shown): for a 500 that the
    outermost layer answers once the request has failed on its way through this one."""
    headers: list[tuple[bytes, bytes]] = scope.get("state", {}).get(_SHOWN, [])
    return headers


def _with_headers(send: Send, verdict: Verdict, scope: Scope) -> Send:
    headers = verdict.headers()
    scope.setdefault("state", {})[_SHOWN] = headers

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *headers]
        await send(message)

    return send_with_headers


def _bearer_secret(scope: Scope) -> bytes | None:
    """The request's credential: its bearer key or, without `Authorization`, its browser
    session's token (`sb_session`). A session has a budget of its own, as a key has.
    (NOTE for the per-user budget: a session belongs to one user, `browser_sessions.user_id`.)
    """
    cookies: bytes | None = None
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, secret = value.partition(b" ")
            secret = bytes(secret.strip())
            if scheme.lower() == b"bearer" and secret:
                return secret
            return None
        if name == b"cookie":
            cookies = value
    return _session_token(cookies) if cookies is not None else None


def _session_token(cookies: bytes) -> bytes | None:
    for pair in cookies.split(b";"):
        name, _, value = pair.strip().partition(b"=")
        if name == _SESSION_COOKIE and value:
            return value
    return None


_SESSION_COOKIE = b"sb_session"
