"""What a query means: its tree (`syntax.py`) as one SQLAlchemy condition on a workspace's
work items (`wi`) and an order for `ordering.parse_sort`.

Every value is a bound parameter and every lookup (a sprint by name, a user by email, a
parent by key, the items under an ancestor, the text index) is a subquery of the one
statement that lists the items, so a query costs no round trip of its own. Each field is a
`FieldCompiler` found by its name in any case; `RESOLVERS` may add fields by name (custom
fields, `fields.<key>`), which until then are unknown fields.
"""

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, get_args

import orjson
from sqlalchemy import (
    ColumnElement,
    and_,
    bindparam,
    false,
    func,
    literal,
    literal_column,
    not_,
    or_,
    select,
    text,
)
from sqlalchemy.sql import column as sql_column
from sqlalchemy.sql import table as sql_table
from sqlalchemy.sql.elements import Grouping, TextClause

from sprintboard.customfields.service import Definition
from sprintboard.models import (
    FieldValue,
    Project,
    Sprint,
    WorkItem,
    WorkItemRelation,
    stored_timestamp,
)
from sprintboard.queries.syntax import Clause, Node, Not, Query, QueryError, Value
from sprintboard.workflows.service import Category
from sprintboard.workitems.fields import Priority
from sprintboard.workitems.ordering import SORT_FIELDS
from sprintboard.workitems.reads import MAX_DEPTH

ITEMS = WorkItem.__table__
WI = ITEMS.alias("wi")
"""The items a list reads (`reads.list_items` names them `wi`)."""
PRIORITIES: tuple[str, ...] = get_args(Priority)
CATEGORIES: tuple[str, ...] = get_args(Category)
_COMPARISONS = ("=", "!=", ">", ">=", "<", "<=")
_EQUALITIES = ("=", "!=", "in", "not in")
_EMPTINESS = ("is empty", "is not empty")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_RELATIVE = re.compile(r"^([+-])(\d{1,6})([dwhm])$", re.IGNORECASE)
_NUMBER = re.compile(r"^\d+(\.\d+)?$")
_UNITS = {"d": "days", "w": "weeks", "h": "hours", "m": "minutes"}
_WORDS = re.compile(r"\w+\*?")
FUNCTIONS = ("currentUser", "openSprints", "closedSprints", "futureSprints", "now", "startOfDay")
_SEARCH_ROWS = sql_table("work_item_search_rows", sql_column("doc"), sql_column("work_item_id"))
_SEARCH_FTS = sql_table("work_item_search", sql_column("rowid"))
_SEARCH_PG = sql_table("work_item_search", sql_column("work_item_id"), sql_column("document"))


@dataclass
class Context:
    """Who runs a query, where, when, and on which database."""

    workspace_id: str
    user_id: str
    now: datetime
    sqlite: bool
    custom: Mapping[str, Definition] = field(default_factory=dict)
    """The workspace's custom fields by key: what `fields.<key>` may name."""
    _names: int = field(default=0)

    def param(self, value: Any) -> Any:
        """A bound parameter of its own name (text fragments share the statement's names)."""
        self._names += 1
        return bindparam(f"qv{self._names}", value)

    def name(self) -> str:
        self._names += 1
        return f"qv{self._names}"


Condition = Any
"""A SQLAlchemy boolean expression (a `ColumnElement`, or a `text()` fragment with bound
parameters where SQLAlchemy has no construct: JSON arrays, the text index)."""


@dataclass(frozen=True)
class Compiled:
    condition: Condition | None
    sort: str | None
    """`ORDER BY` as `sort=` says it (`-priority,dueDate`), or None for the default."""


FieldCompiler = Callable[[Clause, Context], Condition]
"""Makes the condition of a clause on one field."""
RESOLVERS: list[Callable[[str], FieldCompiler | None]] = []
"""Fields found by name beyond the built-in ones (custom fields register here): each takes
the name as written and answers its compiler, or None."""


def compile_query(query: Query, context: Context) -> Compiled:
    condition = None if query.where is None else _node(query.where, context)
    return Compiled(condition, _sort(query, context))


def _node(node: Node, context: Context) -> Condition:
    if isinstance(node, Clause):
        return _field_compiler(node.field, node.field_position, context)(node, context)
    if isinstance(node, Not):
        return not_(_node(node.operand, context))
    operands = [_node(operand, context) for operand in node.operands]
    return and_(*operands) if type(node).__name__ == "And" else or_(*operands)


