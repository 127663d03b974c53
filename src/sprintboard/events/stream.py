"""Live updates (contract §12): a workspace's change feed as Server-Sent Events.

A stream first replays the events after the client's cursor (`Last-Event-ID`, or `after`),
then waits for more. It does not poll the database for itself: each process keeps one
`StreamHub`, which wakes the streams of a workspace when that workspace's feed has grown —

- at once for a commit made in this process (`events.service.EVENTS_WRITTEN`);
- with Redis, at once for a commit made by any instance (pub/sub on
  `<prefix>:events-written`, published after the commit; `events.fanout`);
- otherwise at its next poll: one query for every watched workspace's newest event, every
  `POLL_EVERY` seconds (every `POLL_EVERY_WITH_REDIS` with Redis, in case it was out).

A woken stream reads what follows its cursor (`ix_events_workspace_seq`) and sends it. Every
`RECHECK_EVERY` seconds it authenticates its caller again and checks the membership: a key
revoked, a session ended or a member removed ends the stream. An idle stream sends a comment
every `keepalive` seconds, so that proxies keep the connection open.
"""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

import orjson
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sprintboard.access import Caller, access_workspace_id
from sprintboard.db import Database
from sprintboard.errors import AppError
from sprintboard.events.feed import event_json
from sprintboard.models import Event

logger = logging.getLogger(__name__)

POLL_EVERY = 0.5
POLL_EVERY_WITH_REDIS = 5.0
RECHECK_EVERY = 2.0
BATCH = 200
"""Events read per query while replaying."""


class StreamHub:
    """This process's open streams, by workspace, and what wakes them."""

    def __init__(self, database: Database, *, poll_every: float) -> None:
        self.database = database
        self.poll_every = poll_every
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._newest: dict[str, int] = {}

    def wake(self, workspace_ids: Iterable[str]) -> None:
        for workspace_id in workspace_ids:
            for waiter in self._waiters.get(workspace_id, ()):
                waiter.set()

    @contextlib.contextmanager
    def watching(self, workspace_id: str) -> Iterator[asyncio.Event]:
        """An event set whenever the workspace's feed may have grown."""
        waiter = asyncio.Event()
        self._waiters.setdefault(workspace_id, set()).add(waiter)
        try:
            yield waiter
        finally:
            waiters = self._waiters.get(workspace_id, set())
            waiters.discard(waiter)
            if not waiters:
                self._waiters.pop(workspace_id, None)
                self._newest.pop(workspace_id, None)

    async def poll(self) -> None:
        """Wake the streams of each workspace whose newest event changed; until cancelled."""
        while True:
            await asyncio.sleep(self.poll_every)
            watched = list(self._waiters)
            if not watched:
                continue
            try:
                newest = await self.database.call(_newest_events, self.database, watched)
            except Exception as error:  # (the database is out: streams notice for themselves)
                logger.warning("could not poll the change feed: %r", error)
                continue
            grown = [w for w, seq in newest.items() if self._newest.get(w, seq) != seq]
            self._newest.update(newest)
            self.wake(grown)


def _newest_events(database: Database, workspace_ids: list[str]) -> dict[str, int]:
    with _reading(database) as session:
        rows = session.execute(
            select(Event.workspace_id, func.max(Event.seq).label("newest"))
            .where(Event.workspace_id.in_(workspace_ids))
            .group_by(Event.workspace_id)
        ).all()
    return {row.workspace_id: int(row.newest) for row in rows}


def newest_seq(session: Session, workspace_id: str) -> int:
    """Where a stream without a cursor starts: after the workspace's newest event."""
    return (
        session.scalar(select(func.max(Event.seq)).where(Event.workspace_id == workspace_id)) or 0
    )


def _events_after(
    database: Database, workspace_id: str, seq: int, limit: int
) -> list[tuple[int, bytes]]:
    with _reading(database) as session:
        events = session.scalars(
            select(Event)
            .where(Event.workspace_id == workspace_id, Event.seq > seq)
            .order_by(Event.seq)
            .limit(limit)
        ).all()
        return [(event.seq, _message(event)) for event in events]


def _message(event: Event) -> bytes:
    data = orjson.dumps(event_json(event))  # (one line: JSON strings escape newlines)
    return b"id: %s\nevent: %s\ndata: %s\n\n" % (event.id.encode(), event.type.encode(), data)


@contextlib.contextmanager
def _reading(database: Database) -> Iterator[Session]:
    session = database.session(write=False)
    try:
        yield session
    finally:
        session.rollback()
        session.close()


async def event_stream(
    hub: StreamHub,
    *,
    workspace_id: str,
    after_seq: int,
    authenticate: Callable[[Session], Caller],
    keepalive: float,
) -> AsyncIterator[bytes]:
    """The stream's bytes: the events after `after_seq`, then each new one, until the caller
    may no longer read the workspace (or the client goes away, which cancels this)."""
    database = hub.database
    loop = asyncio.get_running_loop()
    with hub.watching(workspace_id) as waiter:
        yield b": connected\n\n"  # (the client knows the stream is open)
        sent_at = checked_at = loop.time()
        while True:
            waiter.clear()  # (before reading: a commit during the read wakes the next wait)
            events = await database.call(_events_after, database, workspace_id, after_seq, BATCH)
            if events:
                after_seq = events[-1][0]
                yield b"".join(message for _, message in events)
                sent_at = loop.time()
                if len(events) == BATCH:
                    continue
            if loop.time() - checked_at >= RECHECK_EVERY:
                if not await database.call(_still_allowed, database, authenticate, workspace_id):
                    return
                checked_at = loop.time()
            due = min(sent_at + keepalive, checked_at + RECHECK_EVERY) - loop.time()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter.wait(), timeout=max(due, 0))
            if loop.time() - sent_at >= keepalive:
                yield b": keep-alive\n\n"
                sent_at = loop.time()


def _still_allowed(
    database: Database, authenticate: Callable[[Session], Caller], workspace_id: str
) -> bool:
    with _reading(database) as session:
        try:
            access_workspace_id(session, authenticate(session), workspace_id)
        except AppError:
            return False
    return True


def stream_hub_of(state: Any) -> StreamHub:
    hub: StreamHub = state.stream_hub
    return hub
