"""Delivery processes: workers that stop, restart, crash, share the work, or run in `serve`."""

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from redis import Redis
from starlette.testclient import TestClient

from sprintboard.app import create_app
from sprintboard.cli import main
from sprintboard.config import Settings
from sprintboard.db import Database
from sprintboard.events import service as events
from sprintboard.events.delivery import DeliveryOptions, claim_due, run_worker
from tests.events.test_events import make_task
from tests.events.test_webhooks import FAST, LOOPBACK, Receiver, make_webhook
from tests.events.test_webhooks import receiver as receiver  # the fixture
from tests.factories import TEST_SECRET_KEY, Api, make_org_admin, make_project, make_workspace
from tests.http.test_limits import REDIS_URL


class WorkerThread:
    """`run_worker` on its own event loop, thread and database connections: a worker process
    in all that matters here."""

    def __init__(self, database_url: str, options: DeliveryOptions = FAST) -> None:
        self.database_url = database_url
        self.options = options
        self.ready = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()))

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.stop_event = asyncio.Event()
        database = Database(self.database_url)
        self.ready.set()
        try:
            await run_worker(database, options=self.options, stop=self.stop_event)
        finally:
            database.dispose()

    def __enter__(self) -> "WorkerThread":
        self.thread.start()
        self.ready.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(10)
        assert not self.thread.is_alive()