def suggestion(name: str, names: Sequence[str]) -> str:
    """ "; did you mean 'x'?" for the nearest of `names` (any case), or nothing."""
    lowered = {n.lower(): n for n in names}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return f"; did you mean {lowered[close[0]]!r}?" if close else ""


def _field_compiler(name: str, position: int, context: Context) -> FieldCompiler:
    found = _FIELDS.get(name.lower())
    if found is not None:
        return found
    if name.lower().startswith("fields."):
        return _custom(_definition(name, position, context))
    for resolve in RESOLVERS:
        if (resolved := resolve(name)) is not None:
            return resolved
    raise QueryError(position, f"unknown field {name!r}{suggestion(name, FIELD_NAMES)}")


def _sort(query: Query, context: Context) -> str | None:
    if not query.order:
        return None
    parts: list[str] = []
    seen: set[str] = set()
    by_lower = {name.lower(): name for name in SORT_FIELDS}
    for key in query.order:
        name = by_lower.get(key.field.lower())
        if name is None and key.field.lower().startswith("fields."):
            name = f"fields.{_definition(key.field, key.position, context).key}"
        if name is None:
            raise QueryError(
                key.position,
                f"ORDER BY cannot sort by {key.field!r}{suggestion(key.field, SORT_FIELDS)}"
                f" (it sorts by {', '.join(SORT_FIELDS)})",
            )
        if name in seen:
            raise QueryError(key.position, f"ORDER BY names {name!r} twice")
        seen.add(name)
        parts.append(f"-{name}" if key.descending else name)
    return ",".join(parts)


# --- values ---------------------------------------------------------------------------------


def _refuse(clause: Clause, allowed: Sequence[str]) -> None:
    if clause.operator not in allowed:
        shown = ", ".join(a.upper() if a[0].isalpha() else a for a in allowed)
        raise QueryError(
            clause.operator_position,
            f"{clause.field} does not take {clause.operator.upper()} (it takes {shown})",
        )


def _no_function(value: Value, field_name: str) -> str:
    if value.kind == "function":
        raise QueryError(value.position, f"{field_name} takes no function ({value.text}())")
    return value.text


def _function_name(value: Value) -> str:
    canonical = {name.lower(): name for name in FUNCTIONS}.get(value.text.lower())
    if canonical is None:
        raise QueryError(
            value.position, f"unknown function '{value.text}()'{suggestion(value.text, FUNCTIONS)}"
        )
    return canonical


def _one_of(value: Value, field_name: str, values: Sequence[str]) -> str:
    word = _no_function(value, field_name).upper()
    if word not in values:
        raise QueryError(
            value.position,
            f"{field_name} has no value {value.text!r}{suggestion(value.text, values)}"
            f" (one of {', '.join(values)})",
        )
    return word


def _either(clause: Clause, positive: ColumnElement[bool], empty: ColumnElement[bool]) -> Any:
    """`=`/`IN` as `positive`; `!=`/`NOT IN` as its negation among the non-empty."""
    if clause.operator in ("!=", "not in"):
        return and_(not_(positive), not_(empty))
    return positive


def _moment(value: Value, context: Context) -> tuple[datetime, bool]:
    """A date-time value, and whether it names a whole day (`YYYY-MM-DD`, `startOfDay()`)."""
    if value.kind == "function":
        name = _function_name(value)
        if name == "now" and value.argument is None:
            return context.now, False
        if name == "startOfDay":
            start = datetime.combine(context.now.date(), time(), UTC)
            if value.argument is not None:
                start += _offset(value.argument)
            return start, True
        raise QueryError(value.position, f"{value.text}() is not a date")
    word = value.text
    if _DAY.match(word):
        try:
            return datetime.combine(date.fromisoformat(word), time(), UTC), True
        except ValueError:
            raise QueryError(value.position, f"{word!r} is not a date") from None
    if _RELATIVE.match(word):
        return context.now + _offset(value), False
    raise QueryError(
        value.position,
        f"{word!r} is not a date (YYYY-MM-DD, -7d, +2w, -12h, -30m, now() or startOfDay())",
    )


