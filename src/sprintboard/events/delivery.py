"""Delivering webhook events: signed (Standard Webhooks), at least once, in order per subject,
and each webhook on its own: one whose receiver is slow or dead holds up only its own queue.

A worker (`run_worker`) loops over three steps, and never waits for a slow send:

1. *Claim*, in one short transaction: the due deliveries that have no earlier pending
   delivery for the same webhook and subject (so event N+1 for a work item never overtakes
   event N), up to `batch_size` in flight per webhook (so a dead receiver ties up only its
   own share), locked with `FOR UPDATE SKIP LOCKED` on PostgreSQL (on SQLite the write
   transaction's `BEGIN IMMEDIATE` makes the claimer the only writer), and leased:
   `attempts + 1` and `next_attempt_at` pushed past the longest a send can take. Another
   worker skips a leased delivery — and its successors, which stay blocked because it is
   still pending — until the lease runs out.
2. *Send*, outside any transaction, over `httpx.AsyncClient` with a timeout, to public
   addresses only unless allowed (`targets.GuardedTransport`), never following a redirect.
   Each is sent as soon as it is claimed; the `webhook-id` is the delivery's `$id`, the
   same on every attempt.
3. *Settle* each delivery as its answer arrives (with any others that arrived meanwhile),
   in a short transaction: delivered, or retried with exponential backoff, or failed. A
   webhook that has failed for `give_up_after` (a day) without one success is disabled,
   with the reason, and its pending deliveries fail with it.

The worker claims again as soon as outcomes are recorded or new deliveries are written. A
worker that dies mid-send loses nothing and repeats only what was not yet answered: the
lease expires and another worker sends those again (at least once; receivers deduplicate
by `webhook-id`).
"""

import asyncio
import contextlib
import functools
import logging
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import httpx
import orjson
from cryptography.fernet import InvalidToken
from sqlalchemy import Table, bindparam, exists, func, select, update
from sqlalchemy.orm import Session, aliased
from standardwebhooks import Webhook as Signer

from sprintboard.db import Database, is_unavailable
from sprintboard.events.service import DELIVERIES_WRITTEN
from sprintboard.events.targets import GuardedTransport
from sprintboard.models import Event, Webhook, WebhookDelivery, utcnow
from sprintboard.responses import iso
from sprintboard.serverkey import SecretBox

if TYPE_CHECKING:  # (its Redis client costs 6 MiB, which a process without Redis does without)
    from sprintboard.events.fanout import RedisFanOut

logger = logging.getLogger("sprintboard.webhooks")

PENDING, DELIVERED, FAILED = "PENDING", "DELIVERED", "FAILED"
USER_AGENT = "sprintboard-webhooks/1.0"
MAX_RESPONSE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class DeliveryOptions:
    timeout: float = 10.0
    """Seconds a request may take, all told."""
    backoff_base: float = 5.0
    """Seconds before the first retry; each further retry waits twice as long (with jitter)."""
    backoff_max: float = 3600.0
    give_up_after: timedelta = timedelta(hours=24)
    """A webhook failing this long is disabled; a delivery failing this long fails."""
    batch_size: int = 50
    """Deliveries of one webhook in flight (sent concurrently) at most, per worker."""
    max_webhooks: int = 100
    """Webhooks one claim takes deliveries of, at most: each owner's first before any
    owner's second (`claim_due`)."""
    owner_limit: int = 100
    """Deliveries in flight of all the webhooks of one owner (the user who made them), at
    most, per worker: a user's 100 slow webhooks take one share, not 100."""
    shutdown_grace: float = 1.0
    """Seconds a stopping worker lets its sends finish; those still out are abandoned and
    their leases released, so any worker sends them again soon."""
    poll_interval: float = 1.0
    """Seconds a worker waits when nothing was due."""
    lease_margin: float = 30.0
    """A claim outlives the longest send by this much before another worker may retry it."""
    box: SecretBox | None = None
    """Opens the webhooks' secrets; without it nothing can be signed (or sent)."""
    allow_private: bool = False
    """Whether receivers may be at non-public addresses (`SPRINTBOARD_WEBHOOK_ALLOW_PRIVATE`)."""

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.timeout + self.lease_margin)

    def backoff(self, attempts: int) -> timedelta:
        delay = min(self.backoff_max, self.backoff_base * 2 ** max(attempts - 1, 0))
        return timedelta(seconds=delay * random.uniform(0.8, 1.2))


