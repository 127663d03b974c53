"""`create_app(settings)`: the ASGI application."""

import asyncio
import contextlib
import ctypes
import gc
import logging
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any

from anyio import CapacityLimiter
from fastapi import APIRouter, FastAPI
from fastapi.openapi.utils import get_openapi
from sqlalchemy import text
from starlette.responses import Response
from starlette.routing import Route

from sprintboard import __version__
from sprintboard.agents_endpoint import LazyAgentsEndpoint
from sprintboard.audit.router import router as audit_router
from sprintboard.config import Settings
from sprintboard.customfields.router import router as customfields_router
from sprintboard.db import Database
from sprintboard.docs import add_docs_routes
from sprintboard.errors import Unavailable, app_error_response
from sprintboard.events.delivery import DeliveryOptions, run_worker
from sprintboard.events.router import router as events_router
from sprintboard.events.service import DELIVERIES_WRITTEN, EVENTS_WRITTEN
from sprintboard.events.stream import POLL_EVERY, POLL_EVERY_WITH_REDIS, StreamHub
from sprintboard.events.webhooks import WebhookPolicy
from sprintboard.http import framework
from sprintboard.http.authentication import Authentication
from sprintboard.http.deps import API_PREFIX, BEARER_SCHEME, REQUEST_THREADS, operation_id
from sprintboard.http.handlers import install_error_handlers
from sprintboard.http.middleware import DATABASE_RETRY, DATABASE_UNAVAILABLE, middleware_stack
from sprintboard.http.routing import RouteIndex
from sprintboard.identity import service as identity_service
from sprintboard.identity import sessions
from sprintboard.identity.router import router as identity_router
from sprintboard.integrations.router import router as integrations_router
from sprintboard.invitations.router import router as invitations_router
from sprintboard.logs import configure_logging
from sprintboard.mail import delivery as mail_delivery
from sprintboard.mail.delivery import run_mail_worker
from sprintboard.pages import WebPages
from sprintboard.projects.router import router as projects_router
from sprintboard.queries.router import router as queries_router
from sprintboard.responses import JSONResponse
from sprintboard.schemas import state_string_rules_of
from sprintboard.serverkey import SecretBox, server_key
from sprintboard.sprints.router import router as sprints_router
from sprintboard.sso.router import routes as sso_routes
from sprintboard.wiring import wire
from sprintboard.workflows.router import router as workflows_router
from sprintboard.workitems.router import router as workitems_router
from sprintboard.workspaces.router import router as workspaces_router

DOMAIN_ROUTERS: list[APIRouter] = [
    identity_router,
    workspaces_router,
    projects_router,
    workflows_router,
    customfields_router,
    workitems_router,
    sprints_router,
    events_router,
    invitations_router,
    audit_router,
    integrations_router,
    queries_router,
]

logger = logging.getLogger("sprintboard.http")

AUTHENTICATION = Authentication(
    cookie=sessions.COOKIE,
    by_key=identity_service.authenticate,
    by_session=sessions.authenticate_session,
    check_origin=lambda request: sessions.check_origin(request, required=True),
    key_owner=identity_service.usable_key,
    session_owner=sessions.session_owner,
    well_formed_session=sessions.well_formed,
)
"""Identity's answers to who sent a request, handed to the HTTP layer (which imports no
domain)."""


def _in_background(
    lifetime: contextlib.AsyncExitStack, work: Coroutine[Any, Any, None], name: str
) -> None:
    """`work` runs in a task until the app stops (it is then cancelled and awaited)."""
    task = asyncio.create_task(work, name=name)

    async def cancelled() -> None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    lifetime.push_async_callback(cancelled)


async def _stopped(deliveries: asyncio.Task[None], stop: asyncio.Event) -> None:
    """The delivery loop, stopped: sends in flight get a moment to finish; one cancelled is
    sent again after its lease, by this process's successor or another worker."""
    stop.set()
    await asyncio.wait({deliveries}, timeout=5)
    deliveries.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await deliveries


_M_ARENA_MAX = -8
"""`mallopt`'s parameter for how many malloc arenas glibc may make (`malloc.h`)."""


