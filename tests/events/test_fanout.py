"""The Redis nudge between instances, without Redis: a listener whose connection goes silent
(half-open: nothing raises) takes it for dead and subscribes again; one that hears pongs
stays."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from sprintboard.events import fanout
from sprintboard.events.fanout import RedisFanOut


class FakeRedis:
    """Subscriptions that never deliver a message; pings answered (or not) with a pong."""

    def __init__(self, *, answers_pings: bool) -> None:
        self.answers_pings = answers_pings
        self.subscriptions = 0
        self.pongs = 0

    @asynccontextmanager
    async def pubsub(self) -> AsyncIterator["FakeRedis"]:
        self.subscriptions += 1
        yield self

    async def subscribe(self, channel: str) -> None:
        pass

    async def get_message(self, timeout: float) -> dict[str, Any] | None:
        if self.pongs:
            self.pongs -= 1
            return {"type": "pong", "data": b""}
        await asyncio.sleep(timeout)
        return None

    async def ping(self) -> None:
        self.pongs += self.answers_pings

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize("answers_pings", [False, True])
def test_a_listener_resubscribes_only_when_redis_stops_answering(
    monkeypatch: pytest.MonkeyPatch, answers_pings: bool
) -> None:
    monkeypatch.setattr(fanout, "HEARTBEAT", 0.02)
    monkeypatch.setattr(fanout, "RECONNECT_AFTER", 0.01)
    fake = FakeRedis(answers_pings=answers_pings)

    async def listen_a_while() -> None:
        fan_out = RedisFanOut("redis://127.0.0.1:1/0", "sbtest")
        fan_out._subscriber = fake  # type: ignore[assignment]
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(fan_out.listen(asyncio.Event()), 0.5)
        await fan_out.close()

    asyncio.run(listen_a_while())
    if answers_pings:
        assert fake.subscriptions == 1
    else:
        assert fake.subscriptions >= 3