def _offset(value: Value) -> timedelta:
    found = _RELATIVE.match(value.text) if value.kind != "function" else None
    if found is None:
        raise QueryError(value.position, f"{value.text!r} is not an offset (-7d, +2w, -12h, -30m)")
    sign, amount, unit = found.groups()
    delta = timedelta(**{_UNITS[unit.lower()]: int(amount)})
    return -delta if sign == "-" else delta


def _number(value: Value, field_name: str) -> float:
    word = _no_function(value, field_name)
    if not _NUMBER.match(word):
        raise QueryError(value.position, f"{field_name} takes a number, not {word!r}")
    return float(word)


def _flag(value: Value, field_name: str) -> bool:
    word = _no_function(value, field_name).lower()
    if word not in ("true", "false"):
        raise QueryError(value.position, f"{field_name} is true or false, not {value.text!r}")
    return word == "true"


# --- fields ---------------------------------------------------------------------------------


def _names_field(column: str, values: Sequence[str] = (), *, nullable: bool = False) -> Any:
    """A field of names (`status`, `type`...): matched in capitals, as lists filter them."""

    def compile_(clause: Clause, context: Context) -> Condition:
        col = WI.c[column]
        _refuse(clause, (*_EQUALITIES, *(_EMPTINESS if nullable else ())))
        if clause.operator in _EMPTINESS:
            return col.is_(None) if clause.operator == "is empty" else col.is_not(None)
        names = [
            _one_of(v, clause.field, values) if values else _no_function(v, clause.field).upper()
            for v in clause.values
        ]
        matched = col.in_([context.param(n) for n in names])
        return not_(matched) if clause.operator in ("!=", "not in") else matched

    return compile_


def _priority(clause: Clause, context: Context) -> Condition:
    """Priorities are ordered LOW < MEDIUM < HIGH < URGENT: a comparison is the set of them
    it takes (the column stays usable by an index)."""
    _refuse(clause, (*_COMPARISONS, "in", "not in"))
    if clause.operator in ("=", "!=", "in", "not in"):
        return _names_field("priority", PRIORITIES)(clause, context)
    rank = PRIORITIES.index(_one_of(clause.values[0], "priority", PRIORITIES))
    chosen = [
        p
        for i, p in enumerate(PRIORITIES)
        if {">": i > rank, ">=": i >= rank, "<": i < rank, "<=": i <= rank}[clause.operator]
    ]
    return WI.c.priority.in_([context.param(p) for p in chosen]) if chosen else false()


def _key(clause: Clause, context: Context) -> Condition:
    _refuse(clause, _EQUALITIES)
    keys = [_no_function(v, "key").upper() for v in clause.values]
    matched = WI.c.key.in_([context.param(k) for k in keys])
    return not_(matched) if clause.operator in ("!=", "not in") else matched


def _project(clause: Clause, context: Context) -> Condition:
    _refuse(clause, _EQUALITIES)
    projects = Project.__table__
    refs = [_no_function(v, "project") for v in clause.values]
    chosen = select(projects.c.id).where(
        projects.c.workspace_id == context.param(context.workspace_id),
        or_(
            projects.c.id.in_([context.param(r) for r in refs]),
            projects.c.key.in_([context.param(r.upper()) for r in refs]),
        ),
    )
    matched = WI.c.project_id.in_(chosen)
    return not_(matched) if clause.operator in ("!=", "not in") else matched


def _like(column: str) -> FieldCompiler:
    """`~` and `!~`: case-insensitive, anywhere, as `search=` matches."""

    def compile_(clause: Clause, context: Context) -> Condition:
        _refuse(clause, ("~", "!~", *(_EMPTINESS if column == "description" else ())))
        col = WI.c[column]
        if clause.operator in _EMPTINESS:
            return col.is_(None) if clause.operator == "is empty" else col.is_not(None)
        word = _no_function(clause.values[0], clause.field)
        escaped = word.replace("!", "!!").replace("%", "!%").replace("_", "!_")
        lower = func.unicode_lower if context.sqlite else func.lower
        matched = lower(col).like(lower(context.param(f"%{escaped}%")), escape="!")
        return not_(matched) if clause.operator == "!~" else matched

    return compile_