@dataclass(frozen=True, slots=True)
class Claimed:
    id: str
    attempts: int
    webhook_id: str
    url: str
    secret: str | None
    """None: it could not be opened (sealed under another server key)."""
    body: bytes
    created_at: datetime
    owner: str = ""
    """Whose webhook it is: the user who made it (or its workspace, for one without)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    delivery: Claimed
    response_status: int | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.response_status is not None and 200 <= self.response_status < 300


async def deliver_due(
    database: Database,
    *,
    limit: int,
    options: DeliveryOptions | None = None,
    client: httpx.AsyncClient | None = None,
) -> int:
    """One round: claim up to `limit` due deliveries per webhook, send them, record each
    outcome as it arrives. Returns how many were attempted (0: nothing is due)."""
    options = options or DeliveryOptions()
    claimed = await database.call(
        functools.partial(claim_due, database, limit=limit, options=options)
    )
    if not claimed:
        return 0
    async with contextlib.AsyncExitStack() as stack:
        if client is None:
            client = await stack.enter_async_context(http_client(options))
        recorder = Recorder(database, options)
        recording = asyncio.create_task(recorder.run())
        await asyncio.gather(*[recorder.start(client, delivery) for delivery in claimed])
        recorder.close()
        await recording
    return len(claimed)


class Recorder:
    """Records outcomes as they arrive: those that arrive while others are being written
    are written together, in one transaction, and none waits for a slower send. So a
    delivery answered 2xx is not sent again because a sibling is slow or the worker dies."""

    def __init__(self, database: Database, options: DeliveryOptions) -> None:
        self.database = database
        self.options = options
        self.in_flight: dict[str, int] = {}
        """Deliveries sent and not yet recorded, per webhook."""
        self.owners: dict[str, int] = {}
        """The same, per owner (`Claimed.owner`)."""
        self.recorded = asyncio.Event()
        self._outcomes: asyncio.Queue[Outcome | None] = asyncio.Queue()

    def start(self, client: httpx.AsyncClient, delivery: Claimed) -> "asyncio.Task[None]":
        """Sends `delivery` (counted in flight from now on) and records its outcome."""
        self.in_flight[delivery.webhook_id] = self.in_flight.get(delivery.webhook_id, 0) + 1
        self.owners[delivery.owner] = self.owners.get(delivery.owner, 0) + 1
        return asyncio.create_task(self._send(client, delivery))

    async def _send(self, client: httpx.AsyncClient, delivery: Claimed) -> None:
        try:
            outcome = await send(client, delivery, self.options)
        except Exception as error:  # (whatever it was, the attempt failed: record it)
            outcome = Outcome(delivery, None, f"{type(error).__name__}: {error}"[:1000])
        self._outcomes.put_nowait(outcome)

    def close(self) -> None:
        """No more sends: `run` returns once the outcomes so far are recorded."""
        self._outcomes.put_nowait(None)

    async def run(self) -> None:
        closed = False
        while not closed:
            arrived = [await self._outcomes.get()]
            while not self._outcomes.empty():
                arrived.append(self._outcomes.get_nowait())
            outcomes = [outcome for outcome in arrived if outcome is not None]
            closed = len(outcomes) < len(arrived)
            try:
                await self.database.call(settle, self.database, outcomes, self.options)
            except Exception:  # (their leases run out, and they are sent again)
                logger.exception("could not record the outcomes of webhook deliveries")
            for outcome in outcomes:
                self.done(outcome.delivery)
            self.recorded.set()

    def done(self, delivery: Claimed) -> None:
        """`delivery` is no longer in flight."""
        for counts, key in ((self.in_flight, delivery.webhook_id), (self.owners, delivery.owner)):
            counts[key] -= 1
            if not counts[key]:
                del counts[key]


async def run_worker(
    database: Database,
    *,
    options: DeliveryOptions | None = None,
    stop: asyncio.Event | None = None,
    fan_out: "RedisFanOut | None" = None,
) -> None:
    """Deliver until `stop` is set. Each delivery is sent as soon as it is claimed, and the
    loop claims again whenever outcomes are recorded or new deliveries are written (a commit
    in this process, or through Redis (`fan_out`) in any other), else at the next poll:
    never waiting for a slow send. A webhook has at most `batch_size` sends in flight, so a
    dead receiver ties up only its own share. Sends in flight when `stop` is set finish."""
    options = options or DeliveryOptions()
    stop = stop or asyncio.Event()
    recorder = Recorder(database, options)
    wake = recorder.recorded
    sends: dict[asyncio.Task[None], Claimed] = {}
    outage = 0  # (claims failed in a row: the pause between claims doubles with each)
    async with contextlib.AsyncExitStack() as stack:
        client = await stack.enter_async_context(http_client(options))
        recording = asyncio.create_task(recorder.run(), name="delivery outcomes")
        stack.push_async_callback(_finished, database, sends, recorder, recording, options)
        stack.enter_context(DELIVERIES_WRITTEN.listening(wake.set))
        if fan_out is not None:
            listener = asyncio.create_task(fan_out.listen(wake), name="delivery announcements")
            stack.push_async_callback(_cancelled, listener)
        while not stop.is_set():
            wake.clear()
            claimed: list[Claimed] = []
            try:
                claimed = await database.call(
                    functools.partial(
                        claim_due,
                        database,
                        limit=options.batch_size,
                        options=options,
                        busy=dict(recorder.in_flight),
                        busy_owners=dict(recorder.owners),
                    )
                )
            except Exception as error:
                outage = _outage(outage, error)
            else:
                if outage:
                    logger.warning("the database answers again: delivering webhooks")
                outage = 0
            for delivery in claimed:
                task = recorder.start(client, delivery)
                sends[task] = delivery
                task.add_done_callback(sends.pop)
            if not claimed:
                pause = min(options.poll_interval * 2 ** max(outage - 1, 0), MAX_OUTAGE_PAUSE)
                await _first_of(stop, wake, timeout=pause)


MAX_OUTAGE_PAUSE = 30.0
"""Seconds at most between a worker's claims while the database cannot be reached."""


