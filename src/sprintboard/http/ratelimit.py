"""Rate limits: a budget per user, across all their keys and browser sessions, and a budget
of failed authentications per client address.

It is ASGI middleware around the routes, not a dependency, so that a request over budget is
refused before its body is read and before it opens a database session (on SQLite a write
session takes the database lock). The budget is the user's, not the key's: a user who mints
more keys gets no more requests (contract §14). Which user a key belongs to never changes, so
each process remembers it (`KeyOwners`) after one indexed lookup of the key's SHA-256; a key
that stops authenticating (revoked, expired, its user deactivated) is forgotten at its first
401, and from then on counts as no key.

Each budget is a fixed window (`SPRINTBOARD_RATE_LIMIT`, default `600/minute`, parsed by the
`limits` package), counted in this process, or in Redis through `limits`' RedisStorage when
`SPRINTBOARD_REDIS_URL` is set, so that every instance draws on one budget. A hit is two
storage calls: increment (which starts the window on its first hit) and read its expiry.
If Redis fails, each instance counts in its own process instead (as without Redis) and
tries Redis again after a few seconds, so an outage costs one short timeout per interval,
logged once, never an error to the client; responses keep their `RateLimit-*` headers.

Authenticated routes (everything under `/api/v1` but the OpenAPI document) get the
`RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` headers of the user's budget
whenever the request carries a usable key; every other response, and every 401, shows the
client address's budget of failed authentications. A response of 401 (or a failed password
sign-in from the HTML form, which answers 303) counts against the client address
(`scope["client"]`, as `addresses.py` resolved it: forwarding headers only from trusted
proxies); an address that has used up its failures gets 429 for every authenticated route
until its window resets.
"""

import logging
import math
import re
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse
from limits.storage import RedisStorage, Storage
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sprintboard.config import Settings
from sprintboard.credentials import bearer_secret, counts_as_failure, hash_secret, well_formed
from sprintboard.db import Database
from sprintboard.errors import RateLimited, error_response
from sprintboard.http.authentication import Authentication
from sprintboard.http.framework import route_path

logger = logging.getLogger("sprintboard.ratelimit")

API_PREFIX = "/api/v1/"
UNLIMITED_PATHS = frozenset({"/api/v1/openapi.json"})
_HOOK = re.compile(r"^/api/v1/integrations/([^/]+)/hooks$")
"""A forge's webhook (contract §20): no key; its signed deliveries draw on a budget of the
integration's own."""
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


class KeyOwners:
    """Which user each key secret belongs to, remembered in this process (by the secret's
    SHA-256, as the database stores it). Only keys that authenticate are remembered, so an
    unknown secret costs a lookup each time (the failed-authentication budget bounds that)."""

    MAX_REMEMBERED = 100_000

    def __init__(self, authentication: Authentication) -> None:
        self._owners: dict[str, str] = {}
        self.authentication = authentication

    async def owner(self, scope: Scope, secret: str) -> str | None:
        if not well_formed(secret):
            return None
        digest = hash_secret(secret)
        owner = self._owners.get(digest)
        if owner is None:
            database: Database = scope["app"].state.database
            usable = await database.call(_usable_key, database, digest, self.authentication)
            if usable is None:
                return None
            if len(self._owners) >= self.MAX_REMEMBERED:
                self._owners.clear()
            owner = self._owners[digest] = usable[1]
        return owner

    async def session_owner(self, scope: Scope, token: str) -> str | None:
        """The user a browser session (its cookie's token) acts for: sessions draw on their
        user's budget as keys do."""
        if not self.authentication.well_formed_session(token):
            return None
        digest = "session:" + hash_secret(token)
        owner = self._owners.get(digest)
        if owner is None:
            database: Database = scope["app"].state.database
            owner = await database.call(
                _session_owner, database, digest.removeprefix("session:"), self.authentication
            )
            if owner is None:
                return None
            if len(self._owners) >= self.MAX_REMEMBERED:
                self._owners.clear()
            self._owners[digest] = owner
        return owner

    def forget(self, secret: str) -> None:
        self._owners.pop(hash_secret(secret), None)

    def forget_session(self, token: str) -> None:
        self._owners.pop("session:" + hash_secret(token), None)


