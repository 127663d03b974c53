"""What `sprintboard.http.framework` relies on in FastAPI, Starlette and httpx, checked against
the installed versions, a test per hook: after an upgrade, a failure here names what changed
and what to do."""

import asyncio
from typing import Annotated, Any

import httpcore
import httpx
import pytest
from fastapi import Depends, FastAPI, Query, Request
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.routing import Match, Route
from starlette.testclient import TestClient
from starlette.types import Message

from sprintboard.http import framework


@pytest.mark.parametrize(
    ("root_path", "path"),
    [
        ("", "/api/v1/tasks/WEB-1"),
        ("/prefix", "/prefix/api/v1/tasks"),
        ("/prefix", "/prefixed/api/v1/tasks"),
        ("/prefix", "/prefix"),
        ("/prefix", "/elsewhere"),
    ],
)
def test_route_path_is_the_path_starlette_routes_match(root_path: str, path: str) -> None:
    route = Route("/{rest:path}", endpoint=lambda request: None)
    scope = {"type": "http", "method": "GET", "path": path, "root_path": root_path}
    match, child_scope = route.matches(scope)
    matched = "/" + child_scope["path_params"]["rest"] if match is Match.FULL else ""
    assert framework.route_path(scope) == matched, (
        "Starlette now reads a route's path from the scope differently: make "
        "sprintboard.http.framework.route_path do as starlette.routing.Route.matches does."
    )


def _call(app: Any, scope: dict[str, Any]) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent


def _scope(path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "GET",
        "path": path,
        "root_path": "",
        "query_string": b"",
        "headers": [],
        "app": None,
    }


def test_fastapi_routes_need_the_exit_stack_it_is_given() -> None:
    """FastAPI's request handler takes its exit stack from the scope: served by
    `with_exit_stack` a route answers; without it FastAPI refuses (if it stops needing
    one, `with_exit_stack` and its use in `routing.RouteIndex` can go)."""
    app = FastAPI()

    @app.get("/ping")
    def ping() -> dict[str, str]:
        return {"pong": "yes"}

    route = next(r for r in app.router.routes if isinstance(r, APIRoute))
    scope = _scope("/ping")
    _, child_scope = route.matches(scope)
    scope.update(child_scope)
    try:
        sent = _call(lambda s, r, w: framework.with_exit_stack(route.handle, s, r, w), scope)
    except AssertionError as error:
        pytest.fail(
            f"FastAPI no longer finds its exit stack under {framework.EXIT_STACK_KEY!r} ({error}):"
            " see where fastapi.routing's request handler reads it and update framework."
        )
    assert sent[0]["status"] == 200
    assert sent[1]["body"] == b'{"pong":"yes"}'
    scope.pop(framework.EXIT_STACK_KEY)
    with pytest.raises(AssertionError, match=framework.EXIT_STACK_KEY):
        _call(route.handle, scope)


