"""The query language's syntax (contract §18): text in, a small tree of clauses out.

Lark parses it (LALR, so a query of 4,000 characters is one linear pass, and every token
keeps its offset for the error's `position`); this module turns Lark's tree into the
dataclasses below and Lark's errors into `QueryError`s that name the problem in words.
What a clause means (which fields exist, what they compare with) is `compiler.py`'s.
"""

from dataclasses import dataclass
from typing import Literal

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

MAX_LENGTH = 4_000
MAX_VALUES = 500
MAX_DEPTH = 32

GRAMMAR = r"""
start: [expr] [order]

?expr: or_expr
?or_expr: and_expr (_OR and_expr)*
?and_expr: factor (_AND factor)*
?factor: not_factor | _LPAR expr _RPAR | clause
not_factor: _NOT factor

clause: field OP value                        -> compare
      | field [NOT] IN _LPAR value (_COMMA value)* _RPAR  -> in_values
      | field [NOT] IN function               -> in_function
      | field IS [NOT] EMPTY                  -> empty

field: NAME
value: STRING | WORD | function
function: WORD _LPAR [value] _RPAR

order: ORDER BY sort_key (_COMMA sort_key)*
sort_key: NAME [DIRECTION]

OP: "!=" | ">=" | "<=" | "!~" | "=" | ">" | "<" | "~"
_OR.2: /or\b/i
_AND.2: /and\b/i
_NOT.2: /not\b/i
NOT.2: /not\b/i
IN.2: /in\b/i
IS.2: /is\b/i
EMPTY.2: /(empty|null)\b/i
ORDER.2: /order\b/i
BY.2: /by\b/i
DIRECTION.2: /(asc|desc)\b/i
NAME: /[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?/
WORD: /[A-Za-z0-9_+\-][A-Za-z0-9_+\-.@:]*/
STRING: /"(?:[^"\\]|\\.)*"/ | /'(?:[^'\\]|\\.)*'/
_LPAR: "("
_RPAR: ")"
_COMMA: ","

%ignore /\s+/
"""

_PARSER = Lark(GRAMMAR, parser="lalr", lexer="contextual", maybe_placeholders=True)

_EXPECTED = {
    "NAME": "a field",
    "WORD": "a value",
    "STRING": "a quoted string",
    "OP": "an operator (=, !=, >, >=, <, <=, ~, !~)",
    "IN": "IN",
    "IS": "IS",
    "NOT": "NOT",
    "_NOT": "NOT",
    "EMPTY": "EMPTY",
    "_LPAR": "'('",
    "_RPAR": "')'",
    "_COMMA": "','",
    "_AND": "AND",
    "_OR": "OR",
    "ORDER": "ORDER BY",
    "BY": "BY",
    "DIRECTION": "ASC or DESC",
    "$END": "the end of the query",
}


class QueryError(Exception):
    """A query that cannot run: where (0-based offset), what, and the contract's reason
    (`invalid_query`, or `too_long` for the limits)."""

    def __init__(self, position: int, message: str, reason: str = "invalid_query") -> None:
        super().__init__(message)
        self.position = position
        self.message = message
        self.reason = reason


@dataclass(frozen=True)
class Value:
    kind: Literal["string", "word", "function"]
    text: str
    """A string's content (unescaped), a word as written, a function's name."""
    position: int
    argument: "Value | None" = None
    """A function's argument (`startOfDay(-1d)`)."""


@dataclass(frozen=True)
class Clause:
    field: str
    field_position: int
    operator: str
    """`=`, `!=`, `>`, `>=`, `<`, `<=`, `~`, `!~`, `in`, `not in`, `is empty`, `is not empty`."""
    operator_position: int
    values: tuple[Value, ...] = ()
    """One for a comparison, each of an `IN` list, none for `IS [NOT] EMPTY`."""


@dataclass(frozen=True)
class Not:
    operand: "Node"


@dataclass(frozen=True)
class And:
    operands: tuple["Node", ...]


@dataclass(frozen=True)
class Or:
    operands: tuple["Node", ...]


Node = Clause | Not | And | Or


@dataclass(frozen=True)
class SortKey:
    field: str
    position: int
    descending: bool


@dataclass(frozen=True)
class Query:
    where: Node | None
    order: tuple[SortKey, ...]
    order_position: int | None
    """Where `ORDER BY` starts, if it is there."""


def parse(text: str) -> Query:
    """A query's tree; `QueryError` for one that does not parse or breaks a limit."""
    if len(text) > MAX_LENGTH:
        raise QueryError(MAX_LENGTH, f"a query has at most {MAX_LENGTH} characters", "too_long")
    _check_nesting(text)
    try:
        tree = _PARSER.parse(text)
    except UnexpectedInput as error:
        raise _syntax_error(text, error) from None
    where_tree, order_tree = tree.children
    where = None if where_tree is None else _node(where_tree)
    order: tuple[SortKey, ...] = ()
    order_position = None
    if isinstance(order_tree, Tree):
        order_position = _start(order_tree.children[0])
        order = tuple(_sort_key(key) for key in order_tree.children[2:])
    return Query(where, order, order_position)