def wait_for(condition: Any, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_commit_wakes_an_idle_worker_of_its_process(
    admin: Api, database_url: str, receiver: Receiver
) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
    idle = DeliveryOptions(timeout=2.0, poll_interval=60, **LOOPBACK)
    with WorkerThread(database_url, idle):
        time.sleep(0.3)  # its first round found nothing: the next poll is a minute away
        make_task(admin, project)
        wait_for(lambda: len(receiver.requests) == 1, timeout=10)


@pytest.mark.redis
def test_through_redis_a_commit_wakes_an_idle_worker_process(
    settings: Settings, database: Database, database_url: str, receiver: Receiver
) -> None:
    """The change is made by one process (an app, delivering nothing itself), delivered by
    another (`sprintboard worker`) polling once a minute: Redis carries the nudge."""
    redis_settings = {"redis_url": REDIS_URL, "rate_limit_prefix": f"sbtest-{uuid.uuid4().hex}"}
    channel = f"{redis_settings['rate_limit_prefix']}:deliveries-written"
    redis = Redis.from_url(REDIS_URL)
    app = create_app(
        settings.model_copy(update={**redis_settings, "deliver_events": False}), database=database
    )
    with TestClient(app) as client:
        admin = Api(client, make_org_admin(database))
        workspace = make_workspace(admin)
        project = make_project(admin, workspace["$id"])
        make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
        with worker_process(database_url, poll_interval=60, **redis_settings):
            wait_for(lambda: dict(redis.pubsub_numsub(channel))[channel.encode()] == 1)
            time.sleep(0.5)  # its first round found nothing: the next poll is a minute away
            make_task(admin, project)
            wait_for(lambda: len(receiver.requests) == 1, timeout=10)


def test_without_redis_for_announcements_deliveries_still_go_out(
    settings: Settings, database: Database, receiver: Receiver
) -> None:
    nowhere = {"redis_url": "redis://127.0.0.1:1/0", "deliver_events": True}
    app = create_app(settings.model_copy(update=nowhere), database=database)
    with TestClient(app) as client:
        admin = Api(client, make_org_admin(database))
        workspace = make_workspace(admin)
        make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
        make_task(admin, make_project(admin, workspace["$id"]))
        wait_for(lambda: len(receiver.requests) == 1, timeout=10)


def test_a_restarted_worker_delivers_what_was_pending(
    admin: Api, database_url: str, receiver: Receiver
) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    make_webhook(admin, workspace["$id"], receiver.url, ["task.created", "task.updated"])
    with WorkerThread(database_url):
        make_task(admin, project)
        wait_for(lambda: len(receiver.requests) == 1)

    task = make_task(admin, project)  # while no worker runs
    admin.ok("PATCH", f"/tasks/{task['$id']}", {"title": "Changed meanwhile"})
    time.sleep(0.1)
    assert len(receiver.requests) == 1

    with WorkerThread(database_url):
        wait_for(lambda: len(receiver.requests) == 3)
    assert [b["type"] for b in receiver.bodies()] == [
        "task.created",
        "task.created",
        "task.updated",
    ]
    assert len(set(receiver.ids())) == 3


def test_a_claim_abandoned_by_a_crashed_worker_is_retried(
    admin: Api, database: Database, database_url: str, receiver: Receiver
) -> None:
    workspace = make_workspace(admin)
    make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
    make_task(admin, make_project(admin, workspace["$id"]))
    # The dead worker's lease is short (but long enough for the check that it is waited
    # for); the live worker's send may take its time: a 0.2 s send timeout on a loaded
    # machine made a third attempt.
    short_lease = DeliveryOptions(timeout=0.2, lease_margin=2.0, **LOOPBACK)
    (claimed,) = claim_due(database, limit=50, options=short_lease)  # ...and the worker dies

    patient = DeliveryOptions(timeout=10.0, backoff_base=0.01, poll_interval=0.02, **LOOPBACK)
    with WorkerThread(database_url, patient):
        time.sleep(0.2)
        assert receiver.requests == [], "a leased delivery waits for its lease"
        wait_for(lambda: len(receiver.requests) == 1)
    assert receiver.ids() == [claimed.id]
    deliveries = admin.ok("GET", f"/workspaces/{workspace['$id']}/webhooks")
    webhook_id = deliveries["documents"][0]["$id"]
    delivery = admin.ok("GET", f"/webhooks/{webhook_id}/deliveries")["documents"][0]
    assert (delivery["status"], delivery["attempts"]) == ("DELIVERED", 2)


@contextmanager
def worker_process(
    database_url: str, poll_interval: float = 0.05, **settings: str
) -> Iterator[subprocess.Popen[bytes]]:
    """`sprintboard worker`, stopped with SIGTERM; it must exit cleanly. `settings` are more
    `SPRINTBOARD_*` variables (`redis_url=...`)."""
    env = {
        **os.environ,
        "SPRINTBOARD_DATABASE_URL": database_url,
        "SPRINTBOARD_LOG_LEVEL": "WARNING",
        "SPRINTBOARD_SECRET_KEY": TEST_SECRET_KEY,
        "SPRINTBOARD_WEBHOOK_ALLOW_PRIVATE": "true",
        **{f"SPRINTBOARD_{name.upper()}": value for name, value in settings.items()},
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "sprintboard.cli", "worker", "--poll-interval", str(poll_interval)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield worker
    finally:
        worker.send_signal(signal.SIGTERM)
        _, stderr = worker.communicate(timeout=20)
    assert worker.returncode == 0, stderr.decode()


def test_two_workers_deliver_each_event_once(
    admin: Api, database: Database, database_url: str
) -> None:
    """Two worker processes: on PostgreSQL (`FOR UPDATE SKIP LOCKED`) with 1,000 events; on
    SQLite (one writer at a time) with fewer, to keep the suite fast."""
    count = 1000 if database.dialect == "postgresql" else 100
    workspace = make_workspace(admin)
    with Receiver() as receiver:
        make_webhook(admin, workspace["$id"], receiver.url, ["task.updated"])
        with database.transaction() as session:
            events.record_many(
                session,
                [
                    {
                        "workspace_id": workspace["$id"],
                        "type": "task.updated",
                        "subject_id": f"item{n % 100}",
                        "actor_id": None,
                        "payload": {"n": n, "changes": {}},
                    }
                    for n in range(count)
                ],
            )
        with worker_process(database_url), worker_process(database_url):
            wait_for(lambda: len(receiver.requests) >= count, timeout=45)
            time.sleep(0.2)  # anything sent twice would arrive now
    assert receiver.overlaps == []
    assert len(set(receiver.ids())) == count
    assert len(receiver.requests) == count
    per_item: dict[int, list[int]] = defaultdict(list)
    for body in receiver.bodies():
        per_item[body["data"]["n"] % 100].append(body["data"]["n"])
    assert all(ns == sorted(ns) for ns in per_item.values()), "out of order for an item"


def test_serve_delivers_in_process(settings: Settings, database: Database) -> None:
    app = create_app(settings.model_copy(update={"deliver_events": True}), database=database)
    with Receiver() as receiver, TestClient(app) as client:
        admin = Api(client, make_org_admin(database))
        workspace = make_workspace(admin)
        make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
        make_task(admin, make_project(admin, workspace["$id"]))
        wait_for(lambda: len(receiver.requests) == 1, timeout=10)
    assert receiver.bodies()[0]["type"] == "task.created"


def test_worker_command(admin: Api, database_url: str, receiver: Receiver) -> None:
    workspace = make_workspace(admin)
    make_webhook(admin, workspace["$id"], receiver.url, ["task.created"])
    make_task(admin, make_project(admin, workspace["$id"]))
    with worker_process(database_url):
        wait_for(lambda: len(receiver.requests) == 1, timeout=20)


@pytest.mark.sqlite_only
def test_worker_help(capsys: pytest.CaptureFixture[str], database_url: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["worker", "--help"])
    assert exited.value.code == 0
    help_text = capsys.readouterr().out
    assert "--batch-size" in help_text
    assert "at least once" in help_text
