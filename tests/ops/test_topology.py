"""The deployment at scale, run for real on this machine and checked across processes.

Two `sprintboard serve` instances take mixed load, a second pair on the same database has a
small rate limit, and two `sprintboard worker` processes deliver webhooks to a receiver that
verifies every signature; all on a PostgreSQL cluster and a Redis server of the test's own
(tests/topology.py), since the test stops and restarts them. Processes are killed with
SIGKILL mid-work; the servers are restarted under load.

It is one test with a subtest per promise: the promises share one topology, which takes
seconds to start, and one test function is never split across pytest-xdist's workers (the
suite runs with `--dist load`, under which a module's tests may go to both, each starting a
topology of its own). Each subtest first starts again any process an earlier one killed, so
each stands alone; every wait is bounded. The deliveries of a killed worker are sent again
only once their lease has run out (40 s), so 2 and 4 run between the kill (3a) and the check
(3b); 5 restarts the servers, and so comes last.
"""

import contextlib
import itertools
import signal
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from sprintboard.events.fanout import RECONNECT_AFTER
from sprintboard.http.ratelimit import OUTAGE_BACKOFF
from tests.topology import Behaviour, Sprintboard, Topology, pid_of_connection, running_topology
from tests.topology import wait_until as _wait_until

pytestmark = [pytest.mark.redis, pytest.mark.postgresql_only]

SMALL_LIMIT = 40
"""Requests per key per minute on the `limited` pair."""
CREATES = 60
"""Concurrent creates for the key check."""


@pytest.fixture(scope="module")
def topology() -> Iterator[Topology]:
    started = time.monotonic()
    with running_topology(
        fast_limit="100000/minute", small_limit=f"{SMALL_LIMIT}/minute"
    ) as running:
        print(f"topology up in {time.monotonic() - started:.1f} s")  # (shown with -rP or -s)
        yield running


def test_the_deployment_keeps_its_promises(
    topology: Topology, subtests: pytest.Subtests, record_property: Callable[[str, Any], None]
) -> None:
    def step(name: str, run: Callable[[Clients], Any]) -> Any:
        """Run one subtest; its result (None if it failed). Facts about it (a dict result,
        or the result's `facts()`) are recorded and printed (shown with -rP or -s)."""
        result = None
        with subtests.test(name):
            started = time.monotonic()
            topology.revive()
            try:
                with Clients() as clients:
                    result = run(clients)
            except AssertionError as error:
                raise AssertionError(f"{error}\n{topology.logs()}") from error
            facts = result if isinstance(result, dict) else getattr(result, "facts", dict)()
            facts["seconds"] = round(time.monotonic() - started, 1)
            for fact, value in facts.items():
                record_property(f"{name}: {fact}", value)
            print(f"{name}: {facts}")
        return result

    step("1 consecutive unique keys across instances", lambda c: keys_stay_consecutive(topology, c))
    # 3's redeliveries wait for the killed worker's lease (40 s): 2 and 4 run meanwhile.
    killed: KilledWorker | None = step(
        "3a a worker SIGKILLed in the middle of a delivery", lambda c: kill_a_worker(topology, c)
    )
    step("2 one rate budget across instances", lambda c: rate_budget_is_shared(topology, c))
    step(
        "4 no acknowledged write lost when an instance is SIGKILLed",
        lambda c: writes_survive_a_killed_serve(topology, c),
    )
    step(
        "3b every event of 3a delivered, each under one webhook-id",
        lambda c: KilledWorker.check_delivered(killed, c),
    )
    restarts: Restarts | None = step(
        "5 every process recovers by itself from PostgreSQL and Redis restarts",
        lambda c: restart_the_servers_under_load(topology, c).check_recovered(),
    )
    with subtests.test("5b no 500: during an outage 503 or success only, none after it"):
        assert restarts is not None, "the restart scenario did not run to its end"
        restarts.check_no_500()


