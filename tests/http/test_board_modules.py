"""The board's modules stay small and their imports run one way (STYLE.md, "The board").

Every `web/**/*.js` file's static imports are read (no build step, so the browser loads the
same graph): a cycle fails and is named, as is an import of a file that is not there, a
module over `MAX_LINES`, a module the entry point never reaches, and an `index.html` whose
`modulepreload` list is not the modules `app.js` imports.
"""

import re
from pathlib import Path, PurePosixPath

from sprintboard.pages import WEB_ROOT

MAX_LINES = 250
ENTRY = "app.js"
STATIC = "/static/"

_IMPORT = re.compile(
    r"""^[ \t]*(?:import|export)\s+(?:[\w$*{}\s,]+?\s+from\s*)?["']([^"']+)["']""",
    re.MULTILINE,
)
"""A static `import ... from "x"`, `import "x"` or `export ... from "x"` at a line's start
(over several lines too); `import("x")` is dynamic and not part of the graph."""
_PRELOAD = re.compile(r"""<link\s+rel="modulepreload"\s+href="([^"]+)">""")
_ENTRY_SCRIPT = re.compile(r"""<script\s+type="module"\s+src="([^"]+)"></script>""")

Graph = dict[str, list[str]]


def _resolve(importer: str, specifier: str) -> str | None:
    """The module `specifier` names, relative to the web root; None for a bare name."""
    if specifier.startswith(STATIC):
        target = PurePosixPath(specifier[len(STATIC) :])
    elif specifier.startswith(("./", "../")):
        target = PurePosixPath(importer).parent / specifier
    else:
        return None
    parts: list[str] = []
    for part in target.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def module_graph(root: Path) -> tuple[Graph, list[str]]:
    """Each module's imports (relative to `root`), and the imports that resolve to nothing."""
    modules = {path.relative_to(root).as_posix(): path for path in sorted(root.rglob("*.js"))}
    graph: Graph = {}
    broken: list[str] = []
    for name, path in modules.items():
        graph[name] = []
        for specifier in _IMPORT.findall(path.read_text(encoding="utf-8")):
            target = _resolve(name, specifier)
            if target is None or target not in modules:
                broken.append(f"{name} imports {specifier!r}")
            else:
                graph[name].append(target)
    return graph, broken


def find_cycle(graph: Graph) -> list[str] | None:
    """One import cycle as `[a, b, ..., a]`, or None."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(module: str) -> list[str] | None:
        path.append(module)
        on_path.add(module)
        for target in graph.get(module, []):
            if target in on_path:
                return [*path[path.index(target) :], target]
            if target not in done:
                found = visit(target)
                if found:
                    return found
        path.pop()
        on_path.discard(module)
        done.add(module)
        return None

    for module in sorted(graph):
        if module not in done:
            found = visit(module)
            if found:
                return found
    return None


def reachable(graph: Graph, start: str) -> set[str]:
    seen = {start}
    todo = [start]
    while todo:
        for target in graph[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def test_the_checker_names_a_cycle_and_a_missing_import(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "app.js": 'import { a } from "./views/a/index.js";\n',
            "views/a/index.js": 'import {\n  b,\n} from "../../lib/b.js";\nexport const a = 1;\n',
            "lib/b.js": 'export { a } from "/static/views/a/index.js";\nimport "./gone.js";\n',
            "lib/c.js": 'const later = import("./b.js");\nimport x from "left-pad";\n',
        },
    )
    graph, broken = module_graph(tmp_path)
    assert find_cycle(graph) == ["views/a/index.js", "lib/b.js", "views/a/index.js"]
    assert broken == ["lib/b.js imports './gone.js'", "lib/c.js imports 'left-pad'"]
    assert reachable(graph, "app.js") == {"app.js", "views/a/index.js", "lib/b.js"}
    del graph["lib/b.js"][0]
    assert find_cycle(graph) is None


def test_the_board_has_no_import_cycle_and_no_missing_import() -> None:
    graph, broken = module_graph(WEB_ROOT)
    assert ENTRY in graph
    assert not broken, f"imports of no file: {broken}"
    cycle = find_cycle(graph)
    assert cycle is None, f"import cycle: {' -> '.join(cycle)}"


def test_every_module_is_small() -> None:
    long = {
        path.relative_to(WEB_ROOT).as_posix(): lines
        for path in WEB_ROOT.rglob("*.js")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them into components): {long}"


def test_the_entry_reaches_every_module_and_the_page_preloads_them() -> None:
    graph, _ = module_graph(WEB_ROOT)
    imported = reachable(graph, ENTRY)
    pages = {  # (the other pages' own entries: the invitation and reset forms)
        src.removeprefix(STATIC)
        for page in WEB_ROOT.glob("*.html")
        if page.name != "index.html"
        for src in _ENTRY_SCRIPT.findall(page.read_text(encoding="utf-8"))
    }
    reached = imported.union(*(reachable(graph, entry) for entry in pages))
    unused = sorted(set(graph) - reached)
    assert not unused, f"modules nothing imports: {unused}"
    html = (WEB_ROOT / "index.html").read_text(encoding="utf-8")
    assert _ENTRY_SCRIPT.findall(html) == [STATIC + ENTRY]
    preloaded = _PRELOAD.findall(html)
    assert len(preloaded) == len(set(preloaded))
    assert sorted(preloaded) == sorted(STATIC + name for name in imported - {ENTRY})


def test_no_module_imports_the_shell() -> None:
    graph, _ = module_graph(WEB_ROOT)
    importers = [module for module, targets in graph.items() if ENTRY in targets]
    assert not importers, f"the shell hands a view what it needs; imported by {importers}"
