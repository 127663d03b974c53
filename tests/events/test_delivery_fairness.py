"""Fair delivery across owners (issue 26): one user's many webhooks on receivers that never
answer (tarpits) take one owner's share of a worker, never another workspace's deliveries;
and a worker stops at once under such a backlog, giving back what it could not send."""

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from sprintboard.db import Database
from sprintboard.events.delivery import DeliveryOptions
from sprintboard.models import WebhookDelivery, utcnow
from tests.events.test_delivery import WorkerThread, wait_for
from tests.events.test_events import make_task
from tests.events.test_webhooks import LOOPBACK, Receiver, make_webhook
from tests.factories import Api, make_org_admin, make_project, make_workspace


class Tarpit:
    """A receiver that accepts every connection and never answers; counts those open."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"
        self.held: list[socket.socket] = []
        self.most = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.held = [c for c in self.held if c.fileno() != -1] + [connection]
            self.most = max(self.most, len(self.held))

    def __enter__(self) -> "Tarpit":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.listener.close()
        for connection in self.held:
            connection.close()


@pytest.fixture
def tarpit() -> Iterator[Tarpit]:
    with Tarpit() as running:
        yield running


OPTIONS = DeliveryOptions(
    timeout=30.0, poll_interval=0.02, max_webhooks=5, owner_limit=8, batch_size=50, **LOOPBACK
)


def test_one_users_tarpits_take_one_share_and_a_stop_gives_their_sends_back(
    admin: Api, database: Database, database_url: str, tarpit: Tarpit
) -> None:
    flooded = make_workspace(admin)
    flooded_project = make_project(admin, flooded["$id"])
    for _ in range(12):
        make_webhook(admin, flooded["$id"], tarpit.url, ["task.created"])
    for n in range(10):
        make_task(admin, flooded_project, name=f"flood {n}")
    other = admin.as_(make_org_admin(database))
    workspace = make_workspace(other)
    project = make_project(other, workspace["$id"])
    with Receiver() as receiver:
        make_webhook(other, workspace["$id"], receiver.url, ["task.created"])
        worker = WorkerThread(database_url, OPTIONS)
        with worker:
            wait_for(lambda: tarpit.most >= OPTIONS.owner_limit, timeout=10)
            took = []
            for n in range(5):
                started = time.monotonic()
                make_task(other, project, name=f"mine {n}")
                wait_for(lambda n=n: len(receiver.requests) == n + 1, timeout=10)
                took.append(time.monotonic() - started)
            assert sorted(took)[-1] <= 2.0, took
            # The flooding owner never had more than its share out at once.
            assert tarpit.most == OPTIONS.owner_limit
            stopping = time.monotonic()
        assert time.monotonic() - stopping <= 5.0
    with database.transaction() as session:
        pending = session.execute(
            select(WebhookDelivery.attempts, WebhookDelivery.next_attempt_at).where(
                WebhookDelivery.status == "PENDING"
            )
        ).all()
    # Nothing lost: the 120 flooding deliveries are all still pending; those abandoned
    # mid-send count no attempt and are due again at once.
    assert len(pending) == 120
    assert all(attempts == 0 for attempts, _ in pending)
    now = utcnow()
    assert all(due <= now for _, due in pending)