def _few_malloc_arenas() -> None:
    """At most two glibc malloc arenas in this process. By default every request thread (on
    PostgreSQL) gets an arena of its own, and what one thread frees is kept apart from the
    others: the bench's peak RSS was 2 to 3 MiB higher. Without glibc, nothing changes."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").mallopt(_M_ARENA_MAX, 2)


def create_app(settings: Settings | None = None, *, database: Database | None = None) -> FastAPI:
    """Raises `serverkey.MissingServerKey` on PostgreSQL without `SPRINTBOARD_SECRET_KEY`."""
    settings = settings or Settings()
    wire()
    policy = WebhookPolicy(
        box=SecretBox(server_key(settings)), allow_private=settings.webhook_allow_private
    )

    mail_options = mail_delivery.options_from(settings, policy.box)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        """Opens the database and, unless `deliver_events` is off, delivers webhook events in
        the background of this process (any number of processes may: they share the work).
        With Redis, it tells every instance when a commit here has written deliveries.
        """
        async with contextlib.AsyncExitStack() as lifetime:  # (undone in reverse order)
            app.state.database = database or Database(settings.database_url)
            if database is None:
                lifetime.callback(app.state.database.dispose)
            app.state.request_threads = CapacityLimiter(REQUEST_THREADS)  # (PostgreSQL's)
            fan_out = None
            hub = app.state.stream_hub = StreamHub(
                app.state.database,
                poll_every=POLL_EVERY_WITH_REDIS if settings.redis_url else POLL_EVERY,
            )
            lifetime.enter_context(EVENTS_WRITTEN.listening(hub.wake))
            if settings.redis_url:
                from sprintboard.events.fanout import RedisFanOut  # (6 MiB not needed without)

                fan_out = RedisFanOut(settings.redis_url, settings.rate_limit_prefix)
                lifetime.push_async_callback(fan_out.close)
                lifetime.enter_context(DELIVERIES_WRITTEN.listening(fan_out.announce))
                events_fan_out = RedisFanOut(
                    settings.redis_url, settings.rate_limit_prefix, topic="events-written"
                )
                lifetime.push_async_callback(events_fan_out.close)
                lifetime.enter_context(EVENTS_WRITTEN.listening(events_fan_out.announce))
                _in_background(lifetime, events_fan_out.listen_to(hub.wake), "stream news")
            _in_background(lifetime, hub.poll(), "stream poll")
            if settings.deliver_events:
                stop = asyncio.Event()
                options = DeliveryOptions(box=policy.box, allow_private=policy.allow_private)
                deliveries = asyncio.create_task(
                    run_worker(app.state.database, options=options, stop=stop, fan_out=fan_out),
                    name="deliveries",
                )
                lifetime.push_async_callback(_stopped, deliveries, stop)
                mail_stop = asyncio.Event()
                mailing = asyncio.create_task(
                    run_mail_worker(app.state.database, options=mail_options, stop=mail_stop),
                    name="mail",
                )
                lifetime.push_async_callback(mail_delivery.stopped, mailing, mail_stop)
            lifetime.push_async_callback(app.state.agents.close)
            _few_malloc_arenas()
            if settings.gc_freeze:
                # What start-up built (routes, models, schemas: most of the heap) lives as
                # long as the process; frozen, the collector no longer walks it on every full
                # collection, which had made fetching a 5,000-item sprint slower by a tenth.
                gc.collect()
                gc.freeze()
            yield

    app = FastAPI(
        title="sprintboard",
        version=__version__,
        summary="Workspaces, projects, sprints and work items over a JSON REST API.",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,  # (our own: `docs.add_docs_routes`, with the assets served here)
        redoc_url=None,
        default_response_class=JSONResponse,
        redirect_slashes=False,
        generate_unique_id_function=operation_id,
        lifespan=lifespan,
        telemetry=None
        if settings.opentelemetry
        else {"tracing": False, "metrics": False, "logs": False},
    )
    app.state.settings = settings
    app.state.webhook_policy = policy
    app.state.outbox = mail_options.outbox
    app.state.authentication = AUTHENTICATION
    if database is not None:
        app.state.database = database
    for router in DOMAIN_ROUTERS:
        # The routes themselves, not `include_router`: FastAPI then matches each request
        # against plain routes instead of walking nested routers (~300 µs a request).
        app.router.routes.extend(router.routes)
    _add_health_routes(app)
    add_docs_routes(app, openapi_url=f"{API_PREFIX}/openapi.json")
    app.state.agents = LazyAgentsEndpoint(app)
    app.router.routes.append(
        Route("/mcp", app.state.agents, methods=["GET", "POST", "DELETE"], include_in_schema=False)
    )
    app.router.routes.extend(sso_routes(settings, policy.box))
    framework.use_router_entry(app.router, lambda fallback: RouteIndex(app.router, fallback))
    install_error_handlers(app)
    configure_logging(settings.log_level, settings.log_format)
    framework.use_middleware_stack(
        app,
        lambda: middleware_stack(
            app,
            settings,
            authentication=AUTHENTICATION,
            inner=WebPages(app.router, sso=settings.oidc_configured),
        ),
    )
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _add_health_routes(app: FastAPI) -> None:
    @app.get("/healthz", tags=["health"], include_in_schema=True)
    async def check_health() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get(
        "/readyz",
        tags=["health"],
        responses={
            503: _error("Database unreachable", {"Retry-After": {"schema": {"type": "integer"}}})
        },
    )
    async def check_readiness() -> Response:
        """The database answers."""
        database: Database = app.state.database
        try:
            await database.call(_ping, database)  # (in a thread on PostgreSQL: it may wait)
        except Exception as error:
            logger.warning("readiness check failed: %r", error)
            return app_error_response(Unavailable(DATABASE_UNAVAILABLE, DATABASE_RETRY))
        return JSONResponse({"status": "ok"})


def _ping(database: Database) -> None:
    with database.engine.connect() as connection:
        connection.execute(text("SELECT 1"))


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, less its 422 responses (validation errors here are 400s), plus what
    every API operation shares: the bearer key and the responses of the middleware.
    """
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title,
        version=app.version,
        summary=app.summary,
        routes=app.routes,
        servers=[{"url": "/"}],
    )
    for path, path_item in schema.get("paths", {}).items():
        for method, operation in path_item.items():
            operation.get("responses", {}).pop("422", None)
            if path.startswith(f"{API_PREFIX}/") and path != app.openapi_url:
                operation.setdefault("security", [{"HTTPBearer": []}])  # (signing in: [])
                _document_cross_cutting_responses(method, operation)
                _name_cursor_rule(operation)
                for parameter in operation.get("parameters", ()):
                    if parameter["in"] == "query":  # (no U+0000 in any: guards.py)
                        state_string_rules_of(parameter["schema"])
    schema.setdefault("components", {})["securitySchemes"] = {"HTTPBearer": BEARER_SCHEME}
    for name in ("HTTPValidationError", "ValidationError"):
        schema.get("components", {}).get("schemas", {}).pop(name, None)
    app.openapi_schema = schema
    return schema


