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
import logging

from redis.asyncio import Redis
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

PUBLISH_TIMEOUT = 0.25
"""Seconds a publish may take before it is given up (the next commit publishes again)."""
RECONNECT_AFTER = 5.0
"""Seconds a listener waits before it subscribes again after losing Redis."""


class RedisFanOut:
    def __init__(self, url: str, prefix: str) -> None:
        self.channel = f"{prefix}:deliveries-written"
        self._publisher = Redis.from_url(
            url, socket_timeout=PUBLISH_TIMEOUT, socket_connect_timeout=PUBLISH_TIMEOUT
        )
        self._subscriber = Redis.from_url(url, socket_connect_timeout=PUBLISH_TIMEOUT)
        self._publishing: asyncio.Task[None] | None = None
        self._again = False

    def announce(self) -> None:
        """Tell every instance that deliveries were written (called in the event loop; rings
        that come while a publish is under way make one more publish, not one each)."""
        if self._publishing is not None and not self._publishing.done():
            self._again = True
            return
        self._publishing = asyncio.create_task(self._publish(), name="announce deliveries")

    async def _publish(self) -> None:
        self._again = True
        while self._again:
            self._again = False
            try:
                await self._publisher.publish(self.channel, b"1")
            except (RedisError, OSError) as error:
                logger.warning("could not announce new webhook deliveries on Redis: %r", error)
                return

    async def listen(self, wake: asyncio.Event) -> None:
        """Set `wake` whenever an instance announces deliveries; runs until cancelled."""
        while True:
            try:
                async with self._subscriber.pubsub() as pubsub:
                    await pubsub.subscribe(self.channel)
                    async for message in pubsub.listen():
                        if message["type"] == "message":
                            wake.set()
            except (RedisError, OSError) as error:
                logger.warning(
                    "lost Redis for webhook delivery announcements (%r); polling only, trying"
                    " again in %.0f s",
                    error,
                    RECONNECT_AFTER,
                )
                await asyncio.sleep(RECONNECT_AFTER)

    async def close(self) -> None:
        if self._publishing is not None:
            await asyncio.wait({self._publishing}, timeout=PUBLISH_TIMEOUT * 2)
        await self._publisher.aclose()
        await self._subscriber.aclose()