def _text(clause: Clause, context: Context) -> Condition:
    """Full-text: every word as a whole word (a trailing `*`: as a prefix), in the title,
    the description or a comment, through the database's own text index."""
    _refuse(clause, ("~", "!~"))
    value = clause.values[0]
    words = _WORDS.findall(_no_function(value, "text").lower())
    if not words:
        raise QueryError(value.position, "text ~ needs at least one word")
    if context.sqlite:
        match = " ".join(
            f'"{w[:-1]}"*' if w.endswith("*") else f'"{w}"' for w in words
        )  # (each word quoted: FTS5's own operators in it are words)
        docs = select(_SEARCH_FTS.c.rowid).where(
            _fragment(
                text(f"work_item_search MATCH :{(name := context.name())}").bindparams(
                    bindparam(name, match)
                )
            )
        )
        ids = select(_SEARCH_ROWS.c.work_item_id).where(_SEARCH_ROWS.c.doc.in_(docs))
    else:
        tsquery = " & ".join(f"'{w[:-1]}':*" if w.endswith("*") else f"'{w}'" for w in words)
        ids = select(_SEARCH_PG.c.work_item_id).where(
            _SEARCH_PG.c.document.op("@@")(
                func.to_tsquery(literal_column("'simple'"), context.param(tsquery))
            )
        )
    matched = WI.c.id.in_(ids)
    return not_(matched) if clause.operator == "!~" else matched


def _contains(column: str, values: Sequence[Any], context: Context) -> Condition:
    """The JSON array `column` holds any of `values`."""
    name = context.name()
    if context.sqlite:
        sql = f"EXISTS (SELECT 1 FROM json_each(wi.{column}) WHERE value IN :{name})"
        return _fragment(text(sql).bindparams(bindparam(name, list(values), expanding=True)))
    # One `@>` a value, as `GET /tasks?labels=` writes it: each is a lookup in the column's
    # GIN index (`jsonb_path_ops`), which `jsonb_exists_any` (`?|`) cannot use.
    held = {f"{name}_{i}": orjson.dumps([value]).decode() for i, value in enumerate(values)}
    sql = " OR ".join(f"wi.{column} @> CAST(:{n} AS jsonb)" for n in held) or "false"
    return _fragment(text(f"({sql})").bindparams(*(bindparam(n, v) for n, v in held.items())))


def _fragment(sql: TextClause) -> Condition:
    """A `text()` condition as an expression that AND, OR and NOT take."""
    return Grouping(sql)


def _is_empty_array(column: str, context: Context) -> Condition:
    length = func.json_array_length if context.sqlite else func.jsonb_array_length
    return length(WI.c[column]) == 0


def _label(clause: Clause, context: Context) -> Condition:
    """`label = x` holds x, `IN` any of them, `!=`/`NOT IN` none (and some label)."""
    _refuse(clause, (*_EQUALITIES, *_EMPTINESS))
    if clause.operator in _EMPTINESS:
        empty = _is_empty_array("labels", context)
        return empty if clause.operator == "is empty" else not_(empty)
    labels = [_no_function(v, "label") for v in clause.values]
    return _either(clause, _contains("labels", labels, context), _is_empty_array("labels", context))


def _assignee(clause: Clause, context: Context) -> Condition:
    """An email (any case), a `$id` or `currentUser()`."""
    _refuse(clause, (*_EQUALITIES, *_EMPTINESS))
    empty = _is_empty_array("assignee_ids", context)
    if clause.operator in _EMPTINESS:
        return empty if clause.operator == "is empty" else not_(empty)
    ids: list[str] = []
    emails: list[str] = []
    for value in clause.values:
        if value.kind == "function":
            if _function_name(value) != "currentUser":
                raise QueryError(
                    value.position, f"assignee takes currentUser(), not {value.text}()"
                )
            ids.append(context.user_id)
        elif "@" in value.text:
            emails.append(value.text.lower())
        else:
            ids.append(value.text)
    matched = _contains("assignee_ids", ids, context) if ids else false()
    if emails:
        matched = or_(matched, _contains_email("assignee_ids", emails, context))
    return _either(clause, matched, empty)


def _contains_email(column: str, emails: Sequence[str], context: Context) -> Condition:
    """The JSON array `column` holds the `$id` of a user with one of these emails."""
    name = context.name()
    users = f"SELECT id FROM users WHERE email_normalized IN :{name}"
    if context.sqlite:
        sql = f"EXISTS (SELECT 1 FROM json_each(wi.{column}) WHERE value IN ({users}))"
    else:
        sql = f"jsonb_exists_any(wi.{column}, ARRAY({users}))"
    return _fragment(text(sql).bindparams(bindparam(name, list(emails), expanding=True)))