# --- clients -----------------------------------------------------------------------------


def client(server: Sprintboard, key: str, timeout: float = 30) -> httpx.Client:
    return httpx.Client(
        base_url=f"{server.base_url}/api/v1",
        headers={"Authorization": f"Bearer {key}"},
        timeout=timeout,
        trust_env=False,
    )


class Clients:
    """One client per instance and key, kept for a step (a new httpx client reads the
    system's certificates: a tenth of a second on a busy machine), closed after it."""

    def __init__(self) -> None:
        self.open: dict[tuple[str, str], httpx.Client] = {}

    def of(self, server: Sprintboard, key: str) -> httpx.Client:
        if (server.name, key) not in self.open:
            self.open[server.name, key] = client(server, key)
        return self.open[server.name, key]

    def __enter__(self) -> "Clients":
        return self

    def __exit__(self, *exc: object) -> None:
        for api in self.open.values():
            api.close()


def data(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, f"{response.request.url}: {response.text}"
    return response.json()["data"]


def board(api: httpx.Client, key: str) -> dict[str, str]:
    """A new workspace with a project keyed `key`: the `workspaceId` and `projectId` of a
    create."""
    workspace = data(api.post("/workspaces", json={"name": f"Topology {key}"}), 201)
    project = data(
        api.post(f"/workspaces/{workspace['$id']}/projects", json={"name": key, "key": key}), 201
    )
    return {"workspaceId": workspace["$id"], "projectId": project["$id"]}


_users = itertools.count(1)


def new_key(admin: httpx.Client) -> str:
    """A key of a new user: a rate budget of its own."""
    n = next(_users)
    user = data(admin.post("/users", json={"name": f"u{n}", "email": f"u{n}@example.com"}), 201)
    key: str = data(admin.post(f"/users/{user['$id']}/keys", json={"name": "topology"}), 201)["key"]
    return key


def subscribe(topology: Topology, api: httpx.Client, workspace_id: str, path: str) -> str:
    """A webhook for `task.created` to the receiver's `path`, registered with the receiver;
    returns the webhook's `$id`."""
    hook = data(
        api.post(
            f"/workspaces/{workspace_id}/webhooks",
            json={"url": topology.receiver.base_url + path, "events": ["task.created"]},
        ),
        201,
    )
    topology.receiver.expect(path, hook["secret"])
    return str(hook["$id"])


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """As topology.wait_until, failing the test (not erroring) when time runs out."""
    try:
        _wait_until(condition, timeout, what)
    except TimeoutError as error:
        raise AssertionError(str(error)) from None


# --- 1 -----------------------------------------------------------------------------------


def keys_stay_consecutive(topology: Topology, clients: Clients) -> dict[str, Any]:
    apis = [clients.of(server, topology.admin_key) for server in topology.serves]
    body = board(apis[0], "KEYS")

    def create(n: int) -> httpx.Response:
        return apis[n % 2].post("/tasks", json={**body, "name": f"Task {n}"})

    with ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(create, range(CREATES)))
    failures = [r.text for r in responses if r.status_code != 201]
    assert not failures, failures[:3]
    expected = [f"KEYS-{n}" for n in range(1, CREATES + 1)]
    keys = sorted((r.json()["data"]["key"] for r in responses), key=lambda k: int(k[5:]))
    assert keys == expected
    for api in apis:
        listed = data(api.get("/tasks", params={"workspaceId": body["workspaceId"], "limit": 500}))
        assert listed["total"] == CREATES
        assert sorted(d["key"] for d in listed["documents"]) == sorted(expected)
    return {"creates": CREATES}


# --- 2 -----------------------------------------------------------------------------------


