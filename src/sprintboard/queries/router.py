from typing import Annotated

from fastapi import Path
from starlette.responses import Response

from sprintboard.access import access_view, access_workspace_id
from sprintboard.http.deps import CallerDep, PageDep, SessionDep, api_router
from sprintboard.queries import views
from sprintboard.queries.schemas import (
    ViewCreate,
    ViewItemsQuery,
    ViewRead,
    ViewUpdate,
    view_json,
)
from sprintboard.responses import deleted, many, one
from sprintboard.schemas import DeletedRecord, Many, One, error_responses
from sprintboard.workitems.schemas import TaskRead

router = api_router(tags=["views"])

WorkspaceId = Annotated[str, Path(alias="id", description="The workspace's `$id`.")]
ViewId = Annotated[str, Path(alias="viewId", description="The view's `$id`.")]


@router.post(
    "/workspaces/{id}/views",
    status_code=201,
    response_model=One[ViewRead],
    responses=error_responses(400, 403, 404, 409),
    summary="Save a query as a view",
)
async def create_view(
    workspace_id: WorkspaceId, body: ViewCreate, session: SessionDep, caller: CallerDep
) -> Response:
    """Any member may save a private view; sharing one needs a MEMBER or ADMIN (a VIEWER:
    403 `viewer`). Rules the document cannot state: `query` must run (400 `invalid_query`
    on `query`); at most 100 views per user per workspace (409 `view_limit`)."""
    access = access_workspace_id(session, caller, workspace_id, adding=True)
    view = views.create_view(session, access=access, data=body)
    return one(view_json(view), status=201)


@router.get(
    "/workspaces/{id}/views",
    response_model=Many[ViewRead],
    responses=error_responses(400, 404),
    summary="List the shared views and your own",
)
async def list_views(
    workspace_id: WorkspaceId, session: SessionDep, caller: CallerDep, page: PageDep
) -> Response:
    """Oldest first: every shared view of the workspace and the caller's private ones."""
    access = access_workspace_id(session, caller, workspace_id)
    found = views.list_views(
        session, access=access, window=page.window("views", workspace_id, caller.user_id)
    )
    return many([view_json(v) for v in found.items], found.total, next_cursor=found.next_cursor)


@router.get(
    "/views/{viewId}",
    response_model=One[ViewRead],
    responses=error_responses(404),
    summary="Read a view",
)
async def get_view(view_id: ViewId, session: SessionDep, caller: CallerDep) -> Response:
    """A private view is found by its owner only (404 to everyone else)."""
    view, _ = access_view(session, caller, view_id)
    return one(view_json(view))


@router.patch(
    "/views/{viewId}",
    response_model=One[ViewRead],
    responses=error_responses(400, 403, 404),
    summary="Change a view",
)
async def update_view(
    view_id: ViewId, body: ViewUpdate, session: SessionDep, caller: CallerDep
) -> Response:
    """By its owner, or (a shared view) a workspace ADMIN: others 403 `not_owner`; a VIEWER
    does not share (403 `viewer`). Rules the document cannot state: a new `query` must run
    (400 `invalid_query` on `query`); `name`, `layout` and `shared` may be left out but not
    null."""
    view, access = access_view(session, caller, view_id, lock=True)
    view = views.update_view(session, access=access, view=view, data=body)
    return one(view_json(view))


@router.delete(
    "/views/{viewId}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404),
    summary="Delete a view",
)
async def delete_view(view_id: ViewId, session: SessionDep, caller: CallerDep) -> Response:
    """By its owner, or (a shared view) a workspace ADMIN: others 403 `not_owner`."""
    view, access = access_view(session, caller, view_id, lock=True)
    views.delete_view(session, access=access, view=view)
    return deleted(view_id)


@router.get(
    "/views/{viewId}/items",
    response_model=Many[TaskRead],
    responses=error_responses(400, 404),
    summary="List a view's work items",
)
async def list_view_items(
    view_id: ViewId, query: ViewItemsQuery, session: SessionDep, caller: CallerDep
) -> Response:
    """The view's query run for the caller (`currentUser()` is the caller), in its
    `ORDER BY` (default `position`), with `limit` and cursors. A query that no longer runs
    (a custom field deleted since) is 400 `invalid_query` on `query`."""
    view, _ = access_view(session, caller, view_id)
    page = views.view_items(
        session,
        caller=caller,
        view=view,
        limit=query.limit,
        offset=query.offset,
        after=query.resume_after(),
    )
    next_cursor = query.next_keyset_cursor(page.last_keys)
    return many(page.items, page.total, next_cursor=next_cursor)