def test_exception_telemetry_is_fastapis_and_passes_everything_through() -> None:
    """The layer FastAPI puts inside its 500 handler is the one `exception_telemetry`
    builds; it answers what the app answers and re-raises what the app raises (the 500 is
    our outer layer's)."""
    built = FastAPI().build_middleware_stack()
    assert isinstance(built, ServerErrorMiddleware)
    inner = built.app
    layer = framework.exception_telemetry(lambda scope, receive, send: None)
    assert type(inner) is type(layer), (
        f"FastAPI's stack now has {type(inner).__qualname__} inside its 500 handler, not "
        f"{type(layer).__qualname__}: update sprintboard.http.framework.exception_telemetry."
    )

    async def answer(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def fail(scope: Any, receive: Any, send: Any) -> None:
        raise LookupError("boom")

    assert [m["type"] for m in _call(framework.exception_telemetry(answer), _scope("/"))] == [
        "http.response.start",
        "http.response.body",
    ]
    with pytest.raises(LookupError, match="boom"):
        _call(framework.exception_telemetry(fail), _scope("/"))


def _answer(status: int) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    return app


def test_the_middleware_stack_is_the_one_use_middleware_stack_builds() -> None:
    """Starlette builds an app's stack on its first request through `build_middleware_stack`:
    replaced, ours serves every request."""
    app = FastAPI()
    built: list[str] = []

    def build() -> Any:
        built.append("ours")
        return _answer(299)

    framework.use_middleware_stack(app, build)
    sent = _call(app, _scope("/anything"))
    assert built == ["ours"], (
        "Starlette no longer builds its middleware stack through build_middleware_stack: "
        "update sprintboard.http.framework.use_middleware_stack."
    )
    assert sent[0]["status"] == 299


def test_the_router_entry_is_the_one_use_router_entry_installs() -> None:
    """A router serves a request through its `middleware_stack`: replaced, ours sees every
    request first, and the one Starlette built still routes it."""
    app = FastAPI()

    @app.get("/ping")
    async def ping() -> dict[str, str]:
        return {"pong": "yes"}

    seen: list[str] = []

    def make(fallback: Any) -> Any:
        async def entry(scope: Any, receive: Any, send: Any) -> None:
            seen.append(scope["path"])
            await framework.with_exit_stack(fallback, scope, receive, send)

        return entry

    framework.use_router_entry(app.router, make)
    sent = _call(app.router, {**_scope("/ping"), "app": app})
    assert seen == ["/ping"], (
        "Starlette's Router no longer serves requests through its middleware_stack: update "
        "sprintboard.http.framework.use_router_entry (and routing.RouteIndex)."
    )
    assert sent[0]["status"] == 200


def test_query_parameter_names_are_those_fastapi_reads_from_the_signature() -> None:
    async def endpoint(
        limit: int, tag: Annotated[str | None, Query(alias="tag-name")] = None
    ) -> None:
        return None

    route = APIRoute("/things", endpoint)
    try:
        names = framework.query_parameter_names(route)
    except AttributeError as error:
        pytest.fail(
            f"FastAPI's APIRoute no longer has what query_parameter_names reads ({error}): "
            "update sprintboard.http.framework.query_parameter_names."
        )
    assert names == ["limit", "tag-name"]


def test_a_route_is_served_by_the_app_serve_route_with_gives_it() -> None:
    async def endpoint() -> None:
        return None

    route = APIRoute("/things", endpoint)
    framework.serve_route_with(route, _answer(298))
    sent = _call(route.handle, _scope("/things"))
    assert sent[0]["status"] == 298, (
        "Starlette's Route.handle no longer calls Route.app: update "
        "sprintboard.http.framework.serve_route_with (TransactionalRoute's direct routes)."
    )


class _Body(BaseModel):
    name: str


async def _dependency(request: Request) -> str:
    return request.method


def test_fastapis_request_handler_completes_without_suspending() -> None:
    """TransactionalRoute runs FastAPI's request handler for an `async` endpoint, its body
    already read, with `completed`: that must never suspend (body, query, dependencies)."""

    class Driven(APIRoute):
        def get_route_handler(self) -> Any:
            handler = super().get_route_handler()

            async def handle(request: Request) -> Any:
                await request.body()
                return framework.completed(handler(request))

            return handle

    app = FastAPI()
    app.router.route_class = Driven

    @app.post("/things")
    async def create_thing(
        body: _Body, n: int, method: Annotated[str, Depends(_dependency)]
    ) -> dict[str, Any]:
        return {"name": body.name, "n": n, "method": method}

    try:
        response = TestClient(app).post("/things?n=2", json={"name": "a"})
    except RuntimeError as error:
        pytest.fail(
            f"FastAPI's request handler now suspends ({error}): TransactionalRoute can no "
            "longer run it in one step; see sprintboard.http.framework.completed."
        )
    assert response.status_code == 200
    assert response.json() == {"name": "a", "n": 2, "method": "POST"}


def test_use_network_backend_sends_httpx_requests_through_the_backend() -> None:
    class Refusing(httpcore.AsyncNetworkBackend):
        def __init__(self) -> None:
            self.asked: list[tuple[str, int]] = []

        async def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
            self.asked.append((host, port))
            raise httpcore.ConnectError("refused by the test's backend")

    backend = Refusing()
    limits = httpx.Limits(max_connections=3)
    transport = httpx.AsyncHTTPTransport(trust_env=False, limits=limits)
    framework.use_network_backend(transport, backend, limits=limits)

    async def get() -> None:
        async with httpx.AsyncClient(transport=transport) as client:
            await client.get("http://example.invalid:8123/")

    with pytest.raises(httpx.ConnectError, match="refused by the test's backend"):
        asyncio.run(get())
    assert backend.asked == [("example.invalid", 8123)], (
        "httpx's transport no longer connects through the pool use_network_backend builds "
        "(its private _pool): update sprintboard.http.framework.use_network_backend."
    )