def rate_budget_is_shared(topology: Topology, clients: Clients) -> dict[str, Any]:
    admin = clients.of(topology.serves[0], topology.admin_key)
    one, two = topology.limited

    def through(server: Sprintboard, key: str, count: int = 1) -> list[tuple[int, int]]:
        """`count` requests through one instance: (status, RateLimit-Remaining) of each."""
        api = clients.of(server, key)
        answers = [api.get("/me") for _ in range(count)]
        return [(a.status_code, int(a.headers["RateLimit-Remaining"])) for a in answers]

    def alternating(key: str, count: int) -> list[tuple[int, int]]:
        return [through(topology.limited[n % 2], key)[0] for n in range(count)]

    def shared_budget_spent(key: str) -> None:
        answers = alternating(key, SMALL_LIMIT + 2)
        assert answers[:SMALL_LIMIT] == [(200, SMALL_LIMIT - n) for n in range(1, SMALL_LIMIT + 1)]
        assert answers[SMALL_LIMIT:] == [(429, 0), (429, 0)]

    shared_budget_spent(new_key(admin))

    # Redis out: each instance counts on its own, with no error for the client.
    topology.redis.stop()
    try:
        key = new_key(admin)
        first = through(one, key, 3)
        assert first == [(200, SMALL_LIMIT - n) for n in (1, 2, 3)]
        assert through(two, key, 3) == first, "each instance counts on its own"
        rest = through(one, key, SMALL_LIMIT - 3 + 1)
        assert rest[:-1] == [(200, SMALL_LIMIT - n) for n in range(4, SMALL_LIMIT + 1)]
        assert rest[-1] == (429, 0)
        assert through(two, key) == [(200, SMALL_LIMIT - 4)], "the other's budget is its own"
    finally:
        topology.redis.start()

    # Redis back (empty): after OUTAGE_BACKOFF both count in Redis again. A probe is a
    # request through each with a fresh key: the second sees the first's only if both share.
    def both_share() -> bool:
        probe = new_key(admin)
        return [through(one, probe)[0], through(two, probe)[0]] == [
            (200, SMALL_LIMIT - 1),
            (200, SMALL_LIMIT - 2),
        ]

    back = time.monotonic()
    time.sleep(OUTAGE_BACKOFF)
    wait_until(both_share, 30, "both instances counting in Redis again")
    shared_budget_spent(new_key(admin))
    return {"seconds until shared again": round(time.monotonic() - back, 1)}


# --- 3 -----------------------------------------------------------------------------------

RESENT_AFTER_2XX_IS_A_FAILURE = True
"""Whether a delivery answered 2xx well before its worker was killed must not arrive again
(CONTRACT §14, "Fair delivery"). Not yet so on this branch: a worker records a round's
outcomes together, after the slowest send, so a kill in between sends the answered ones
again. The count is recorded either way (`record_property`); set this once the contract's
rule is built."""
MARGIN = 0.5
"""Seconds between a 2xx answer and the kill, past which the answer counts as recorded."""


