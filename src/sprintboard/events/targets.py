"""Where a webhook may send: public addresses only, unless the deployment allows others.

A webhook's URL is the one request target that a workspace ADMIN, not the operator, chooses;
without these rules it reaches whatever the server can (its loopback services, the cloud
metadata address, the private network), and delivery results tell its open ports from its
closed ones. So a URL is checked when it is set (`refusal`: every address its host is or
resolves to, in any spelling an address can take), and again when a delivery connects
(`GuardedTransport`: the addresses the name resolves to *then*, which may have changed, and
the connection goes to an address that was checked, not to a second lookup's answer).
"""

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as LookupTimeout
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

from sprintboard.http.framework import use_network_backend

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

LOOKUP_SECONDS = 2.0
"""How long a URL's check waits for its name to resolve (a request waits for it)."""

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def is_public(address: Address) -> bool:
    """Whether `address` is a public unicast address: not loopback, private (RFC 1918,
    fc00::/7), link-local, shared (100.64.0.0/10), multicast, unspecified or reserved, nor
    an IPv6 form of one (IPv4-mapped, 6to4, Teredo, NAT64)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return is_public(address.ipv4_mapped)
        embedded = [address.sixtofour, *(address.teredo or ())]
        if address in _NAT64:
            embedded.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        if any(inner is not None and not is_public(inner) for inner in embedded):
            return False
        if address.is_site_local:
            return False
    return address.is_global and not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_unspecified
        or address.is_reserved
    )


def literal_address(host: str) -> Address | None:
    """The address `host` spells, if it spells one: `127.0.0.1`, `::1`, and the forms
    `inet_aton` reads (`127.1`, `2130706433`, `0x7f000001`, `0177.0.0.1`)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


def _is_local_name(host: str) -> bool:
    return host == "localhost" or host.endswith(".localhost")  # (RFC 6761: always loopback)


def refusal(url: str, *, allow_private: bool) -> str | None:
    """Why `url` may not be a webhook's target, or None if it may.

    A name that does not resolve now is let through: it may be registered later, and
    delivery checks whatever it resolves to then."""
    try:
        parts = urlsplit(url)
        port = parts.port  # (a port out of range raises here)
    except ValueError:
        return "Expected an http(s) URL."
    if port == 0:  # (no server listens there; a connect to it fails or means "any")
        return "Port 0 is not a port a receiver can listen on."
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "Expected an http(s) URL with a host."
    if "@" in parts.netloc:
        return (
            "A URL may not carry credentials (user:password@): a receiver that needs a "
            "secret verifies the webhook signature."
        )
    if allow_private:
        return None
    host = parts.hostname.rstrip(".")
    if _is_local_name(host):
        return f"{host} is not a public address."
    literal = literal_address(host)
    if literal is not None:
        return None if is_public(literal) else f"{host} ({literal}) is not a public address."
    for address in _resolve_briefly(host):
        if not is_public(address):
            return f"{host} resolves to {address}, which is not a public address."
    return None


def _resolve_briefly(host: str) -> list[Address]:
    """The addresses `host` resolves to, waiting at most `LOOKUP_SECONDS` (none if it
    does not resolve in time)."""
    executor = ThreadPoolExecutor(max_workers=1)
    try:
        lookup = executor.submit(socket.getaddrinfo, host, None, type=socket.SOCK_STREAM)
        return _addresses(lookup.result(timeout=LOOKUP_SECONDS))
    except (OSError, UnicodeError, LookupTimeout):
        return []
    finally:
        executor.shutdown(wait=False)


def _addresses(infos: Iterable[tuple[Any, ...]]) -> list[Address]:
    found: list[Address] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if address not in found:
            found.append(address)
    return found


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolves the host itself, refuses it if any address it resolves to is not public,
    and connects to one of those checked addresses. TLS is started by httpcore afterwards
    with the URL's own host name, so SNI and certificate checks are unchanged, as is the
    `Host` header."""

    def __init__(self) -> None:
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        literal = literal_address(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(
                    host, port, type=socket.SOCK_STREAM
                )
            except (OSError, UnicodeError) as error:
                raise httpcore.ConnectError(f"cannot resolve {host}: {error}") from None
            addresses = _addresses(infos)
        refused = [address for address in addresses if not is_public(address)]
        if refused or not addresses:
            raise httpcore.ConnectError(f"refused: {host} is not a public address")
        problem: httpcore.ConnectError | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                problem = httpcore.ConnectError(str(error))
        assert problem is not None
        raise problem

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("refused: not a TCP address")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport, connecting only to public addresses (see `_GuardedBackend`)."""

    def __init__(self, *, limits: httpx.Limits) -> None:
        super().__init__(trust_env=False, limits=limits)
        use_network_backend(self, _GuardedBackend(), limits=limits)
