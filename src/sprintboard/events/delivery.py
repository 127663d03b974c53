"""Delivering webhook events: signed (Standard Webhooks), at least once, in order per subject.

A round (`deliver_due`) has three steps, and only the middle one waits on the network:

1. *Claim*, in one short transaction: pick due deliveries whose webhook is enabled and that
   have no earlier pending delivery for the same webhook and subject (so event N+1 for a work
   item never overtakes event N), lock them with `FOR UPDATE SKIP LOCKED` on PostgreSQL (on
   SQLite the write transaction's `BEGIN IMMEDIATE` makes the claimer the only writer), and
   lease them: `attempts + 1` and `next_attempt_at` pushed past the longest a send can take.
   Another worker skips a leased delivery — and its successors, which stay blocked because it
   is still pending — until the lease runs out.
2. *Send*, outside any transaction, concurrently, over `httpx.AsyncClient` with a timeout.
   The `webhook-id` is the delivery's `$id`, the same on every attempt.
3. *Settle*, in one short transaction: delivered, or retried with exponential backoff, or
   failed. A webhook that has failed for `give_up_after` (a day) without one success is
   disabled, with the reason, and its pending deliveries fail with it.

A worker that dies between 1 and 3 loses nothing: the lease expires and another round sends
the delivery again (at least once; receivers deduplicate by `webhook-id`).
"""

import asyncio
import contextlib
import logging
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

import httpx
import orjson
from sqlalchemy import Table, bindparam, exists, select, update
from sqlalchemy.orm import Session, aliased
from standardwebhooks import Webhook as Signer

from sprintboard.db import Database
from sprintboard.events.service import DELIVERIES_WRITTEN
from sprintboard.models import Event, Webhook, WebhookDelivery, utcnow
from sprintboard.responses import iso

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
    """Deliveries claimed (and sent concurrently) per round."""
    poll_interval: float = 1.0
    """Seconds a worker waits when nothing was due."""
    lease_margin: float = 30.0
    """A claim outlives the longest send by this much before another worker may retry it."""

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
    secret: str
    body: bytes
    created_at: datetime


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
    """One round: claim up to `limit` due deliveries, send them, record the outcomes.

    Returns how many were attempted (0: nothing is due).
    """
    options = options or DeliveryOptions()
    claimed = claim_due(database, limit=limit, options=options)
    if not claimed:
        return 0
    async with contextlib.AsyncExitStack() as stack:
        if client is None:
            client = await stack.enter_async_context(http_client(options))
        outcomes = await asyncio.gather(*(send(client, d, options) for d in claimed))
    settle(database, outcomes, options)
    return len(claimed)


async def run_worker(
    database: Database,
    *,
    options: DeliveryOptions | None = None,
    stop: asyncio.Event | None = None,
    fan_out: "RedisFanOut | None" = None,
) -> None:
    """Deliver until `stop` is set: rounds back to back while work is due; else wait for the
    next poll, or less: a commit in this process that wrote deliveries wakes the loop at once,
    and so, through Redis (`fan_out`), does one in any other."""
    options = options or DeliveryOptions()
    stop = stop or asyncio.Event()
    written = asyncio.Event()
    async with contextlib.AsyncExitStack() as stack:
        client = await stack.enter_async_context(http_client(options))
        stack.enter_context(DELIVERIES_WRITTEN.listening(written.set))
        if fan_out is not None:
            listener = asyncio.create_task(fan_out.listen(written), name="delivery announcements")
            stack.push_async_callback(_cancelled, listener)
        while not stop.is_set():
            written.clear()
            try:
                count = await deliver_due(
                    database, limit=options.batch_size, options=options, client=client
                )
            except Exception:
                logger.exception("webhook delivery round failed; retrying")
                count = 0
            if count == 0:
                await _first_of(stop, written, timeout=options.poll_interval)


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
    return httpx.AsyncClient(
        timeout=httpx.Timeout(options.timeout),
        follow_redirects=False,
        trust_env=False,
        limits=httpx.Limits(max_connections=max(options.batch_size, 10)),
        headers={"user-agent": USER_AGENT},
    )


def claim_due(database: Database, *, limit: int, options: DeliveryOptions) -> list[Claimed]:
    now = utcnow()
    earlier = aliased(WebhookDelivery)
    blocked = exists().where(
        earlier.webhook_id == WebhookDelivery.webhook_id,
        earlier.subject_id == WebhookDelivery.subject_id,
        earlier.event_seq < WebhookDelivery.event_seq,
        earlier.status == PENDING,
    )
    with database.transaction() as session:
        ids = session.scalars(
            select(WebhookDelivery.id)
            .join(Webhook, Webhook.id == WebhookDelivery.webhook_id)
            .where(
                WebhookDelivery.status == PENDING,
                WebhookDelivery.next_attempt_at <= now,
                Webhook.enabled.is_(True),
                ~blocked,
            )
            .order_by(WebhookDelivery.event_seq)
            .limit(limit)
            .with_for_update(of=WebhookDelivery, skip_locked=True)
        ).all()
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
        return _load_claimed(session, list(ids))


def _load_claimed(session: Session, ids: list[str]) -> list[Claimed]:
    rows = session.execute(
        select(
            WebhookDelivery.id,
            WebhookDelivery.attempts,
            WebhookDelivery.created_at,
            Webhook.id,
            Webhook.url,
            Webhook.secret,
            Event.type,
            Event.payload,
            Event.created_at,
        )
        .join(Webhook, Webhook.id == WebhookDelivery.webhook_id)
        .join(Event, Event.seq == WebhookDelivery.event_seq)
        .where(WebhookDelivery.id.in_(ids))
        .order_by(WebhookDelivery.event_seq)
    ).all()
    return [
        Claimed(
            id=delivery_id,
            attempts=attempts,
            webhook_id=webhook_id,
            url=url,
            secret=secret,
            body=orjson.dumps({"type": type_, "timestamp": iso(occurred), "data": payload}),
            created_at=created_at,
        )
        for (
            delivery_id,
            attempts,
            created_at,
            webhook_id,
            url,
            secret,
            type_,
            payload,
            occurred,
        ) in rows
    ]


def signed_headers(delivery: Claimed, now: datetime) -> dict[str, str]:
    """The Standard Webhooks headers; the timestamp is part of what is signed."""
    signature = Signer(delivery.secret).sign(delivery.id, now, delivery.body.decode())
    return {
        "content-type": "application/json",
        "webhook-id": delivery.id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signature,
    }


async def send(client: httpx.AsyncClient, delivery: Claimed, options: DeliveryOptions) -> Outcome:
    headers = signed_headers(delivery, datetime.now(UTC))
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