def _check_nesting(text: str) -> None:
    """Parentheses and NOTs past `MAX_DEPTH` are refused before parsing (the tree they make
    would be walked as deep)."""
    depth = 0
    in_string: str | None = None
    escaped = False
    word_start = True
    i = 0
    while i < len(text):
        char = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == in_string:
                in_string = None
        elif char in "\"'":
            in_string = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif (
            word_start
            and text[i : i + 3].lower() == "not"
            and (i + 3 == len(text) or not (text[i + 3].isalnum() or text[i + 3] == "_"))
        ):
            depth += 1  # (a NOT nests as a parenthesis does; it never closes: an upper bound)
        if depth > MAX_DEPTH:
            raise QueryError(i, f"a query nests at most {MAX_DEPTH} levels deep", "too_long")
        word_start = not (char.isalnum() or char == "_")
        i += 1


def _syntax_error(text: str, error: UnexpectedInput) -> QueryError:
    if isinstance(error, UnexpectedEOF):
        return QueryError(len(text), f"the query ends too early; expected {_expected(error)}")
    if isinstance(error, UnexpectedCharacters):
        position = error.pos_in_stream or 0
        char = text[position]
        if char in "\"'":
            return QueryError(position, "a quoted string is not closed")
        return QueryError(position, f"unexpected {char!r}; expected {_expected(error)}")
    if isinstance(error, UnexpectedToken):
        token = error.token
        if token.type == "$END":
            return QueryError(len(text), f"the query ends too early; expected {_expected(error)}")
        position = token.start_pos if token.start_pos is not None else 0
        return QueryError(position, f"unexpected {str(token)!r}; expected {_expected(error)}")
    return QueryError(0, "the query does not parse")  # pragma: no cover (Lark's only kinds)


def _expected(error: UnexpectedInput) -> str:
    expected = getattr(error, "expected", None) or getattr(error, "allowed", None) or set()
    names = sorted({_EXPECTED.get(name, name) for name in expected})
    if not names:
        return "something else"
    return str(names[0]) if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _start(item: Tree[Token] | Token) -> int:
    if isinstance(item, Token):
        return item.start_pos or 0
    return min(_start(child) for child in item.children if child is not None)


def _node(tree: Tree[Token] | Token) -> Node:
    """The tree of a condition (iterative in depth only as far as `_check_nesting` lets it)."""
    assert isinstance(tree, Tree)
    kind = tree.data
    if kind == "or_expr":
        return Or(tuple(_node(child) for child in tree.children))
    if kind == "and_expr":
        return And(tuple(_node(child) for child in tree.children))
    if kind == "not_factor":
        return Not(_node(tree.children[0]))
    return _clause(tree)


def _field(tree: Tree[Token]) -> tuple[str, int]:
    (name,) = tree.children
    assert isinstance(name, Token)
    return str(name), name.start_pos or 0


def _clause(tree: Tree[Token]) -> Clause:
    children = tree.children
    field_tree = children[0]
    assert isinstance(field_tree, Tree)
    field, field_position = _field(field_tree)
    if tree.data == "compare":
        op, value = children[1], children[2]
        assert isinstance(op, Token)
        assert isinstance(value, Tree)
        return Clause(field, field_position, str(op), op.start_pos or 0, (_value(value),))
    if tree.data == "empty":
        is_, negated = children[1], children[2]
        assert isinstance(is_, Token)
        operator = "is not empty" if negated is not None else "is empty"
        return Clause(field, field_position, operator, is_.start_pos or 0)
    negated, in_ = children[1], children[2]
    assert isinstance(in_, Token)
    operator = "not in" if negated is not None else "in"
    position = (negated.start_pos if isinstance(negated, Token) else in_.start_pos) or 0
    if tree.data == "in_function":
        function = children[3]
        assert isinstance(function, Tree)
        return Clause(field, field_position, operator, position, (_function(function),))
    values = [child for child in children[3:] if isinstance(child, Tree)]
    if len(values) > MAX_VALUES:
        extra = _value(values[MAX_VALUES])
        raise QueryError(extra.position, f"IN takes at most {MAX_VALUES} values", "too_long")
    return Clause(field, field_position, operator, position, tuple(_value(v) for v in values))


def _value(tree: Tree[Token]) -> Value:
    (item,) = tree.children
    if isinstance(item, Tree):
        return _function(item)
    assert isinstance(item, Token)
    position = item.start_pos or 0
    if item.type == "STRING":
        return Value("string", _unquote(str(item)), position)
    return Value("word", str(item), position)


def _function(tree: Tree[Token]) -> Value:
    name, argument = tree.children
    assert isinstance(name, Token)
    return Value(
        "function",
        str(name),
        name.start_pos or 0,
        _value(argument) if isinstance(argument, Tree) else None,
    )


def _sort_key(tree: Tree[Token] | Token) -> SortKey:
    assert isinstance(tree, Tree)
    name, direction = tree.children
    assert isinstance(name, Token)
    return SortKey(
        str(name), name.start_pos or 0, direction is not None and str(direction).lower() == "desc"
    )


def _unquote(quoted: str) -> str:
    """A string's content: `\\"` is a quote, `\\\\` a backslash, any other escaped character
    itself."""
    body = quoted[1:-1]
    out: list[str] = []
    escaped = False
    for char in body:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    return "".join(out)