@dataclass
class KilledWorker:
    """Events whose deliveries were under way when a worker was killed."""

    topology: Topology
    path: str
    webhook_id: str
    task_ids: set[str]
    killed_at: float

    def check_delivered(self: "KilledWorker | None", clients: Clients) -> dict[str, Any]:
        assert self is not None, "no worker was killed"
        topology, path = self.topology, self.path
        admin = clients.of(topology.serves[0], topology.admin_key)

        def delivered_ids() -> set[str]:
            return {
                a.body["data"]["workItem"]["$id"]
                for a in topology.receiver.at(path)
                if a.status == 200 and a.body.get("type") == "task.created"
            }

        def all_recorded_delivered() -> bool:
            listed = data(
                admin.get(f"/webhooks/{self.webhook_id}/deliveries", params={"limit": 500})
            )
            return listed["total"] == len(self.task_ids) and all(
                d["status"] == "DELIVERED" for d in listed["documents"]
            )

        # The killed worker's claims are sent again once their lease runs out (40 s with
        # the default timeout).
        wait_until(lambda: delivered_ids() >= self.task_ids, 90, "every event answered 2xx")
        wait_until(all_recorded_delivered, 90, "every delivery recorded as delivered")

        arrivals = topology.receiver.at(path)
        assert all(a.signed for a in arrivals), "a delivery whose signature did not verify"
        assert delivered_ids() == self.task_ids
        per_id = Counter(a.webhook_id for a in arrivals)
        assert len(per_id) == len(self.task_ids), "one webhook-id per event, on every attempt"
        subject: dict[str, set[str]] = defaultdict(set)
        for arrival in arrivals:
            subject[arrival.webhook_id].add(arrival.body["data"]["workItem"]["$id"])
        assert all(len(ids) == 1 for ids in subject.values())

        answered_before_kill = {
            a.webhook_id
            for a in arrivals
            if a.status == 200
            and a.answered_at is not None
            and a.answered_at < self.killed_at - MARGIN
        }
        resent_after_2xx = sorted(
            webhook_id
            for webhook_id in answered_before_kill
            if any(
                a.webhook_id == webhook_id and a.received_at > self.killed_at - MARGIN
                for a in arrivals
            )
        )
        if RESENT_AFTER_2XX_IS_A_FAILURE:
            assert not resent_after_2xx, f"sent again after a 2xx answer: {resent_after_2xx}"
        return {
            "events": len(self.task_ids),
            "requests": len(arrivals),
            "webhook-ids received more than once": sum(1 for n in per_id.values() if n > 1),
            "resent after a 2xx answer": len(resent_after_2xx),
        }


def kill_a_worker(topology: Topology, clients: Clients) -> KilledWorker:
    apis = [clients.of(server, topology.admin_key) for server in topology.serves]
    body = board(apis[0], "HOOK")
    path = "/hooks/killed-worker"
    webhook_id = subscribe(topology, apis[1], body["workspaceId"], path)
    # Every fifth first send waits 2 s for its answer, holding up its worker's round; the
    # rest are answered at once.
    topology.receiver.behaviour[path] = Behaviour(slow_every=5, slow_seconds=2.0)

    # The workers wait while the events are written, then claim full rounds of five.
    for worker in topology.workers:
        worker.send(signal.SIGSTOP)
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            created = list(
                pool.map(
                    lambda n: data(apis[n % 2].post("/tasks", json={**body, "name": f"E{n}"}), 201),
                    range(30),
                )
            )
    finally:
        for worker in topology.workers:
            worker.send(signal.SIGCONT)

    # Kill the worker that holds a slow send, its round's quick ones answered meanwhile.
    pids = {worker.pid: worker for worker in topology.workers}
    victim: list[Sprintboard] = []

    def a_worker_is_mid_delivery() -> bool:
        now = time.monotonic()
        for arrival in topology.receiver.in_flight(path):
            if now - arrival.received_at >= 1.0:
                pid = pid_of_connection(arrival.peer_port, pids)
                if pid is not None:
                    victim.append(pids[pid])
                    return True
        return False

    wait_until(a_worker_is_mid_delivery, 30, "a worker in the middle of a slow delivery")
    killed_at = time.monotonic()
    victim[0].send(signal.SIGKILL)
    victim[0].stop()  # (reaped; the next step starts a new one in its place)
    return KilledWorker(topology, path, webhook_id, {t["$id"] for t in created}, killed_at)


# --- 4 -----------------------------------------------------------------------------------


