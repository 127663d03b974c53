"""Sending the mail outbox, in the delivery loop (`serve` or `worker`), never in a request.

Each round first writes the notification mails that are due (`digests.py`), then *claims*
due mail in one short transaction (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite's
`BEGIN IMMEDIATE` makes the claimer the only writer) with a lease (`attempts + 1` and
`next_attempt_at` pushed past the longest a send can take), *sends* it outside any
transaction, and *settles* each: sent (its sealed body emptied), retried with exponential
backoff, or failed after `give_up_after`. A worker that dies mid-send loses nothing: the
lease runs out and another sends it again (at least once, as SMTP itself promises).
"""

import asyncio
import contextlib
import functools
import logging
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

import aiosmtplib
from cryptography.fernet import InvalidToken
from sqlalchemy import select, update

from sprintboard.config import Settings
from sprintboard.db import Database
from sprintboard.events.service import DELIVERIES_WRITTEN
from sprintboard.mail import digests, smtp
from sprintboard.mail.outbox import FAILED, PENDING, SENT, Outbox
from sprintboard.models import MailMessage, utcnow
from sprintboard.serverkey import SecretBox

logger = logging.getLogger("sprintboard.mail")


@dataclass(frozen=True, slots=True)
class MailOptions:
    server: smtp.SmtpServer | None
    """None: mail is not configured; notifications waiting for mail are dropped."""
    box: SecretBox
    public_url: str | None = None
    """The root of the links in notification mail (none without it)."""
    backoff_base: float = 5.0
    """Seconds before the first retry; each further retry waits twice as long (with jitter)."""
    backoff_max: float = 3600.0
    give_up_after: timedelta = timedelta(hours=24)
    batch_size: int = 20
    poll_interval: float = 1.0
    lease_margin: float = 30.0

    @property
    def lease(self) -> timedelta:
        timeout = self.server.timeout if self.server else 30.0
        return timedelta(seconds=timeout + self.lease_margin)

    def backoff(self, attempts: int) -> timedelta:
        delay = min(self.backoff_max, self.backoff_base * 2 ** max(attempts - 1, 0))
        return timedelta(seconds=delay * random.uniform(0.8, 1.2))

    @property
    def outbox(self) -> Outbox | None:
        return Outbox(self.box) if self.server is not None else None


@dataclass(frozen=True, slots=True)
class ClaimedMail:
    id: str
    attempts: int
    recipient: str
    subject: str
    body: str | None
    """None: it could not be opened (sealed under another server key)."""
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Sent:
    mail: ClaimedMail
    error: str | None


async def deliver_mail_due(database: Database, options: MailOptions) -> int:
    """One round: write the due notification mails, then claim, send and settle due mail.
    Returns how many mails were attempted."""
    await database.call(
        functools.partial(
            digests.write_due, database, outbox=options.outbox, link_root=options.public_url
        )
    )
    if options.server is None:
        return 0
    claimed = await database.call(functools.partial(claim_due, database, options=options))
    if not claimed:
        return 0
    outcomes = await asyncio.gather(*[_send(options.server, mail) for mail in claimed])
    await database.call(settle, database, list(outcomes), options)
    return len(claimed)


async def run_mail_worker(
    database: Database, *, options: MailOptions, stop: asyncio.Event | None = None
) -> None:
    """Send mail until `stop` is set: at once when a commit in this process wrote some, else
    at each poll (mail written by another process, retries, notifications whose minute has
    ended)."""
    stop = stop or asyncio.Event()
    if options.server is None:
        await _drop_waiting(database, stop)
        return
    wake = asyncio.Event()
    with DELIVERIES_WRITTEN.listening(wake.set):
        while not stop.is_set():
            wake.clear()
            attempted = 0
            try:
                attempted = await deliver_mail_due(database, options)
            except Exception:
                logger.exception("sending mail failed; retrying")
            if not attempted:
                await _first_of(stop, wake, timeout=options.poll_interval)


DROP_INTERVAL = 60.0