def _usable_key(
    database: Database, digest: str, authentication: Authentication
) -> tuple[str, str] | None:
    with database.session(write=False) as session:
        return authentication.key_owner(session, digest)


def _session_owner(
    database: Database, token_hash: str, authentication: Authentication
) -> str | None:
    with database.session(write=False) as session:
        return authentication.session_owner(session, token_hash)


def _session_token(scope: Scope, cookie: str) -> str | None:
    """The browser session's token (`sb_session`) of a request without `Authorization`."""
    for name, value in scope["headers"]:
        if name == b"cookie":
            return cookie_parser(value.decode("latin-1")).get(cookie) or None
    return None


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, *, settings: Settings, authentication: Authentication) -> None:
        self.app = app
        storage = make_storage(settings)
        outage = Outage()
        self.cookie = authentication.cookie
        self.owners = KeyOwners(authentication)
        self.users = Budget(parse(settings.rate_limit), storage, "user", outage)
        self.failures = Budget(parse(settings.auth_failure_limit), storage, "authfail", outage)
        self.integrations = Budget(parse(settings.rate_limit), storage, "integration", outage)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = client[0] if client else "unknown"
        path = route_path(scope)  # (less any root_path)
        if (
            not path.startswith(API_PREFIX)
            or path in UNLIMITED_PATHS
            or scope["method"] == "OPTIONS"
        ):
            # Not limited (health checks, the API's documents), but showing a budget as every
            # response does: the address's failed authentications, not counted here.
            await self.app(scope, receive, _with_headers(send, self.failures.peek(address), scope))
            return
        secret = bearer_secret(scope["headers"])
        token = (
            _session_token(scope, self.cookie)
            if secret is None and not _has_authorization(scope)
            else None
        )
        if secret is not None:
            owner = await self.owners.owner(scope, secret)
        elif token is not None:
            owner = await self.owners.session_owner(scope, token)
        else:
            owner = None
        # Past its budget of failed authentications an address is refused whatever it sends
        # that fails to authenticate; a valid key still works, so one misbehaving client
        # behind a shared address cannot lock everyone else out.
        failures = self.failures.peek(address) if owner is None else None
        if failures is not None and not failures.allowed:
            await self._refuse(failures, scope, receive, send)
            return
        verdict = self.users.hit(owner) if owner is not None else None
        if verdict is not None and not verdict.allowed:
            await self._refuse(verdict, scope, receive, send)
            return
        hook = _HOOK.match(path) if owner is None else None
        integration = hook[1] if hook is not None else None
        if integration is not None:
            # Only signed deliveries count (below), so that unsigned ones, which count
            # against their address, cannot spend the forge's budget.
            budget = self.integrations.peek(integration)
            if not budget.allowed:
                await self._refuse(budget, scope, receive, send)
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
                if message["status"] == 401 or counts_as_failure(scope):
                    # A failed authentication counts against the address, and its answer
                    # shows that budget (not the budget of a key that does not authenticate);
                    # past it, a request that sent a key gets the 429 instead.
                    failed = self.failures.hit(address)
                    headers = failed.headers()
                    if secret is not None:
                        self.owners.forget(secret)  # (revoked, expired or deactivated since)
                    if token is not None:
                        self.owners.forget_session(token)
                    if (secret is not None or token is not None) and not failed.allowed:
                        refused = failed
                elif integration is not None:
                    headers = self.integrations.hit(integration).headers()
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


def _has_authorization(scope: Scope) -> bool:
    return any(name == b"authorization" for name, _ in scope["headers"])
