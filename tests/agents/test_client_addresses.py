"""Client addresses (contract §14): forwarding headers count only from trusted proxies.

Through a real `serve` process, because uvicorn has its own idea of forwarding headers (it
believed them from 127.0.0.1, so a client could pick a new address for every bad key).
"""

import httpx
import pytest

from sprintboard.addresses import ClientAddresses
from sprintboard.config import Settings
from tests.servers import running_server

BAD_KEY = "sb_" + "x" * 43
FAILURES = "5/minute"


def _bad_key_statuses(base_url: str, headers_for: list[dict[str, str]]) -> list[int]:
    with httpx.Client(base_url=f"{base_url}/api/v1", timeout=10) as client:
        return [
            client.get("/me", headers={"Authorization": f"Bearer {BAD_KEY}", **headers}).status_code
            for headers in headers_for
        ]


def _varied(count: int) -> list[dict[str, str]]:
    """Bad-key requests, each claiming another client address, in both header kinds."""
    headers: list[dict[str, str]] = []
    for number in range(count):
        if number % 2:
            headers.append({"X-Forwarded-For": f"203.0.113.{number}"})
        else:
            headers.append({"Forwarded": f"for=198.51.100.{number}"})
    return headers


def test_forwarding_headers_from_an_untrusted_peer_do_not_dodge_the_failure_budget(
    database_url: str,
) -> None:
    env = {"SPRINTBOARD_AUTH_FAILURE_LIMIT": FAILURES, "SPRINTBOARD_DELIVER_EVENTS": "false"}
    with running_server(database_url, env=env) as server:
        statuses = _bad_key_statuses(server.base_url, _varied(10))
    assert statuses == [401] * 5 + [429] * 5, server.log()


def test_a_trusted_proxy_names_the_client(database_url: str) -> None:
    env = {
        "SPRINTBOARD_AUTH_FAILURE_LIMIT": FAILURES,
        "SPRINTBOARD_DELIVER_EVENTS": "false",
        "SPRINTBOARD_TRUSTED_PROXIES": "10.9.0.0/16, 127.0.0.1",
    }
    with running_server(database_url, env=env) as server:
        # Each forwarded client has a budget of its own...
        varied = _bad_key_statuses(server.base_url, _varied(8))
        # ...and one client behind the proxy runs out of it: the client is the rightmost
        # address that is not a trusted proxy, whatever it wrote further left itself.
        one_client = _bad_key_statuses(
            server.base_url,
            [{"X-Forwarded-For": f"192.0.2.{n}, 203.0.113.200, 10.9.1.1"} for n in range(7)],
        )
    assert varied == [401] * 8, server.log()
    assert one_client == [401] * 5 + [429] * 2, server.log()


@pytest.mark.parametrize(
    ("trusted", "peer", "headers", "client", "scheme"),
    [
        ([], "127.0.0.1", [(b"x-forwarded-for", b"1.2.3.4")], "127.0.0.1", "http"),
        (["127.0.0.1"], "127.0.0.1", [(b"x-forwarded-for", b"1.2.3.4")], "1.2.3.4", "http"),
        (["127.0.0.1"], "10.0.0.1", [(b"x-forwarded-for", b"1.2.3.4")], "10.0.0.1", "http"),
        (
            ["10.0.0.0/8"],
            "10.1.2.3",
            [(b"x-forwarded-for", b"6.6.6.6, 1.2.3.4"), (b"x-forwarded-for", b"10.0.0.2")],
            "1.2.3.4",
            "http",
        ),
        (
            ["::1"],
            "::1",
            [(b"forwarded", b'for="[2001:db8::17]:4711";proto=https, for=10.0.0.5')],
            "10.0.0.5",
            "https",
        ),
        (
            ["::1", "10.0.0.0/8"],
            "::1",
            [(b"forwarded", b'for="[2001:db8::17]:4711";proto=https, for=10.0.0.5')],
            "2001:db8::17",
            "https",
        ),
        (["127.0.0.1"], "127.0.0.1", [(b"x-forwarded-proto", b"https")], "127.0.0.1", "https"),
        (["127.0.0.1"], "testclient", [(b"x-forwarded-for", b"1.2.3.4")], "testclient", "http"),
        # A forwarded hop that is not an address is no client: the peer stays the client.
        (["127.0.0.1"], "127.0.0.1", [(b"x-forwarded-for", b"unknown")], "127.0.0.1", "http"),
        (["127.0.0.1"], "127.0.0.1", [(b"forwarded", b"for=_hidden")], "127.0.0.1", "http"),
        (
            ["127.0.0.1"],
            "127.0.0.1",
            [(b"x-forwarded-for", b"1.2.3.4, <script>x</script>")],
            "127.0.0.1",
            "http",
        ),
    ],
)
def test_the_client_address_is_resolved_from_trusted_peers_only(
    trusted: list[str],
    peer: str,
    headers: list[tuple[bytes, bytes]],
    client: str,
    scheme: str,
) -> None:
    scope = {"type": "http", "client": (peer, 5000), "scheme": "http", "headers": headers}
    ClientAddresses(trusted).resolve(scope)
    assert scope["client"][0] == client
    assert scope["scheme"] == scheme


def test_trusted_proxies_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPRINTBOARD_TRUSTED_PROXIES", "10.0.0.0/8, 192.168.1.1")
    assert Settings().trusted_proxies == ["10.0.0.0/8", "192.168.1.1"]
    monkeypatch.setenv("SPRINTBOARD_TRUSTED_PROXIES", "not-an-address")
    with pytest.raises(ValueError, match="trusted_proxies"):
        Settings()
