"""`/mcp`, loaded on first use: the MCP SDK costs seconds and ~28 MiB to import, which a
process that never serves an agent should not pay.

The SDK's tools run inside a task group that must live as long as the app, so the first
request starts a task that holds it open; the app's shutdown ends that task.
"""

import asyncio
import contextlib
import importlib
from typing import Any

import anyio.to_thread
from starlette.types import ASGIApp, Receive, Scope, Send


class LazyAgentsEndpoint:
    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self._tools: Any = None
        self._started = asyncio.Lock()
        self._stop = asyncio.Event()
        self._host: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await (await self._running())(scope, receive, send)

    async def _running(self) -> Any:
        async with self._started:
            if self._tools is None:
                name = "sprintboard.agents"
                agents = await anyio.to_thread.run_sync(importlib.import_module, name)
                tools = agents.HttpTools(self._app)
                ready = asyncio.Event()
                self._host = asyncio.create_task(self._hold(tools, ready), name="mcp")
                waiting = asyncio.create_task(ready.wait())
                await asyncio.wait({self._host, waiting}, return_when=asyncio.FIRST_COMPLETED)
                if not ready.is_set():
                    waiting.cancel()
                    self._host.result()  # (raises what stopped it)
                self._tools = tools
        return self._tools

    async def _hold(self, tools: Any, ready: asyncio.Event) -> None:
        async with tools.running():
            ready.set()
            await self._stop.wait()

    async def close(self) -> None:
        if self._host is not None:
            self._stop.set()
            with contextlib.suppress(Exception):
                await self._host