def _outage(failures: int, error: Exception) -> int:
    """Count a failed claim and log it: a database that cannot be reached is one warning line
    when the outage begins (not a traceback a second), anything else a traceback."""
    if not is_unavailable(error):
        logger.exception("claiming webhook deliveries failed; retrying")
    elif not failures:
        logger.warning(
            "the database cannot be reached (%s); webhook delivery waits for it",
            type(error).__name__,
        )
    return failures + 1


async def _finished(
    database: Database,
    sends: dict["asyncio.Task[None]", Claimed],
    recorder: Recorder,
    recording: "asyncio.Task[None]",
    options: DeliveryOptions,
) -> None:
    """Lets the sends in flight finish for `shutdown_grace` seconds and records their
    outcomes; abandons the rest, releasing their leases so that they are sent again soon
    (a send never answered is not lost: it is still pending). A stop under a backlog of
    slow receivers took the whole send timeout (~95 s) before."""
    try:
        if sends:
            await asyncio.wait(list(sends), timeout=options.shutdown_grace)
        abandoned = [delivery for task, delivery in list(sends.items()) if not task.done()]
        for task in list(sends):
            task.cancel()
        for delivery in abandoned:
            recorder.done(delivery)
        recorder.close()
        await recording
        if abandoned:
            await database.call(_release, database, [d.id for d in abandoned])
    finally:
        recording.cancel()


