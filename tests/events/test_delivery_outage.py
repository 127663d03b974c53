"""A worker while the database cannot be reached (issue 26): one warning line when the outage
begins, not a traceback every second, and claims spaced out more and more meanwhile."""

import asyncio
import logging

import pytest

from sprintboard.db import Database
from sprintboard.events.delivery import DeliveryOptions, run_worker


def test_a_worker_logs_an_outage_once_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # (Nothing listens on port 1: every claim fails at once, as with a stopped database.)
    database = Database("postgresql://postgres@127.0.0.1:1/nowhere")
    claims = 0
    call = database.call

    async def counted(*args: object, **kwargs: object) -> object:
        nonlocal claims
        claims += 1
        return await call(*args, **kwargs)  # type: ignore[arg-type]

    database.call = counted  # type: ignore[method-assign]

    async def run_for_a_while() -> None:
        stop = asyncio.Event()
        options = DeliveryOptions(poll_interval=0.1)
        worker = asyncio.create_task(run_worker(database, options=options, stop=stop))
        await asyncio.sleep(2.0)
        stop.set()
        await worker

    try:
        with caplog.at_level(logging.INFO, logger="sprintboard.webhooks"):
            asyncio.run(run_for_a_while())
    finally:
        database.dispose()
    records = [r for r in caplog.records if r.name == "sprintboard.webhooks"]
    assert len(records) == 1, [r.getMessage() for r in records]
    assert "cannot be reached" in records[0].getMessage()
    assert records[0].exc_info is None
    # 0.1, 0.2, 0.4, 0.8 s apart: a handful of claims in 2 s, not twenty.
    assert 2 <= claims <= 7, claims