def _sprint(clause: Clause, context: Context) -> Condition:
    """A `$id`, a name (any case) or `openSprints()` (ACTIVE or PLANNED), `futureSprints()`
    (PLANNED), `closedSprints()` (COMPLETED); `sprint IS EMPTY` is the backlog."""
    _refuse(clause, (*_EQUALITIES, *_EMPTINESS))
    col = WI.c.sprint_id
    if clause.operator in _EMPTINESS:
        return col.is_(None) if clause.operator == "is empty" else col.is_not(None)
    sprints = Sprint.__table__
    statuses: list[str] = []
    refs: list[str] = []
    for value in clause.values:
        if value.kind == "function":
            name = _function_name(value)
            chosen = {
                "openSprints": ["ACTIVE", "PLANNED"],
                "futureSprints": ["PLANNED"],
                "closedSprints": ["COMPLETED"],
            }.get(name)
            if chosen is None:
                raise QueryError(value.position, f"sprint takes no {name}()")
            statuses += chosen
        else:
            refs.append(value.text)
    lower = func.unicode_lower if context.sqlite else func.lower
    wanted = []
    if statuses:
        wanted.append(sprints.c.status.in_([context.param(s) for s in statuses]))
    if refs:
        wanted.append(sprints.c.id.in_([context.param(r) for r in refs]))
        wanted.append(lower(sprints.c.name).in_([context.param(r.lower()) for r in refs]))
    chosen_sprints = select(sprints.c.id).where(
        sprints.c.workspace_id == context.param(context.workspace_id), or_(*wanted)
    )
    matched = col.in_(chosen_sprints)
    return not_(matched) if clause.operator in ("!=", "not in") else matched


def _items_by_ref(refs: Sequence[Value], field_name: str, context: Context) -> Any:
    """The `$id`s of the workspace's items named by `$id` or key (any case)."""
    names = [_no_function(v, field_name) for v in refs]
    return select(ITEMS.c.id).where(
        ITEMS.c.workspace_id == context.param(context.workspace_id),
        or_(
            ITEMS.c.id.in_([context.param(n) for n in names]),
            ITEMS.c.key.in_([context.param(n.upper()) for n in names]),
        ),
    )


def _parent(clause: Clause, context: Context) -> Condition:
    _refuse(clause, (*_EQUALITIES, *_EMPTINESS))
    col = WI.c.parent_id
    if clause.operator in _EMPTINESS:
        return col.is_(None) if clause.operator == "is empty" else col.is_not(None)
    matched = col.in_(_items_by_ref(clause.values, "parent", context))
    return not_(matched) if clause.operator in ("!=", "not in") else matched


def _ancestor(clause: Clause, context: Context) -> Condition:
    """Every item under the named ones, at any depth: walked down the parent index one level
    at a time (as `ancestorId=` is), bounded by the deepest a tree may be."""
    _refuse(clause, _EQUALITIES)
    start = select(ITEMS.c.id, literal(1).label("level")).where(
        ITEMS.c.parent_id.in_(_items_by_ref(clause.values, "ancestor", context))
    )
    below = start.cte(context.name(), recursive=True, nesting=True)
    child = ITEMS.alias(context.name())
    below = below.union_all(
        select(child.c.id, below.c.level + 1).where(
            child.c.parent_id == below.c.id, below.c.level < MAX_DEPTH
        )
    )
    matched = WI.c.id.in_(select(below.c.id))
    return _either(clause, matched, WI.c.parent_id.is_(None))


def _compared(column: str, convert: Callable[[Value, Context], Any]) -> FieldCompiler:
    """A number or a day: every comparison, `IN`, and `IS [NOT] EMPTY`."""

    def compile_(clause: Clause, context: Context) -> Condition:
        _refuse(clause, (*_COMPARISONS, "in", "not in", *_EMPTINESS))
        col = WI.c[column]
        if clause.operator in _EMPTINESS:
            return col.is_(None) if clause.operator == "is empty" else col.is_not(None)
        values = [context.param(convert(v, context)) for v in clause.values]
        if clause.operator == "in":
            return col.in_(values)
        if clause.operator == "not in":
            return col.not_in(values)
        return _compare(col, clause.operator, values[0])

    return compile_


