"""The client's address, resolved in one place for everything that counts or logs by it.

A request's peer is the client unless the peer is a proxy listed in
`SPRINTBOARD_TRUSTED_PROXIES`: only then do `Forwarded` (RFC 7239) or `X-Forwarded-For` say
who the client is. Anyone can send those headers, so believing them from anyone let a client
pick a new address for every request and never run out of failed authentications (the audit
sent 30 bad keys, each with another `X-Forwarded-For`: 30 times 401, never a 429). uvicorn's own
`proxy_headers` is off for that reason (`cli.py`): it trusts 127.0.0.1 by default.

Behind trusted proxies the chain is read from its right end, skipping the proxies' own
addresses: the first address that is not a trusted proxy is the client (one further left
could have been written by the client itself). `X-Forwarded-Proto` (or `proto=`) sets the
scheme the same way, so HTTPS ended at the proxy still counts as HTTPS.
"""

from collections.abc import Iterable
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network

from starlette.types import Scope

Network = IPv4Network | IPv6Network


def parse_networks(entries: Iterable[str]) -> list[Network]:
    """`10.0.0.1`, `10.0.0.0/8`, `::1`... as networks (a lone address is a network of one);
    ValueError for anything else."""
    return [ip_network(entry.strip(), strict=False) for entry in entries if entry.strip()]


class ClientAddresses:
    def __init__(self, trusted: Iterable[str]) -> None:
        self.trusted = parse_networks(trusted)

    def resolve(self, scope: Scope) -> None:
        """Set `scope["client"]` (and `scope["scheme"]`) to what a trusted proxy forwarded;
        without a trusted peer, nothing changes."""
        if not self.trusted:
            return
        client = scope.get("client")
        if not client or not self._is_trusted(client[0]):
            return
        chain, protos = _forwarded(scope["headers"])
        if chain and (forwarded_for := self._client_of(chain)) is not None:
            scope["client"] = (forwarded_for, 0)
        if protos and protos[-1].lower() in ("http", "https"):
            scope["scheme"] = protos[-1].lower()

    def _client_of(self, chain: list[str]) -> str | None:
        """The nearest untrusted hop; None when that is not an address (`unknown`, an
        obfuscated name, garbage): the peer stays the client rather than a made-up one."""
        for entry in reversed(chain):
            if not self._is_trusted(entry):
                parsed = _address(entry)
                return str(parsed) if parsed is not None else None
        return chain[0]

    def _is_trusted(self, address: str) -> bool:
        parsed = _address(address)
        return parsed is not None and any(parsed in network for network in self.trusted)


def _address(text: str) -> IPv4Address | IPv6Address | None:
    try:
        parsed = ip_address(text)
    except ValueError:
        return None
    if isinstance(parsed, IPv6Address) and parsed.ipv4_mapped is not None:
        return parsed.ipv4_mapped
    return parsed


def _forwarded(headers: Iterable[tuple[bytes, bytes]]) -> tuple[list[str], list[str]]:
    """The forwarded-for chain (left to right) and protocols: from `Forwarded` if sent, else
    from `X-Forwarded-For` and `X-Forwarded-Proto` (every header line of each, in order)."""
    forwarded: list[str] = []
    x_for: list[str] = []
    x_proto: list[str] = []
    for name, value in headers:
        if name == b"forwarded":
            forwarded.append(value.decode("latin-1"))
        elif name == b"x-forwarded-for":
            x_for.extend(part.strip() for part in value.decode("latin-1").split(","))
        elif name == b"x-forwarded-proto":
            x_proto.extend(part.strip() for part in value.decode("latin-1").split(","))
    if forwarded:
        chain: list[str] = []
        protos: list[str] = []
        for element in ",".join(forwarded).split(","):
            for pair in element.split(";"):
                key, _, quoted = pair.strip().partition("=")
                node = quoted.strip().strip('"')
                if key.lower() == "for" and node:
                    chain.append(_without_port(node))
                elif key.lower() == "proto" and node:
                    protos.append(node)
        return chain, protos
    return [_without_port(entry) for entry in x_for if entry], [p for p in x_proto if p]


def _without_port(node: str) -> str:
    """`[2001:db8::1]:4711` → `2001:db8::1`; `192.0.2.1:80` → `192.0.2.1`."""
    if node.startswith("["):
        return node[1:].partition("]")[0]
    if node.count(":") == 1:
        return node.partition(":")[0]
    return node


LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback_url(url: str) -> bool:
    """Whether `url` is `http://` to a loopback host (127.0.0.1, ::1, localhost): the one
    place a plain-HTTP OpenID issuer is allowed, for development and tests."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme == "http" and (parts.hostname or "").lower() in LOOPBACK_NAMES
