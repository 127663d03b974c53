from typing import Annotated

import orjson
from fastapi import Depends, Path, Request
from starlette.responses import Response

from sprintboard.access import (
    Permission,
    access_comment,
    access_list_scope,
    access_relation,
    access_work_item,
    access_workspace_id,
)
from sprintboard.concurrency import IfMatch, check_if_match, stamp_version
from sprintboard.errors import PayloadTooLarge
from sprintboard.events.service import EVENT_TYPES
from sprintboard.http.deps import CallerDep, PageDep, SessionDep, api_router
from sprintboard.integrations import links
from sprintboard.integrations.schemas import TaskWithLinks
from sprintboard.queries import service as queries
from sprintboard.responses import deleted, many, one
from sprintboard.schemas import DeletedRecord, Many, ManyCapped, One, error_responses
from sprintboard.sql import raw
from sprintboard.workitems import bulk_create, fields, reads, relations, service
from sprintboard.workitems.schemas import (
    BulkCreate,
    BulkUpdate,
    CommentCreate,
    CommentRead,
    CommentUpdate,
    ItemQuery,
    RelationCreate,
    RelationRead,
    TaskCreate,
    TaskQuery,
    TaskRead,
    TaskUpdate,
    TimeLogCreate,
    TimeLogRead,
    WorkItemMeta,
)

router = api_router(tags=["work items"])

TaskRef = Annotated[str, Path(alias="taskId", description="The work item's `$id` or its key.")]
MAX_BULK = 500


@router.get(
    "/meta/work-items",
    response_model=One[WorkItemMeta],
    responses=error_responses(401),
    summary="Describe work items' fields",
)
async def describe_work_items(session: SessionDep, caller: CallerDep) -> Response:
    """Every field a work item has (the server's registry: kinds, values, filters, sorts),
    and the event types of the stream: what the board builds its forms and filters from."""
    return one({**fields.descriptors(), "eventTypes": list(EVENT_TYPES)})


@router.get(
    "/tasks",
    response_model=ManyCapped[TaskRead],
    responses=error_responses(400, 404),
    summary="List work items",
)
async def list_tasks(query: TaskQuery, session: SessionDep, caller: CallerDep) -> Response:
    """Ordered by `sort` (default `position`), then `position`, then `$id`; each item embeds
    `project` and `assignees`. `nextCursor` continues the list in that order: items created
    or deleted meanwhile never make a page repeat or skip one.

    Rules the document cannot state: `workspaceId` or `projectId` is required (with both, the
    project is looked for in that workspace); `sort` names each field once; `priority` and
    `statusCategory` (comma-separated) take only their listed values, `status` only names;
    a `cursor` continues only the list with the same filters and order that made it;
    `q` (a query, see the README's "Queries") must run (400 `invalid_query` with
    `details.position` otherwise), and its `ORDER BY` with `sort` is 400 on `sort`.

    Custom fields: `fields.<key>=v1,v2` (any parameter named `fields.` and a field's key)
    keeps the items whose field holds any of the values (a multiselect any of its options;
    `none`: unset); a key the workspace lacks is 400 `unknown_field` naming the parameter,
    a value the field cannot hold `invalid_value`. `sort=fields.<key>` sorts by one (a
    select by its options' order, a multiselect by its first option), unset values last;
    a key the workspace lacks is 400 `invalid_value` on `sort`.
    """
    workspace_id, _ = access_list_scope(
        session, caller, workspace_id=query.workspace_id, project_id=query.project_id
    )
    custom, definitions = reads.custom_query(
        raw(session), workspace_id, query.custom_filters(), query.sort, query.q
    )
    condition, order = queries.list_order(
        session,
        caller=caller,
        workspace_id=workspace_id,
        text=query.q,
        sort=query.sort,
        custom=definitions,
    )
    filters = reads.TaskFilters(
        project_id=query.project_id,
        sprint_id=query.sprint_id,
        matches=query.matches(),
        assignee_id=query.assignee_id,
        labels=query.listed("labels"),
        search=query.search or None,
        parent=query.parent_id or None,
        ancestor=query.ancestor_id or None,
        custom=custom,
        condition=condition,
    )
    page = reads.list_items(
        session,
        workspace_id=workspace_id,
        filters=filters,
        limit=query.limit,
        offset=query.offset,
        order=order,
        after=query.resume_after(),
    )
    next_cursor = query.next_keyset_cursor(page.last_keys)
    return many(page.items, page.total, next_cursor=next_cursor, total_capped=page.total_capped)


@router.post(
    "/tasks",
    status_code=201,
    response_model=One[TaskWithLinks],
    responses=error_responses(400, 403, 404),
    summary="Create a work item",
)
async def create_task(body: TaskCreate, session: SessionDep, caller: CallerDep) -> Response:
    """`name` (or `title`) becomes the `title`; the key is `<project key>-<n>`.

    Rules the document cannot state: `status` is one of the project's statuses; `fields`
    names only the workspace's custom fields (`GET /workspaces/{id}/fields`), each with a
    value of its type and no U+0000."""
    access = access_workspace_id(session, caller, body.workspace_id)
    access.require(Permission.WORK_ITEM_WRITE)
    record, tag = service.create_work_item(session, access=access, data=body)
    record["links"] = []  # (as every single-item answer shows them; a new item has none yet)
    return one(record, status=201, headers={"ETag": tag})