def _compare(col: Any, operator: str, value: Any) -> Condition:
    result: Condition = {
        "=": lambda: col == value,
        "!=": lambda: col != value,
        ">": lambda: col > value,
        ">=": lambda: col >= value,
        "<": lambda: col < value,
        "<=": lambda: col <= value,
    }[operator]()
    return result


def _amount(value: Value, _: Context) -> float:
    return _number(value, "a number field")


def _day(value: Value, context: Context) -> Any:
    moment, _whole_day = _moment(value, context)
    day = moment.date()
    return day.isoformat() if context.sqlite else day


def _stamp(column: str) -> FieldCompiler:
    """`createdAt`, `updatedAt`: a moment, or a whole day (`= 2026-01-05` is that day;
    `> 2026-01-05` after it)."""

    def compile_(clause: Clause, context: Context) -> Condition:
        _refuse(clause, (*_COMPARISONS, "in", "not in"))
        col = WI.c[column]
        alternatives = []
        operator = {"in": "=", "not in": "!="}.get(clause.operator, clause.operator)
        for value in clause.values:
            moment, whole_day = _moment(value, context)
            alternatives.append(_stamp_compare(col, operator, moment, whole_day, context))
        return and_(*alternatives) if operator == "!=" else or_(*alternatives)

    return compile_


def _stamp_compare(
    col: Any, operator: str, moment: datetime, whole_day: bool, context: Context
) -> Condition:
    def at(when: datetime) -> Any:
        return context.param(_stamp_param(when, context))

    if not whole_day:
        return _compare(col, operator, at(moment))
    start, end = at(moment), at(moment + timedelta(days=1))
    if operator == "=":
        return and_(col >= start, col < end)
    if operator == "!=":
        return or_(col < start, col >= end)
    return _compare(
        col,
        {">": ">=", "<=": "<"}.get(operator, operator),
        end if operator in (">", "<=") else start,
    )


def _stamp_param(moment: datetime, context: Context) -> Any:
    return stored_timestamp(moment, sqlite=context.sqlite)


def _flagged(clause: Clause, context: Context) -> Condition:
    _refuse(clause, ("=", "!="))
    wanted = _flag(clause.values[0], "flagged") == (clause.operator == "=")
    # The column itself, not `= :param`: the flagged items' partial index (migration 0020)
    # is chosen for `flagged`, a predicate a bound parameter cannot be proven to imply.
    return WI.c.flagged if wanted else not_(WI.c.flagged)


def _blocked(clause: Clause, context: Context) -> Condition:
    """An item that blocks it is not DONE (as an item's `blocked` says)."""
    _refuse(clause, ("=", "!="))
    relations = WorkItemRelation.__table__
    blocker = ITEMS.alias(context.name())
    blocked_ids = (
        select(relations.c.target_id)
        .join(blocker, blocker.c.id == relations.c.source_id)
        .where(
            relations.c.workspace_id == context.param(context.workspace_id),
            relations.c.type == "blocks",
            blocker.c.status_category != "DONE",
        )
    )
    matched = WI.c.id.in_(blocked_ids)
    wanted = _flag(clause.values[0], "blocked") == (clause.operator == "=")
    return matched if wanted else not_(matched)


_FIELD_LIST: dict[str, FieldCompiler] = {
    "key": _key,
    "project": _project,
    "title": _like("title"),
    "description": _like("description"),
    "text": _text,
    "status": _names_field("status"),
    "statusCategory": _names_field("status_category", CATEGORIES),
    "type": _names_field("type"),
    "priority": _priority,
    "assignee": _assignee,
    "label": _label,
    "labels": _label,
    "sprint": _sprint,
    "parent": _parent,
    "ancestor": _ancestor,
    "storyPoints": _compared("story_points", _amount),
    "estimatedHours": _compared("estimated_hours", _amount),
    "dueDate": _compared("due_date", _day),
    "createdAt": _stamp("created_at"),
    "updatedAt": _stamp("updated_at"),
    "flagged": _flagged,
    "blocked": _blocked,
}
FIELD_NAMES = tuple(_FIELD_LIST)
_FIELDS = {name.lower(): compiler for name, compiler in _FIELD_LIST.items()}


