"""A thin client for the public API, used to seed and to time one-off calls."""

import asyncio
import time
from collections.abc import Iterable
from typing import Any

import httpx
import orjson

API = "/api/v1"


class ApiError(RuntimeError):
    pass


class Api:
    def __init__(self, base_url: str, key: str) -> None:
        self.base_url = base_url
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self._client = httpx.Client(base_url=base_url, headers=self.headers, timeout=120)
        self._paths: dict[str, set[str]] | None = None

    def close(self) -> None:
        self._client.close()

    def call(self, method: str, path: str, body: Any = None, *, expect: int = 200) -> Any:
        """The `data` of the answer; anything but `expect` is an error."""
        data, _ = self.timed(method, path, body, expect=expect)
        return data

    def timed(
        self, method: str, path: str, body: Any = None, *, expect: int = 200
    ) -> tuple[Any, float]:
        """The `data` of the answer and the wall time of the call, in milliseconds."""
        content = orjson.dumps(body) if body is not None else None
        started = time.perf_counter()
        response = self._client.request(method, API + path, content=content)
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != expect:
            raise ApiError(f"{method} {path}: {response.status_code} {response.text[:500]}")
        return response.json().get("data"), elapsed

    def has(self, method: str, path: str) -> bool:
        """Whether the running service serves `method path` (per its OpenAPI document)."""
        if self._paths is None:
            document = self._client.get(f"{API}/openapi.json").json()
            self._paths = {
                route: {m.upper() for m in operations}
                for route, operations in document.get("paths", {}).items()
            }
        return method.upper() in self._paths.get(API + path, set())

    def create_many(self, path: str, bodies: Iterable[Any], *, concurrency: int = 16) -> list[Any]:
        """POST every body to `path`, `concurrency` at a time; the created records, in order."""
        return asyncio.run(self._create_many(path, list(bodies), concurrency))

    async def _create_many(self, path: str, bodies: list[Any], concurrency: int) -> list[Any]:
        results: list[Any] = [None] * len(bodies)
        next_index = 0
        limits = httpx.Limits(max_connections=concurrency)
        async with httpx.AsyncClient(
            base_url=self.base_url, headers=self.headers, timeout=120, limits=limits
        ) as client:

            async def worker() -> None:
                nonlocal next_index
                while next_index < len(bodies):
                    index = next_index
                    next_index += 1
                    response = await client.post(API + path, content=orjson.dumps(bodies[index]))
                    if response.status_code != 201:
                        raise ApiError(f"POST {path}: {response.status_code} {response.text[:500]}")
                    results[index] = response.json()["data"]

            await asyncio.gather(*(worker() for _ in range(concurrency)))
        return results
