"""`/docs`: Swagger UI over the OpenAPI document, with its scripts and styles served by the
service itself (`static/swagger/`, from the `swagger-ui-dist` npm package, Apache-2.0), so
the page works without reaching any other host: offline, behind a firewall, under a strict
content policy.
"""

from importlib.resources import files
from typing import Annotated

from fastapi import FastAPI, Path
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from starlette.responses import HTMLResponse, Response

from sprintboard.errors import NotFound

SWAGGER_UI_VERSION = "5.35.0"
ASSETS = "/docs/assets"
_MEDIA_TYPES = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
}


def add_docs_routes(app: FastAPI, openapi_url: str) -> None:
    redirect_url = "/docs/oauth2-redirect"

    @app.get("/docs", include_in_schema=False)
    async def show_docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
            oauth2_redirect_url=redirect_url,
        )

    @app.get(redirect_url, include_in_schema=False)
    async def show_docs_oauth2_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(f"{ASSETS}/{{name}}", include_in_schema=False)
    async def get_docs_asset(name: Annotated[str, Path()]) -> Response:
        """One of the files in `_MEDIA_TYPES` (nothing else in the package is served)."""
        media_type = _MEDIA_TYPES.get(name)
        if media_type is None:
            raise NotFound("Asset")
        content = files("sprintboard").joinpath("static", "swagger", name).read_bytes()
        return Response(content, media_type=media_type)
