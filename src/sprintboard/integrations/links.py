"""What a forge's delivery does (contract §20): link the items it names, keep the links
current, and move items on an opened or merged pull request or a closing commit on the
default branch — each move an ordinary change by the integration's own user, under the
project's transition rules.

Exactly once per delivery id: the id is inserted first, in the transaction that makes the
delivery's changes, with `ON CONFLICT DO NOTHING`; a repeat, or a copy running at the same
time, inserts nothing (on PostgreSQL the copy waits for the first to commit, then finds its
row) and changes nothing. Out of order, too: a pull request once merged stays merged, and a
delivery older (by the forge's own `updated_at`) than one already applied changes neither
the link nor the item.
"""

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from sprintboard.errors import Conflict
from sprintboard.events import service as events
from sprintboard.integrations.forges import Commit, PullRequest, Push
from sprintboard.models import Integration, IntegrationDelivery, WorkItemLink, utcnow
from sprintboard.responses import iso
from sprintboard.sql import in_list, raw
from sprintboard.workflows.service import Workflow, read_workflows
from sprintboard.workitems import store


def first_time(session: Session, integration: Integration, delivery_id: str) -> bool:
    """Records the delivery id; `False` if it was recorded before (by a committed request,
    or one committing meanwhile, which this waits for)."""
    values = {
        "integration_id": integration.id,
        "delivery_id": delivery_id[:255],
        "received_at": utcnow(),
    }
    dialect = session.get_bind().dialect.name
    insert = postgresql_insert if dialect == "postgresql" else sqlite_insert
    statement = (
        insert(IntegrationDelivery)
        .values(**values)
        .on_conflict_do_nothing()
        .returning(IntegrationDelivery.delivery_id)
    )
    return session.execute(statement).first() is not None


@dataclass(frozen=True, slots=True)
class _Found:
    link: WorkItemLink | None
    record: dict[str, Any]


def apply_pull_request(session: Session, integration: Integration, pr: PullRequest) -> None:
    """Links each item the pull request names (one link per item and pull request), brings
    the links up to date, and moves the items: to `onOpen` when it opens, to `onMerge`
    (or the first DONE status) when it merges."""
    ref = _ref("pull_request", pr.url)
    items = _lock_items(session, integration.workspace_id, pr.keys())
    links = _links(session, [r["$id"] for r in items], ref)
    workflows = read_workflows(raw(session), {r["projectId"] for r in items})
    for record in items:
        link = links.get(record["$id"])
        if link is not None and link.state == "merged":
            continue  # (merged stays merged, whatever comes after)
        late = (
            link is not None
            and link.source_updated_at is not None
            and pr.updated_at is not None
            and pr.updated_at < link.source_updated_at
        )
        if late:
            continue
        shown = {
            "url": pr.url,
            "title": pr.title[:65_536],
            "number": pr.number,
            "state": pr.state,
            "source_updated_at": pr.updated_at or (link.source_updated_at if link else None),
        }
        if link is None:
            link = _new_link(integration, record, ref, "pull_request", author=pr.author, **shown)
            session.add(link)
            session.flush()
            _record(session, "link.created", integration, record, link)
        elif _changed(link, shown):
            link.updated_at = utcnow()
            session.flush()
            _record(session, "link.updated", integration, record, link)
        target = None
        if pr.merged or pr.state == "merged":
            target = _done_status(integration, workflows[record["projectId"]])
        elif pr.opened and integration.on_open is not None:
            target = integration.on_open
        if target is not None:
            _move(session, integration, record, workflows[record["projectId"]], target)


def apply_push(session: Session, integration: Integration, push: Push) -> None:
    """Links each item a pushed commit names (one link per item and commit); on the default
    branch, moves the items a commit closes (`Fixes WEB-1`) to `onMerge` (or the first DONE
    status)."""
    named = {c.sha: c.keys() for c in push.commits}
    items = _lock_items(session, integration.workspace_id, [k for ks in named.values() for k in ks])
    by_key = {r["key"]: r for r in items}
    workflows = read_workflows(raw(session), {r["projectId"] for r in items})
    for commit in push.commits:
        ref = _ref("commit", commit.sha)
        mentioned = [by_key[k] for k in named[commit.sha] if k in by_key]
        links = _links(session, [r["$id"] for r in mentioned], ref)
        for record in mentioned:
            if record["$id"] not in links:
                link = _commit_link(integration, record, ref, commit)
                session.add(link)
                session.flush()
                _record(session, "link.created", integration, record, link)
        if push.on_default_branch:
            for key in commit.closes():
                closed = by_key.get(key)
                if closed is not None:
                    workflow = workflows[closed["projectId"]]
                    target = _done_status(integration, workflow)
                    _move(session, integration, closed, workflow, target)