UNSTATED_RULES = "Rules the document cannot state:"
"""How an operation's description introduces the rules its schemas cannot express (a
fuzz test accepts a 400 for valid data only for a field named after it)."""


def _name_cursor_rule(operation: dict[str, Any]) -> None:
    """A paged list's `cursor` must be one of its own pages' `nextCursor`: no schema can say
    so, so the description does."""
    if not any(p["name"] == "cursor" for p in operation.get("parameters", ())):
        return
    rule = "`cursor` must be a `nextCursor` this list gave, with the same filters and order."
    description = operation.get("description", "")
    if UNSTATED_RULES in description:
        operation["description"] = description.replace(UNSTATED_RULES, f"{UNSTATED_RULES} {rule}")
    else:
        operation["description"] = f"{description}\n\n{UNSTATED_RULES} {rule}".strip()


def _error(description: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }
    if headers:
        response["headers"] = headers
    return response


_RATE_LIMIT_HEADERS = {
    name: {"description": description, "schema": {"type": "integer"}}
    for name, description in (
        ("RateLimit-Limit", "Requests allowed per window for this API key"),
        ("RateLimit-Remaining", "Requests left in the current window"),
        ("RateLimit-Reset", "Seconds until the window resets"),
    )
}


def _document_cross_cutting_responses(method: str, operation: dict[str, Any]) -> None:
    """What the middleware and authentication can answer on any API operation: 401, 429 and
    the rate-limit headers everywhere; for a body, 400, 413 and 415; for a POST, the
    `Idempotency-Key` header and its 409s.
    """
    responses: dict[str, Any] = operation.setdefault("responses", {})
    extra = {
        "401": _error(
            "Missing or invalid API key", {"WWW-Authenticate": {"schema": {"type": "string"}}}
        ),
        "429": _error(
            "Rate limit exceeded (see `Retry-After` and `details.retryAfter`)",
            {"Retry-After": {"schema": {"type": "integer"}}, **_RATE_LIMIT_HEADERS},
        ),
    }
    extra["503"] = _error(
        "The database cannot be reached, or this process is at its limit of requests in "
        "progress: retry after `Retry-After` seconds",
        {"Retry-After": {"schema": {"type": "integer"}}},
    )
    if method in ("post", "put", "patch"):
        extra["400"] = _error("Invalid request (see `details.field` and `details.reason`)")
        extra["413"] = _error("Body over 1 MiB")
        extra["415"] = _error("Body is not `application/json`")
    if method == "post":
        extra["409"] = _error(
            "A state rule blocks the change, or the `Idempotency-Key` was used for another "
            "request or is still in progress (see `details.reason`)"
        )
        operation.setdefault("parameters", []).append(
            {
                "name": "Idempotency-Key",
                "in": "header",
                "required": False,
                "description": "Repeat the POST safely: within 24 h the same key (per API key) "
                "replays the first response; with another body it is 409.",
                "schema": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 255,
                    "pattern": "^[!-~]([ -~]*[!-~])?$",  # printable ASCII, as idempotency.py
                },
            }
        )
    if operation.get("parameters"):
        extra.setdefault("400", _error("Invalid parameter (see `details.field`)"))
    for status, response in extra.items():
        responses.setdefault(status, response)
    for status, response in responses.items():
        if status.startswith("2"):
            response.setdefault("headers", {}).update(_RATE_LIMIT_HEADERS)