async def _limit_bulk_size(request: Request) -> None:
    """A bulk request over the limit is 413 before anything else is checked."""
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        return
    entries = body.get("tasks") if isinstance(body, dict) else None
    if isinstance(entries, list) and len(entries) > MAX_BULK:
        raise PayloadTooLarge(
            f"A bulk request takes at most {MAX_BULK} work items.", {"limit": MAX_BULK}
        )


@router.post(
    "/tasks/bulk-create",
    status_code=201,
    response_model=Many[TaskRead],
    responses=error_responses(400, 403, 404, 413),
    dependencies=[Depends(_limit_bulk_size)],
    summary="Create several work items at once",
)
async def bulk_create_tasks(body: BulkCreate, session: SessionDep, caller: CallerDep) -> Response:
    """Each entry as `POST /tasks` takes it, all of one workspace; all or nothing. Keys are
    consecutive per project in request order; the answer lists the items in that order.

    Rules the document cannot state: `tasks` name one workspace (else `mixed_workspaces`;
    an entry naming a workspace you cannot see is a missing project, `not_found`);
    `tasks[i].fields` names only the workspace's custom fields, each with a value of its type
    and no U+0000.
    """
    access = bulk_create.workspace_access(session, caller, body.tasks)
    access.require(Permission.WORK_ITEM_WRITE)
    created = bulk_create.bulk_create(session, access=access, entries=body.tasks)
    return many(created, len(created), status=201)


@router.post(
    "/tasks/bulk-update",
    response_model=Many[TaskRead],
    responses=error_responses(400, 403, 404, 413),
    dependencies=[Depends(_limit_bulk_size)],
    summary="Update several work items at once",
)
async def bulk_update_tasks(body: BulkUpdate, session: SessionDep, caller: CallerDep) -> Response:
    """Each entry names a work item by `$id` or `key` and takes any field PATCH takes; all
    of one workspace; applied all or nothing, in order (an error names its entry).

    Rules the document cannot state: `tasks` names each work item once; `tasks[i].fields`
    names only the workspace's custom fields, each with a value of its type and no U+0000.
    """
    refs = [entry.ref for entry in body.tasks]
    records, ids, access = reads.read_visible_items(session, caller, refs, moving_to=body.moving_to)
    access.require(Permission.WORK_ITEM_WRITE)
    updated = service.bulk_update(
        session, access=access, records=records, ids=ids, entries=body.tasks
    )
    return many(updated, len(updated))


@router.get(
    "/tasks/{taskId}",
    response_model=One[TaskWithLinks],
    responses=error_responses(404),
    summary="Get a work item by `$id` or key",
)
async def get_task(
    ref: TaskRef, session: SessionDep, caller: CallerDep, query: ItemQuery
) -> Response:
    """Adds `links`: the item's pull requests and commits (contract §20), as PATCH does."""
    item = reads.read_visible_item(session, caller, ref, workspace_id=query.workspace_id)
    record = {**item.record, "links": links.read_links(session, item.record["$id"])}
    return one(record, headers={"ETag": item.etag})


@router.patch(
    "/tasks/{taskId}",
    response_model=One[TaskWithLinks],
    responses=error_responses(400, 403, 404, 412),
    summary="Update a work item",
)
async def update_task(
    ref: TaskRef,
    body: TaskUpdate,
    session: SessionDep,
    caller: CallerDep,
    query: ItemQuery,
    if_match: IfMatch = None,
) -> Response:
    """Partial update; `null` clears an optional field. Notifies assignees and admins.

    Rules the document cannot state: `status` is one of the project's statuses, and one the
    project's transition rules let the item's status change to (else 409); `fields` names
    only the workspace's custom fields, each with a value of its type and no U+0000."""
    item = reads.read_visible_item(
        session,
        caller,
        ref,
        workspace_id=query.workspace_id,
        for_change=True,
        moving_to=body.moving_to,
    )
    item.access.require(Permission.WORK_ITEM_WRITE)
    check_if_match(if_match, item.record["$id"], item.version)
    record, tag = service.update_work_item(session, item=item, data=body)
    record["links"] = links.read_links(session, record["$id"])
    return one(record, headers={"ETag": tag})


@router.delete(
    "/tasks/{taskId}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404, 412),
    summary="Delete a work item with its comments and time logs",
)
async def delete_task(
    ref: TaskRef,
    session: SessionDep,
    caller: CallerDep,
    query: ItemQuery,
    if_match: IfMatch = None,
) -> Response:
    item, access = access_work_item(session, caller, ref, workspace_id=query.workspace_id)
    access.require(Permission.WORK_ITEM_WRITE)
    check_if_match(if_match, item.id, item.version)
    service.delete_work_item(session, access=access, item=item)
    return deleted(item.id)


