"""`sprintboard import`, `export` and `mcp`: commands that talk to a running service.

They need no database and no server settings, only `SPRINTBOARD_URL` and
`SPRINTBOARD_API_KEY`, and go through the HTTP API, so every rule and permission applies.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sprintboard.client import ApiError, Client

COMMANDS = ("import", "export", "mcp")
ENVIRONMENT = "Set SPRINTBOARD_URL (the service's root, e.g. http://127.0.0.1:8000) and "
ENVIRONMENT += "SPRINTBOARD_API_KEY."


def add_commands(commands: Any) -> None:
    importer = commands.add_parser(
        "import",
        help="import work items from Jira's CSV, our CSV or our JSON export",
        description="Check every row of FILE, then (unless --dry-run) write it all into project "
        "P of workspace W through the API: sprints, items (with bulk create), parents, "
        "relations, comments and time logs. Nothing is written if any row is bad; each bad row "
        f"is named with its line number. {ENVIRONMENT}",
    )
    importer.add_argument("format", choices=("jira-csv", "csv", "json"), help="the file's format")
    importer.add_argument("file", type=Path, help="the file to import ('-' for standard input)")
    importer.add_argument("--workspace", required=True, metavar="W", help="the workspace's $id")
    importer.add_argument("--project", required=True, metavar="P", help="the project's $id")
    importer.add_argument(
        "--dry-run", action="store_true", help="check and summarise; write nothing"
    )
    importer.add_argument(
        "--map-status",
        action="append",
        default=[],
        metavar="JIRA=STATUS",
        help="jira-csv: map a Jira status to one of ours (repeatable), e.g. 'Ready=TODO'",
    )
    importer.add_argument(
        "--map-type",
        action="append",
        default=[],
        metavar="JIRA=TYPE",
        help="jira-csv: map a Jira issue type to one of ours (repeatable), e.g. 'Spike=TASK'",
    )

    exporter = commands.add_parser(
        "export",
        help="write a workspace (or one project) as JSON to standard output",
        description=f"Write workspace W (or only project P) as one JSON document that "
        f"`sprintboard import json` reads back. {ENVIRONMENT}",
    )
    exporter.add_argument("--workspace", required=True, metavar="W", help="the workspace's $id")
    exporter.add_argument("--project", metavar="P", help="only this project ($id)")

    mcp = commands.add_parser(
        "mcp",
        help="serve the Model Context Protocol over standard input and output",
        description=f"Serve MCP tools for agents over stdio, acting with the API key. "
        f"{ENVIRONMENT}",
    )
    mcp.add_argument("--read-only", action="store_true", help="offer only the tools that read")


def run(args: argparse.Namespace) -> int:
    try:
        client = Client.from_env()
    except ValueError as error:
        print(f"sprintboard: {error}. {ENVIRONMENT}", file=sys.stderr)
        return 2
    with client:
        try:
            if args.command == "import":
                return _import(client, args)
            if args.command == "export":
                document = _export(client, args)
                json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
                sys.stdout.write("\n")
                return 0
            from sprintboard.agents import serve_stdio

            serve_stdio(client, read_only=args.read_only)
            return 0
        except ApiError as error:
            print(f"sprintboard: {error}", file=sys.stderr)
            return 1


def _export(client: Client, args: argparse.Namespace) -> dict[str, Any]:
    from sprintboard.transfer.load import export

    return export(client, args.workspace, args.project)


def _import(client: Client, args: argparse.Namespace) -> int:
    from sprintboard.transfer import formats, load

    try:
        statuses = _pairs(args.map_status, "--map-status")
        types = _pairs(args.map_type, "--map-type")
        text = sys.stdin.read() if str(args.file) == "-" else args.file.read_text("utf-8-sig")
        fields = client.fields(args.workspace) if args.format == "jira-csv" else []
        plan = formats.read(args.format, text, statuses=statuses, types=types, fields=fields)
    except (OSError, ValueError) as error:
        print(f"sprintboard: {args.file}: {error}", file=sys.stderr)
        return 2
    for note in plan.notes:
        print(note, file=sys.stderr)
    problems = load.problems(client, plan, args.workspace)
    for problem in problems:
        print(f"{args.file}: {problem}", file=sys.stderr)
    if problems:
        rows = len({p.split(":")[0] for p in problems})
        print(f"sprintboard: {rows} bad rows; nothing was written", file=sys.stderr)
        return 1
    if args.dry_run:
        counts = load.summary(plan)
        print("dry run: would create " + _counts(counts) + "; nothing was written")
        return 0

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    counts = load.write(
        client, plan, workspace_id=args.workspace, project_id=args.project, progress=progress
    )
    print("imported " + _counts(counts))
    return 0


def _pairs(values: list[str], option: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        source, sep, target = value.rpartition("=")
        if not sep or not source.strip() or not target.strip():
            raise ValueError(f"{option} {value!r}: expected FROM=TO")
        pairs[source.strip()] = target.strip().upper()
    return pairs


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {name}" for name, n in counts.items())