def _release(database: Database, ids: list[str]) -> None:
    """Leases given back: these deliveries were claimed but never answered (the attempt does
    not count), and are due again now."""
    with database.transaction() as session:
        session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id.in_(ids), WebhookDelivery.status == PENDING)
            .values(attempts=WebhookDelivery.attempts - 1, next_attempt_at=utcnow())
            .execution_options(synchronize_session=False)
        )


async def _cancelled(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _first_of(*events: asyncio.Event, timeout: float) -> None:
    """Wait until one of `events` is set, or `timeout` seconds."""
    waits = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


def http_client(options: DeliveryOptions) -> httpx.AsyncClient:
    # trust_env=False: a proxy from the environment must not see (or break) deliveries.
    limits = httpx.Limits(max_connections=max(options.batch_size * options.max_webhooks, 10))
    return httpx.AsyncClient(
        timeout=httpx.Timeout(options.timeout),
        follow_redirects=False,
        trust_env=False,
        limits=limits,
        headers={"user-agent": USER_AGENT},
        transport=None if options.allow_private else GuardedTransport(limits=limits),
    )


def claim_due(
    database: Database,
    *,
    limit: int,
    options: DeliveryOptions,
    busy: Mapping[str, int] | None = None,
    busy_owners: Mapping[str, int] | None = None,
) -> list[Claimed]:
    """Claims up to `limit` due deliveries of each webhook, less those it has in flight
    (`busy`), and up to `owner_limit` of each owner's webhooks together, less theirs in flight
    (`busy_owners`), for up to `max_webhooks` webhooks: each owner's longest-waiting webhook
    first, then each owner's second... so that one owner's many webhooks, slow or not, never
    push another owner's out of a claim."""
    now = utcnow()
    earlier = aliased(WebhookDelivery)
    blocked = exists().where(
        earlier.webhook_id == WebhookDelivery.webhook_id,
        earlier.subject_id == WebhookDelivery.subject_id,
        earlier.event_seq < WebhookDelivery.event_seq,
        earlier.status == PENDING,
    )
    due = [
        WebhookDelivery.status == PENDING,
        WebhookDelivery.next_attempt_at <= now,
        Webhook.enabled.is_(True),
        ~blocked,
    ]
    busy = busy or {}
    full = sorted(webhook_id for webhook_id, count in busy.items() if count >= limit)
    if full:
        due.append(WebhookDelivery.webhook_id.not_in(full))
    owners_in_flight = dict(busy_owners or {})
    full_owners = sorted(o for o, count in owners_in_flight.items() if count >= options.owner_limit)
    if full_owners:
        due.append(_OWNER.not_in(full_owners))
    with database.transaction() as session:
        waiting = session.execute(
            select(WebhookDelivery.webhook_id, _OWNER, func.min(WebhookDelivery.next_attempt_at))
            .join(Webhook, Webhook.id == WebhookDelivery.webhook_id)
            .where(*due)
            .group_by(WebhookDelivery.webhook_id, _OWNER)
        ).all()
        webhooks = _fair_turns([(w, o, t) for w, o, t in waiting if t is not None])
        ids: list[str] = []
        for webhook_id, owner_of in webhooks[: options.max_webhooks]:
            room = min(
                limit - busy.get(webhook_id, 0),
                options.owner_limit - owners_in_flight.get(owner_of, 0),
            )
            if room <= 0:
                continue
            taken = session.scalars(
                select(WebhookDelivery.id)
                .join(Webhook, Webhook.id == WebhookDelivery.webhook_id)
                .where(WebhookDelivery.webhook_id == webhook_id, *due)
                .order_by(WebhookDelivery.event_seq.nulls_first())
                .limit(room)
                .with_for_update(of=WebhookDelivery, skip_locked=True)
            ).all()
            owners_in_flight[owner_of] = owners_in_flight.get(owner_of, 0) + len(taken)
            ids += taken
        if not ids:
            return []
        session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id.in_(ids))
            .values(
                attempts=WebhookDelivery.attempts + 1,
                last_attempt_at=now,
                next_attempt_at=now + options.lease,
                updated_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        return _load_claimed(session, ids, options.box)


_OWNER = func.coalesce(Webhook.created_by, Webhook.workspace_id)
"""Whose a webhook is (`Claimed.owner`): the user who made it, else its workspace."""


def _fair_turns(waiting: list[tuple[str, str, datetime]]) -> list[tuple[str, str]]:
    """Webhooks with due deliveries (`(webhook, owner, oldest due)`) in turns: every owner's
    longest-waiting webhook, oldest first, then every owner's second, and so on."""
    by_owner: dict[str, list[tuple[datetime, str]]] = {}
    for webhook_id, owner, oldest in waiting:
        by_owner.setdefault(owner, []).append((oldest, webhook_id))
    turns: list[tuple[int, datetime, str, str]] = []
    for owner, webhooks in by_owner.items():
        for turn, (oldest, webhook_id) in enumerate(sorted(webhooks)):
            turns.append((turn, oldest, webhook_id, owner))
    return [(webhook_id, owner) for _, _, webhook_id, owner in sorted(turns)]


def _load_claimed(session: Session, ids: list[str], box: SecretBox | None) -> list[Claimed]:
    rows = session.execute(
        select(
            WebhookDelivery.id,
            WebhookDelivery.attempts,
            WebhookDelivery.created_at,
            WebhookDelivery.event_type,
            WebhookDelivery.payload,
            Webhook.id,
            Webhook.url,
            Webhook.secret_encrypted,
            Event.payload,
            Event.created_at,
            _OWNER,
        )
        .join(Webhook, Webhook.id == WebhookDelivery.webhook_id)
        .outerjoin(Event, Event.seq == WebhookDelivery.event_seq)
        .where(WebhookDelivery.id.in_(ids))
        .order_by(WebhookDelivery.event_seq.nulls_first())
    ).all()
    return [
        Claimed(
            id=delivery_id,
            attempts=attempts,
            webhook_id=webhook_id,
            url=url,
            secret=_opened(box, sealed),
            body=orjson.dumps(
                {
                    "type": type_,
                    "timestamp": iso(occurred or created_at),
                    "data": payload if payload is not None else own_payload,
                }
            ),
            created_at=created_at,
            owner=owner,
        )
        for (
            delivery_id,
            attempts,
            created_at,
            type_,
            own_payload,
            webhook_id,
            url,
            sealed,
            payload,
            occurred,
            owner,
        ) in rows
    ]


def _opened(box: SecretBox | None, sealed: str | None) -> str | None:
    if box is None or sealed is None:
        return None
    try:
        return box.open(sealed)
    except InvalidToken:
        return None


def signed_headers(delivery: Claimed, secret: str, now: datetime) -> dict[str, str]:
    """The Standard Webhooks headers; the timestamp is part of what is signed."""
    signature = Signer(secret).sign(delivery.id, now, delivery.body.decode())
    return {
        "content-type": "application/json",
        "webhook-id": delivery.id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signature,
    }


async def send(client: httpx.AsyncClient, delivery: Claimed, options: DeliveryOptions) -> Outcome:
    if delivery.secret is None:
        return Outcome(
            delivery, None, "cannot open the webhook's secret (was SPRINTBOARD_SECRET_KEY changed?)"
        )
    if "@" in urlsplit(delivery.url).netloc:
        # (A URL made before credentials were refused: they would go out as Basic auth.)
        return Outcome(delivery, None, "refused: the URL carries credentials")
    headers = signed_headers(delivery, delivery.secret, datetime.now(UTC))
    try:
        async with (
            asyncio.timeout(options.timeout),
            client.stream("POST", delivery.url, content=delivery.body, headers=headers) as response,
        ):
            status = response.status_code
            # Reading a short answer to the end keeps the connection for the next delivery;
            # a long one is cut off (and its connection dropped) rather than paid for.
            received = 0
            async for chunk in response.aiter_raw():
                received += len(chunk)
                if received > MAX_RESPONSE_BYTES:
                    break
    except TimeoutError:
        return Outcome(delivery, None, f"timed out after {options.timeout:g} s")
    except (httpx.HTTPError, OSError) as error:
        return Outcome(delivery, None, f"{type(error).__name__}: {error}"[:1000])
    return Outcome(delivery, status, None if 200 <= status < 300 else f"HTTP {status}")


def settle(database: Database, outcomes: list[Outcome], options: DeliveryOptions) -> None:
    if not outcomes:
        return
    now = utcnow()
    rows: list[dict[str, Any]] = []
    for outcome in outcomes:
        delivery = outcome.delivery
        if outcome.ok:
            status, next_at = DELIVERED, None
        elif now - delivery.created_at >= options.give_up_after:
            status, next_at = FAILED, None
        else:
            status, next_at = PENDING, now + options.backoff(delivery.attempts)
        rows.append(
            {
                "_id": delivery.id,
                "_attempts": delivery.attempts,
                "_status": status,
                "_next": next_at,
                "_response": outcome.response_status,
                "_error": outcome.error,
                "_delivered": now if outcome.ok else None,
            }
        )
    table = cast(Table, WebhookDelivery.__table__)
    succeeded = {o.delivery.webhook_id for o in outcomes if o.ok}
    failed = {o.delivery.webhook_id for o in outcomes if not o.ok} - succeeded
    with database.transaction() as session:
        # The attempts guard: a delivery whose lease ran out and was claimed again belongs
        # to the other worker now.
        session.connection().execute(
            update(table)
            .where(table.c.id == bindparam("_id"), table.c.attempts == bindparam("_attempts"))
            .values(
                status=bindparam("_status"),
                next_attempt_at=bindparam("_next"),
                response_status=bindparam("_response"),
                last_error=bindparam("_error"),
                delivered_at=bindparam("_delivered"),
                updated_at=now,
            ),
            sorted(rows, key=lambda row: row["_id"]),
        )
        if succeeded:
            session.execute(
                update(Webhook)
                .where(Webhook.id.in_(sorted(succeeded)), Webhook.failing_since.is_not(None))
                .values(failing_since=None)
                .execution_options(synchronize_session=False)
            )
        if failed:
            _note_failures(session, sorted(failed), outcomes, now, options)


def _note_failures(
    session: Session,
    webhook_ids: list[str],
    outcomes: list[Outcome],
    now: datetime,
    options: DeliveryOptions,
) -> None:
    session.execute(
        update(Webhook)
        .where(Webhook.id.in_(webhook_ids), Webhook.failing_since.is_(None))
        .values(failing_since=now)
        .execution_options(synchronize_session=False)
    )
    expired = session.execute(
        select(Webhook.id, Webhook.failing_since).where(
            Webhook.id.in_(webhook_ids),
            Webhook.enabled.is_(True),
            Webhook.failing_since <= now - options.give_up_after,
        )
    ).all()
    last_error = {o.delivery.webhook_id: o.error for o in outcomes if not o.ok}
    for webhook_id, failing_since in expired:
        reason = (
            f"Disabled after failing since {iso(failing_since)} without a successful delivery; "
            f"last error: {last_error.get(webhook_id)}"
        )
        logger.warning("webhook %s disabled: %s", webhook_id, reason)
        session.execute(
            update(Webhook)
            .where(Webhook.id == webhook_id)
            .values(enabled=False, disabled_reason=reason, updated_at=now)
            .execution_options(synchronize_session=False)
        )
        session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.webhook_id == webhook_id, WebhookDelivery.status == PENDING)
            .values(status=FAILED, last_error="webhook disabled", updated_at=now)
            .execution_options(synchronize_session=False)
        )