def writes_survive_a_killed_serve(topology: Topology, clients: Clients) -> dict[str, Any]:
    victim, survivor = topology.serves
    key = topology.admin_key
    body = board(clients.of(survivor, key), "LOAD")
    lock = threading.Lock()
    created: dict[str, dict[str, Any]] = {}  # acknowledged (201): $id -> the record
    named: dict[str, str] = {}  # acknowledged renames (200): $id -> the name sent
    tried = Counter[str]()
    counter = itertools.count()

    def load() -> None:
        with client(victim, key, 10) as first, client(survivor, key, 10) as second:
            apis = [first, second]
            for _ in range(25):
                n = next(counter)
                try:
                    response = apis[n % 2].post("/tasks", json={**body, "name": f"L{n}"})
                    tried["create"] += 1
                    if response.status_code != 201:
                        continue
                    record = response.json()["data"]
                    with lock:
                        created[record["$id"]] = record
                    renamed = apis[(n + 1) % 2].patch(
                        f"/tasks/{record['$id']}", json={"name": f"L{n} renamed"}
                    )
                    tried["rename"] += 1
                    if renamed.status_code == 200:
                        with lock:
                            named[record["$id"]] = f"L{n} renamed"
                    apis[n % 2].get("/tasks", params={"workspaceId": body["workspaceId"]})
                    tried["list"] += 1
                except httpx.TransportError:
                    tried["transport error"] += 1

    threads = [threading.Thread(target=load) for _ in range(8)]
    for thread in threads:
        thread.start()
    try:
        wait_until(lambda: len(created) >= 40, 60, "load under way")
        victim.send(signal.SIGKILL)
        killed_with = len(created)
    finally:
        deadline = time.monotonic() + 120
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
    assert not any(thread.is_alive() for thread in threads), "load did not finish in time"
    victim.stop()  # (reaped)

    api = clients.of(survivor, key)
    for task_id, record in created.items():
        found = data(api.get(f"/tasks/{task_id}"))
        assert found["key"] == record["key"]
        if task_id in named:
            assert found["title"] == named[task_id]
        else:
            assert found["title"] in (record["title"], f"{record['title']} renamed")
    listed = data(api.get("/tasks", params={"workspaceId": body["workspaceId"], "limit": 500}))
    total = listed["total"]
    assert total >= len(created)
    assert sorted(int(d["key"][5:]) for d in listed["documents"]) == list(range(1, total + 1))
    return {
        "acknowledged creates": len(created),
        "acknowledged when killed": killed_with,
        "acknowledged renames": len(named),
        "requests": dict(tried),
    }


# --- 5 -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    instance: str
    started: float
    ended: float
    status: int | None
    error: str | None = None


@dataclass
class Restarts:
    """What happened while PostgreSQL, then Redis, was stopped for a while and started again
    under load; the checks run on it afterwards."""

    calls: list[Call] = field(default_factory=list)
    outages: list[tuple[str, float, float]] = field(default_factory=list)
    """(server, stopped at, answering again at)."""
    processes_started_again: list[str] = field(default_factory=list)
    undelivered: int = 0

    def facts(self) -> dict[str, Any]:
        return {
            "requests": len(self.calls),
            "statuses": dict(Counter(c.status or c.error for c in self.calls)),
            "seconds": round(self.calls[-1].ended - self.calls[0].started, 1) if self.calls else 0,
        }

    def during(self, call: Call) -> str | None:
        for server, down, up in self.outages:
            if call.started < up and call.ended > down:
                return server
        return None

    def check_recovered(self) -> "Restarts":
        assert not self.processes_started_again, f"died: {self.processes_started_again}"
        assert self.undelivered == 0, f"{self.undelivered} events were never delivered"
        for server, _, up in self.outages:
            for instance in {c.instance for c in self.calls}:
                assert any(
                    c.instance == instance and c.started > up and c.status == 201
                    for c in self.calls
                ), f"{instance} created nothing after {server} came back"
        return self

    def check_no_500(self) -> None:
        wrong_during = [c for c in self.calls if self.during(c) and not _ok_or_503(c)]
        wrong_after = [
            c for c in self.calls if not self.during(c) and (c.status is None or c.status >= 500)
        ]
        wrong = wrong_during + wrong_after
        assert not wrong, (
            f"{len(wrong_during)} answers during an outage were neither success nor 503, "
            f"{len(wrong_after)} outside one failed, of {len(self.calls)}:\n"
            + "\n".join(
                f"{self.during(c) or 'no outage'}: {c.instance} {c.status} {c.error or ''}"
                for c in wrong[:10]
            )
        )