# --- custom fields (`fields.<key>`, contract §17) ----------------------------------------------

VALUES = FieldValue.__table__
_ORDERED = ("number", "date", "select")
"""Types whose values compare (`<`, `>=`...): a select by its options' order."""


def _definition(name: str, position: int, context: Context) -> Definition:
    """The custom field `fields.<key>` names (its key exactly, else in any case)."""
    key = name.split(".", 1)[1]
    found = context.custom.get(key)
    if found is None:
        by_lower = {k.lower(): d for k, d in context.custom.items()}
        found = by_lower.get(key.lower())
    if found is None:
        known = [f"fields.{k}" for k in context.custom]
        raise QueryError(position, f"unknown field {name!r}{suggestion(name, known)}")
    return found


def _custom_value(definition: Definition, value: Value, context: Context) -> tuple[str, Any]:
    """The typed column a value is compared in (`work_item_field_values`) and the value as
    that column holds it: a select's option as its rank in the field's options."""
    name = f"fields.{definition.key}"
    kind = definition.type
    if kind == "user":
        if value.kind == "function" and _function_name(value) == "currentUser":
            return "text_value", context.user_id
        return "text_value", _no_function(value, name)
    word = _no_function(value, name)
    if kind == "number":
        try:
            number = float(word)
        except ValueError:
            raise QueryError(value.position, f"{name} takes a number, not {word!r}") from None
        return "number_value", number
    if kind == "checkbox":
        return "text_value", "true" if _flag(value, name) else "false"
    if kind == "date":
        if not _DAY.match(word):
            raise QueryError(value.position, f"{name} takes a date (YYYY-MM-DD), not {word!r}")
        return "text_value", word
    if kind in ("select", "multiselect"):
        options = {option.lower(): option for option in definition.options}
        option = options.get(word.lower())
        if option is None:
            raise QueryError(
                value.position,
                f"{name} has no option {word!r}{suggestion(word, definition.options)}"
                f" (one of {', '.join(definition.options)})",
            )
        return "text_value", option
    return "text_value", word[:255]


def _custom(definition: Definition) -> FieldCompiler:
    """A custom field's clause, answered from its typed rows through their index
    (`field_id` then value): `=`/`IN` hold any of the values (a multiselect holds any of
    them), `!=`/`NOT IN` hold none and are set, `IS EMPTY` is unset; numbers, dates and
    selects (by option order) compare; text and url take `~`."""
    operators: tuple[str, ...] = (*_EQUALITIES, *_EMPTINESS)
    if definition.type in _ORDERED:
        operators += (">", ">=", "<", "<=")
    if definition.type in ("text", "url"):
        operators += ("~", "!~")

    def compile_(clause: Clause, context: Context) -> Condition:
        _refuse(clause, operators)
        field_id = context.param(definition.id)
        held = select(VALUES.c.item_id).where(VALUES.c.field_id == field_id)
        is_set = WI.c.id.in_(held)
        if clause.operator in _EMPTINESS:
            return not_(is_set) if clause.operator == "is empty" else is_set
        if clause.operator in ("~", "!~"):
            word = _no_function(clause.values[0], clause.field)
            escaped = word.replace("!", "!!").replace("%", "!%").replace("_", "!_")
            lower = func.unicode_lower if context.sqlite else func.lower
            like = lower(VALUES.c.text_value).like(lower(context.param(f"%{escaped}%")), escape="!")
            matched = WI.c.id.in_(held.where(like))
            return and_(not_(matched), is_set) if clause.operator == "!~" else matched
        typed = [_custom_value(definition, value, context) for value in clause.values]
        column = typed[0][0]
        values = [value for _, value in typed]
        if clause.operator in ("=", "!=", "in", "not in"):
            wanted = VALUES.c[column].in_([context.param(v) for v in values])
            matched = WI.c.id.in_(held.where(wanted))
            return and_(not_(matched), is_set) if clause.operator in ("!=", "not in") else matched
        value = values[0]
        if definition.type == "select":
            column, value = "number_value", float(definition.options.index(value))
        compared = _compare(VALUES.c[column], clause.operator, context.param(value))
        return WI.c.id.in_(held.where(compared))

    return compile_
