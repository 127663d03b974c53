"""`create_app(settings)`: the ASGI application."""

import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.openapi.utils import get_openapi
from sqlalchemy import text
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sprintboard.config import Settings
from sprintboard.db import Database
from sprintboard.errors import error_response, install_error_handlers
from sprintboard.identity.router import router as identity_router
from sprintboard.projects.router import router as projects_router
from sprintboard.responses import JSONResponse
from sprintboard.sprints.router import router as sprints_router
from sprintboard.workitems.router import router as workitems_router
from sprintboard.workspaces.router import router as workspaces_router

API_PREFIX = "/api/v1"
DOMAIN_ROUTERS: list[APIRouter] = [
    identity_router,
    workspaces_router,
    projects_router,
    workitems_router,
    sprints_router,
]

logger = logging.getLogger("sprintboard.http")

_SECURITY_HEADERS = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
]


class RequestContextMiddleware:
    """Gives every request an id (`X-Request-Id`), security headers, and turns any unexpected
    exception into the 500 envelope: no stack trace leaves the process, only the request id.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        header = [(b"x-request-id", request_id.encode()), *_SECURITY_HEADERS]
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = [*message.get("headers", []), *header]
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            logger.exception("unhandled error", extra={"request_id": request_id})
            if started:
                raise
            response = error_response(
                500, "INTERNAL", "An unexpected error occurred.", {"requestId": request_id}
            )
            await response(scope, receive, send_with_headers)


def create_app(settings: Settings | None = None, *, database: Database | None = None) -> FastAPI:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owns_database = database is None
        app.state.database = database or Database(settings.database_url)
        try:
            yield
        finally:
            if owns_database:
                app.state.database.dispose()

    app = FastAPI(
        title="sprintboard",
        version="1.0.0",
        summary="Workspaces, projects, sprints and work items over a JSON REST API.",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url="/docs",
        redoc_url=None,
        default_response_class=JSONResponse,
        lifespan=lifespan,
    )
    app.state.settings = settings
    if database is not None:
        app.state.database = database
    for router in DOMAIN_ROUTERS:
        app.include_router(router, prefix=API_PREFIX)
    _add_health_routes(app)
    install_error_handlers(app)
    app.add_middleware(RequestContextMiddleware)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _add_health_routes(app: FastAPI) -> None:
    @app.get("/healthz", tags=["health"], include_in_schema=True)
    async def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], responses={503: {"description": "Database unreachable"}})
    async def readyz() -> JSONResponse:
        """The database answers."""
        database: Database = app.state.database
        try:
            with database.engine.connect() as connection:
                connection.execute(text("SELECT 1"))
        except Exception:
            logger.warning("readiness check failed", exc_info=True)
            return JSONResponse({"status": "unavailable"}, status_code=503)
        return JSONResponse({"status": "ok"})


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, less its 422 responses: validation errors here are 400s."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title,
        version=app.version,
        summary=app.summary,
        routes=app.routes,
        servers=[{"url": "/"}],
    )
    for path_item in schema.get("paths", {}).values():
        for operation in path_item.values():
            operation.get("responses", {}).pop("422", None)
    for name in ("HTTPValidationError", "ValidationError"):
        schema.get("components", {}).get("schemas", {}).pop(name, None)
    app.openapi_schema = schema
    return schema