def _ok_or_503(call: Call) -> bool:
    return call.status is not None and (200 <= call.status < 300 or call.status == 503)


def restart_the_servers_under_load(topology: Topology, clients: Clients) -> Restarts:
    restarts = Restarts()
    starts = {child.name: child.starts for child in topology.children}
    admin = clients.of(topology.serves[0], topology.admin_key)
    body = board(admin, "RST")
    path = "/hooks/restarts"
    subscribe(topology, admin, body["workspaceId"], path)
    lock = threading.Lock()
    created: set[str] = set()
    stop = threading.Event()
    counter = itertools.count()

    def load() -> None:
        servers = topology.serves
        with (
            client(servers[0], topology.admin_key, 15) as a,
            client(servers[1], topology.admin_key, 15) as b,
        ):
            apis = [a, b]
            deadline = time.monotonic() + 150
            while not stop.is_set() and time.monotonic() < deadline:
                n = next(counter)
                started = time.monotonic()
                try:
                    if n % 2:
                        response = apis[n // 2 % 2].post("/tasks", json={**body, "name": f"R{n}"})
                    else:
                        response = apis[n // 2 % 2].get(
                            "/tasks", params={"workspaceId": body["workspaceId"], "limit": 5}
                        )
                    call = Call(
                        servers[n // 2 % 2].name, started, time.monotonic(), response.status_code
                    )
                    if response.status_code == 201:
                        with lock:
                            created.add(response.json()["data"]["$id"])
                except httpx.HTTPError as error:
                    call = Call(
                        servers[n // 2 % 2].name, started, time.monotonic(), None, repr(error)
                    )
                with lock:
                    restarts.calls.append(call)
                time.sleep(0.05)

    def created_after(moment: float) -> bool:
        with lock:
            return all(
                any(
                    c.instance == s.name and c.started > moment and c.status == 201
                    for c in restarts.calls
                )
                for s in topology.serves
            )

    threads = [threading.Thread(target=load) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(1)
        down = time.monotonic()
        topology.postgres.stop()
        time.sleep(2)
        topology.postgres.start()
        up = time.monotonic()
        restarts.outages.append(("PostgreSQL", down, up))
        wait_until(lambda: created_after(up), 60, "both instances writing again")

        down = time.monotonic()
        topology.redis.stop()
        time.sleep(2)
        topology.redis.start()
        up = time.monotonic()
        restarts.outages.append(("Redis", down, up))
        wait_until(lambda: created_after(up), 60, "both instances writing again")
        # The workers listen for announcements again (they poll meanwhile).
        channel = "sprintboard:deliveries-written"
        with topology.redis.client() as redis:
            wait_until(
                lambda: dict(redis.pubsub_numsub(channel)).get(channel.encode()) == 2,
                RECONNECT_AFTER + 30,
                "both workers subscribed again",
            )

        # The rate limiter counts in Redis again: one budget across the instances.
        def shared() -> bool:
            probe = new_key(admin)
            remaining = []
            for server in topology.serves:
                remaining.append(
                    clients.of(server, probe).get("/me").headers["RateLimit-Remaining"]
                )
            return int(remaining[0]) - int(remaining[1]) == 1

        time.sleep(OUTAGE_BACKOFF)
        wait_until(shared, 30, "one rate budget again")
        time.sleep(1)
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)

    delivered: set[str] = set()

    def all_delivered() -> bool:
        delivered.update(
            a.body["data"]["workItem"]["$id"] for a in topology.receiver.at(path) if a.signed
        )
        return delivered >= created

    with contextlib.suppress(AssertionError):
        wait_until(all_delivered, 60, "every event delivered")
    restarts.undelivered = len(created - delivered)
    restarts.processes_started_again = [
        child.name
        for child in topology.children
        if child.starts != starts[child.name] or not child.alive
    ]
    return restarts