async def _drop_waiting(database: Database, stop: asyncio.Event) -> None:
    """Without mail configured there is nothing to send: once a minute (never at start-up,
    where the webhook loop's own start comes first), drop the notifications that wait for
    mail."""
    while True:
        await _first_of(stop, timeout=DROP_INTERVAL)
        if stop.is_set():
            return
        try:
            await database.call(
                functools.partial(digests.write_due, database, outbox=None, link_root=None)
            )
        except Exception:
            logger.exception("dropping notifications that wait for mail failed; retrying")


async def _first_of(*events: asyncio.Event, timeout: float) -> None:
    waits = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


def claim_due(database: Database, *, options: MailOptions) -> list[ClaimedMail]:
    """Leases up to `batch_size` due mails. Looked for first in a read, so that an idle loop
    takes no write lock (SQLite's is the whole database's)."""
    now = utcnow()
    due = (MailMessage.status == PENDING, MailMessage.next_attempt_at <= now)
    with database.session(write=False) as session:
        if session.scalar(select(MailMessage.id).where(*due).limit(1)) is None:
            return []
    with database.transaction() as session:
        rows = session.scalars(
            select(MailMessage)
            .where(*due)
            .order_by(MailMessage.next_attempt_at, MailMessage.id)
            .limit(options.batch_size)
            .with_for_update(skip_locked=True)
        ).all()
        claimed = []
        for row in rows:
            row.attempts += 1
            row.next_attempt_at = now + options.lease
            row.updated_at = now
            claimed.append(
                ClaimedMail(
                    id=row.id,
                    attempts=row.attempts,
                    recipient=row.recipient,
                    subject=row.subject,
                    body=_opened(options.box, row.body_sealed),
                    created_at=row.created_at,
                )
            )
        return claimed


def _opened(box: SecretBox, sealed: str | None) -> str | None:
    if sealed is None:
        return None
    try:
        return box.open(sealed)
    except InvalidToken:
        return None


async def _send(server: smtp.SmtpServer, mail: ClaimedMail) -> Sent:
    if mail.body is None:
        return Sent(mail, "cannot open the mail's body (was SPRINTBOARD_SECRET_KEY changed?)")
    message = smtp.message(
        server, mail_id=mail.id, to=mail.recipient, subject=mail.subject, body=mail.body
    )
    try:
        await smtp.send(server, message)
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as error:
        # (The exception's text is the server's answer or the socket's; never the URL.)
        return Sent(mail, f"{type(error).__name__}: {error}"[:1000])
    return Sent(mail, None)


def settle(database: Database, outcomes: list[Sent], options: MailOptions) -> None:
    now = utcnow()
    with database.transaction() as session:
        for outcome in sorted(outcomes, key=lambda o: o.mail.id):
            mail = outcome.mail
            values: dict[str, object]
            if outcome.error is None:
                values = {"status": SENT, "sent_at": now, "body_sealed": None, "last_error": None}
            elif now - mail.created_at >= options.give_up_after:
                logger.warning("mail %s failed for good: %s", mail.id, outcome.error)
                values = {"status": FAILED, "body_sealed": None, "last_error": outcome.error}
            else:
                logger.info(
                    "mail %s not sent (attempt %d): %s", mail.id, mail.attempts, outcome.error
                )
                values = {
                    "next_attempt_at": now + options.backoff(mail.attempts),
                    "last_error": outcome.error,
                }
            # The attempts guard: a mail whose lease ran out and was claimed again belongs
            # to the other worker now.
            session.execute(
                update(MailMessage)
                .where(MailMessage.id == mail.id, MailMessage.attempts == mail.attempts)
                .values(updated_at=now, **values)
                .execution_options(synchronize_session=False)
            )


def options_from(settings: Settings, box: SecretBox) -> MailOptions:
    server = None
    if settings.mail_configured and settings.smtp_url is not None and settings.mail_from:
        server = smtp.SmtpServer.from_url(
            settings.smtp_url.get_secret_value(), sender=settings.mail_from
        )
    return MailOptions(server=server, box=box, public_url=settings.public_url)


async def stopped(task: "asyncio.Task[None]", stop: asyncio.Event) -> None:
    """The mail loop, stopped: a send in flight gets a moment to finish."""
    stop.set()
    await asyncio.wait({task}, timeout=5)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