def _commit_link(
    integration: Integration, record: dict[str, Any], ref: str, commit: Commit
) -> WorkItemLink:
    return _new_link(
        integration,
        record,
        ref,
        "commit",
        url=commit.url,
        title=commit.message.split("\n", 1)[0][:65_536],
        sha=commit.sha[:64],
        author=commit.author,
    )


def _new_link(
    integration: Integration, record: dict[str, Any], ref: str, kind: str, **fields: Any
) -> WorkItemLink:
    return WorkItemLink(
        workspace_id=integration.workspace_id,
        work_item_id=record["$id"],
        integration_id=integration.id,
        provider=integration.provider,
        kind=kind,
        ref=ref,
        **fields,
    )


def _changed(link: WorkItemLink, shown: dict[str, Any]) -> bool:
    """Brings the link up to date; whether anything the API shows changed (the forge's
    `updated_at` alone does not make an event)."""
    changed = False
    for field, value in shown.items():
        if getattr(link, field) != value:
            setattr(link, field, value)
            changed = changed or field != "source_updated_at"
    return changed


def _ref(kind: str, name: str) -> str:
    return hashlib.sha256(f"{kind}\n{name}".encode()).hexdigest()


def _lock_items(session: Session, workspace_id: str, keys: Iterable[str]) -> list[dict[str, Any]]:
    """The workspace's items of these keys, locked for the change in `$id` order."""
    wanted = sorted(set(keys))
    if not wanted:
        return []
    placeholders, params = in_list("k", wanted)
    return store.lock_items(
        session,
        f"wi.workspace_id = :workspace_id AND wi.key IN {placeholders}",
        {"workspace_id": workspace_id, **params},
    )


def _links(session: Session, item_ids: list[str], ref: str) -> dict[str, WorkItemLink]:
    if not item_ids:
        return {}
    found = session.scalars(
        select(WorkItemLink).where(WorkItemLink.work_item_id.in_(item_ids), WorkItemLink.ref == ref)
    )
    return {link.work_item_id: link for link in found}


def _done_status(integration: Integration, workflow: Workflow) -> str | None:
    if integration.on_merge is not None:
        return integration.on_merge
    return next((s.name for s in workflow.statuses if s.category == "DONE"), None)


def _move(
    session: Session,
    integration: Integration,
    record: dict[str, Any],
    workflow: Workflow,
    target: str | None,
) -> None:
    """The item to `target`, as a PATCH by the integration's user would move it; nothing if
    it is there already, if its project has no such status, or if the project's transition
    rules refuse the move (the link stays made)."""
    if target is None or record["status"] == target:
        return
    category = next((s.category for s in workflow.statuses if s.name == target), None)
    if category is None:
        return
    try:
        workflow.check_transition(record["status"], target)
    except Conflict:
        return
    store.change_items(
        session,
        actor_id=integration.user_id,
        changes=[(record, {"status": target, "statusCategory": category})],
    )


def _record(
    session: Session,
    type: str,
    integration: Integration,
    record: dict[str, Any],
    link: WorkItemLink,
) -> None:
    """`link.created` / `link.updated`: in the item's activity (its subject) and the feed."""
    events.record(
        session,
        workspace_id=integration.workspace_id,
        type=type,
        subject_id=record["$id"],
        actor_id=integration.user_id,
        payload={
            "link": link_json(link),
            "workItem": {"$id": record["$id"], "key": record["key"]},
        },
    )


_SHOWN = {
    "$id": "id",
    **{
        name: name
        for name in ("provider", "kind", "url", "title", "number", "sha", "state", "author")
    },
}
"""A link as the API shows it: each field's column (`$createdAt`/`$updatedAt` besides)."""
_LINK_COLUMNS = ", ".join([*_SHOWN.values(), "created_at", "updated_at"])


def _shown(values: Any, created: str | None, updated: str | None) -> dict[str, Any]:
    return {
        **dict(zip(_SHOWN, values, strict=True)),
        "$createdAt": created,
        "$updatedAt": updated,
    }


def read_links(session: Session, work_item_id: str) -> list[dict[str, Any]]:
    """An item's links, oldest first, as `link_json` shows them: a plain statement (every
    `GET /tasks/{id}` asks, and through the ORM this read cost twice the rest of it)."""
    db = raw(session)
    rows = db.rows(
        f"SELECT {_LINK_COLUMNS} FROM work_item_links WHERE work_item_id = :id"
        " ORDER BY created_at, id",
        {"id": work_item_id},
    )
    stamp = db.codec.timestamp
    return [_shown(row[:-2], stamp(row[-2]), stamp(row[-1])) for row in rows]


def link_json(link: WorkItemLink) -> dict[str, Any]:
    values = [getattr(link, column) for column in _SHOWN.values()]
    return _shown(values, iso(link.created_at), iso(link.updated_at))