@router.get(
    "/tasks/{taskId}/comments",
    response_model=Many[CommentRead],
    responses=error_responses(400, 404),
)
async def list_comments(
    ref: TaskRef, session: SessionDep, caller: CallerDep, page: PageDep
) -> Response:
    item, _ = access_work_item(session, caller, ref)
    comments, total, next_cursor = reads.read_comments(
        raw(session), item.id, page.window("comments", item.id)
    )
    return many(comments, total, next_cursor=next_cursor)


@router.post(
    "/tasks/{taskId}/comments",
    status_code=201,
    response_model=One[CommentRead],
    responses=error_responses(400, 403, 404),
)
async def add_comment(
    ref: TaskRef, body: CommentCreate, session: SessionDep, caller: CallerDep
) -> Response:
    item, access = access_work_item(session, caller, ref)
    access.require(Permission.WORK_ITEM_WRITE)
    comment = service.add_comment(session, access=access, item=item, body=body.body)
    return one(comment, status=201)


@router.patch(
    "/comments/{commentId}",
    response_model=One[CommentRead],
    responses=error_responses(400, 403, 404, 412),
)
async def update_comment(
    comment_id: Annotated[str, Path(alias="commentId")],
    body: CommentUpdate,
    session: SessionDep,
    caller: CallerDep,
    if_match: IfMatch = None,
) -> Response:
    """The comment's author only: anyone else gets 403 with `details.reason` `not_author`."""
    comment, access = access_comment(session, caller, comment_id)
    access.require(Permission.WORK_ITEM_WRITE)
    check_if_match(if_match, comment.id, stamp_version(comment.updated_at))
    return one(service.update_comment(session, access=access, comment=comment, body=body.body))


@router.delete(
    "/comments/{commentId}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404, 412),
)
async def delete_comment(
    comment_id: Annotated[str, Path(alias="commentId")],
    session: SessionDep,
    caller: CallerDep,
    if_match: IfMatch = None,
) -> Response:
    comment, access = access_comment(session, caller, comment_id)
    access.require(Permission.WORK_ITEM_WRITE)
    check_if_match(if_match, comment.id, stamp_version(comment.updated_at))
    service.delete_comment(session, access=access, comment=comment)
    return deleted(comment.id)


@router.get(
    "/tasks/{taskId}/time-logs",
    response_model=Many[TimeLogRead],
    responses=error_responses(400, 404),
)
async def list_time_logs(
    ref: TaskRef, session: SessionDep, caller: CallerDep, page: PageDep
) -> Response:
    item, _ = access_work_item(session, caller, ref)
    logs, total, next_cursor = reads.read_time_logs(
        raw(session), item.id, page.window("time-logs", item.id)
    )
    return many(logs, total, next_cursor=next_cursor)


@router.post(
    "/tasks/{taskId}/time-logs",
    status_code=201,
    response_model=One[TimeLogRead],
    responses=error_responses(400, 403, 404),
)
async def add_time_log(
    ref: TaskRef, body: TimeLogCreate, session: SessionDep, caller: CallerDep
) -> Response:
    item, access = access_work_item(session, caller, ref)
    access.require(Permission.WORK_ITEM_WRITE)
    log = service.add_time_log(
        session, access=access, item=item, hours=body.hours, day=body.date, note=body.note
    )
    return one(log, status=201)


@router.get(
    "/tasks/{taskId}/relations",
    response_model=Many[RelationRead],
    responses=error_responses(404),
    summary="List a work item's relations, as it sees them",
)
async def list_relations(ref: TaskRef, session: SessionDep, caller: CallerDep) -> Response:
    item, _ = access_work_item(session, caller, ref)
    found = reads.read_relations(raw(session), item.id)
    return many(found, len(found))


@router.post(
    "/tasks/{taskId}/relations",
    status_code=201,
    response_model=One[RelationRead],
    responses=error_responses(400, 403, 404, 409),
    summary="Relate a work item to another",
)
async def create_relation(
    ref: TaskRef, body: RelationCreate, session: SessionDep, caller: CallerDep
) -> Response:
    """`A blocked_by B` is `B blocks A`: a relation that exists in either spelling is 409
    `duplicate_relation`. The target must be of the same workspace."""
    item, access = access_work_item(session, caller, ref)
    access.require(Permission.WORK_ITEM_WRITE)
    relation = relations.create_relation(
        session, access=access, item=item, type=body.type, target_ref=body.target_id
    )
    return one(relation, status=201)


@router.delete(
    "/relations/{relationId}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404),
    summary="Delete a relation",
)
async def delete_relation(
    relation_id: Annotated[str, Path(alias="relationId")], session: SessionDep, caller: CallerDep
) -> Response:
    relation, access = access_relation(session, caller, relation_id)
    access.require(Permission.WORK_ITEM_WRITE)
    relations.delete_relation(session, access=access, relation=relation)
    return deleted(relation.id)
