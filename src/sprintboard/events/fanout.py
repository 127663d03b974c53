"""With Redis, a commit that wrote webhook deliveries on one instance wakes the delivery loops
of every instance (`serve` delivering in-process, `worker`), not only its own: each process
publishes on one channel when its doorbell rings (`events.service.DELIVERIES_WRITTEN`) and
listens on it while it delivers.

The message is only a nudge; the deliveries themselves are in the database, where a loop finds
them at its next poll anyway. So Redis being out costs latency, never a delivery: a failed
publish is logged and dropped, and a listener that loses Redis reconnects every few seconds
while its loop goes on polling.
"""

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable

from redis.asyncio import Redis
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

PUBLISH_TIMEOUT = 0.25
"""Seconds a publish may take before it is given up (the next commit publishes again)."""
RECONNECT_AFTER = 5.0
"""Seconds a listener waits before it subscribes again after losing Redis."""
HEARTBEAT = 15.0
"""Seconds of silence after which a listener pings Redis; twice that with no answer, and it
takes the connection for dead (a half-open one raises nothing) and subscribes again."""


class RedisFanOut:
    """One channel, `<prefix>:<topic>`: `deliveries-written` (a bare nudge) or `events-written`
    (which workspaces' change feeds grew, for the event streams: `events.stream`)."""

    def __init__(self, url: str, prefix: str, topic: str = "deliveries-written") -> None:
        self.channel = f"{prefix}:{topic}"
        self._publisher = Redis.from_url(
            url, socket_timeout=PUBLISH_TIMEOUT, socket_connect_timeout=PUBLISH_TIMEOUT
        )
        self._subscriber = Redis.from_url(
            url, socket_connect_timeout=PUBLISH_TIMEOUT, socket_keepalive=True
        )
        self._publishing: asyncio.Task[None] | None = None
        self._pending: set[str] = set()
        self._failing = False

    def announce(self, names: Iterable[str] = ("1",)) -> None:
        """Tell every instance that deliveries (events of the workspaces `names`) were written
        (called in the event loop; rings that come while a publish is under way make one more
        publish with all their names, not one each)."""
        self._pending.update(names)
        if self._publishing is not None and not self._publishing.done():
            return
        self._publishing = asyncio.create_task(self._publish(), name=f"announce {self.channel}")

    async def _publish(self) -> None:
        while self._pending:
            message = ",".join(sorted(self._pending)).encode()
            self._pending.clear()
            try:
                await self._publisher.publish(self.channel, message)
            except (RedisError, OSError) as error:
                if not self._failing:  # (once per outage, not once per commit)
                    logger.warning("could not announce on Redis (%s): %r", self.channel, error)
                self._failing = True
                return
            self._failing = False

    async def listen(self, wake: asyncio.Event) -> None:
        """Set `wake` whenever an instance announces; runs until cancelled."""
        await self.listen_to(lambda _names: wake.set())

    async def listen_to(self, heard: Callable[[list[str]], None]) -> None:
        """Call `heard` with the names of each announcement; runs until cancelled."""
        while True:
            try:
                await self._listen_once(heard)
            except (RedisError, OSError) as error:
                logger.warning(
                    "lost Redis for announcements on %s (%r); polling only, trying again in %.0f s",
                    self.channel,
                    error,
                    RECONNECT_AFTER,
                )
                await asyncio.sleep(RECONNECT_AFTER)

    async def _listen_once(self, heard: Callable[[list[str]], None]) -> None:
        loop = asyncio.get_running_loop()
        async with self._subscriber.pubsub() as pubsub:
            await pubsub.subscribe(self.channel)
            heard_at = loop.time()
            while True:
                message = await pubsub.get_message(timeout=HEARTBEAT)
                if message is not None:  # (a pong counts: the connection is alive)
                    heard_at = loop.time()
                    if message["type"] == "message":
                        heard(bytes(message["data"]).decode().split(","))
                elif loop.time() - heard_at > 2 * HEARTBEAT:
                    raise ConnectionError("no answer from Redis to a ping")
                else:
                    await pubsub.ping()

    async def close(self) -> None:
        if self._publishing is not None:
            self._publishing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._publishing
        await self._publisher.aclose()
        await self._subscriber.aclose()
