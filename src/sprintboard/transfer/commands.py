"""`sprintboard import`, `export` and `mcp`: commands that talk to a running service.

They need no database and no server settings, only `SPRINTBOARD_URL` and
`SPRINTBOARD_API_KEY`, and go through the HTTP API, so every rule and permission applies.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

from sprintboard.client import ApiError, Client

COMMANDS = ("import", "export", "mcp")
KEPT_KEY_NAME = "Original key"
"""The name of the text field `--keep-key` creates when the workspace lacks it."""
ENVIRONMENT = "Set SPRINTBOARD_URL (the service's root, e.g. http://127.0.0.1:8000) and "
ENVIRONMENT += "SPRINTBOARD_API_KEY."


def add_commands(commands: Any) -> None:
    importer = commands.add_parser(
        "import",
        help="import work items from Jira's CSV, our CSV or our JSON export",
        description="Check every row of FILE, then (unless --dry-run) write it all into project "
        "P of workspace W through the API: sprints, items (with bulk create), parents, "
        "relations, comments and time logs. Nothing is written if any row is bad; each bad row "
        "is named with the line its record starts on, in the file's order, with the option "
        "that resolves it. Progress goes to standard error. "
        f"{ENVIRONMENT}",
        epilog="Jira CSV (Export > Export Excel CSV (all fields)): the Assignee is matched "
        "to a member by email, else by name when exactly one member has it; Reporter and "
        "Creator are not imported. A blank or missing Status gives the project's default "
        "status. A status or type matches the project's by name or label (any case, spaces "
        "ignored). Sprints are created in the order Jira made them, with Jira's names. "
        "Exit status: 0 imported (or dry run good), 1 bad rows or the API refused, "
        "2 a bad command line or an unreadable file.",
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
        help="jira-csv: map a Jira status to one of the project's (repeatable; wins over "
        "every match), e.g. 'Ready=TODO'",
    )
    importer.add_argument(
        "--map-type",
        action="append",
        default=[],
        metavar="JIRA=TYPE",
        help="jira-csv: map a Jira issue type to one of the workspace's (repeatable; wins "
        "over every match), e.g. 'Spike=TASK'",
    )
    importer.add_argument(
        "--map-assignee",
        action="append",
        default=[],
        metavar="JIRA=EMAIL",
        help="jira-csv: the member a Jira assignee is (repeatable; decided before matching "
        "by email and name), e.g. 'Ada L.=ada@example.com'",
    )
    importer.add_argument(
        "--unknown-assignees",
        choices=("refuse", "skip"),
        default="refuse",
        help="jira-csv: an assignee matching no member makes the row bad (refuse, the "
        "default) or is left out, the item imported unassigned and counted (skip)",
    )
    importer.add_argument(
        "--missing-links",
        choices=("refuse", "drop"),
        default="refuse",
        help="a parent or linked issue not in the file makes the row bad (refuse, the "
        "default) or the link is left out and counted (drop)",
    )
    importer.add_argument(
        "--create-missing",
        action="store_true",
        help="jira-csv: add each status the project lacks (its category from Jira's Status "
        "Category column; 'Ready for QA' becomes READY_FOR_QA, labelled 'Ready for QA') and "
        "each issue type the workspace lacks (as a custom type)",
    )
    importer.add_argument(
        "--key-map",
        type=Path,
        metavar="FILE",
        help="write a CSV 'original,new' of every imported item's key to FILE",
    )
    importer.add_argument(
        "--keep-key",
        metavar="FIELD_KEY",
        help="store each item's original key in the workspace's custom text field "
        f"FIELD_KEY (created, named '{KEPT_KEY_NAME}', when the workspace lacks it)",
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
    from sprintboard.transfer import formats, jira, load

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        choices = jira.Choices(
            statuses=_pairs(args.map_status, "--map-status"),
            types=_pairs(args.map_type, "--map-type"),
            assignees=_pairs(args.map_assignee, "--map-assignee", upper=False),
            skip_unknown_assignees=args.unknown_assignees == "skip",
            create_missing=args.create_missing,
        )
        text = sys.stdin.read() if str(args.file) == "-" else args.file.read_text("utf-8-sig")
        fields = client.fields(args.workspace) if args.format == "jira-csv" else []
        plan = formats.read(args.format, text, fields=fields)
        say(f"{args.file}: {len(plan.rows)} rows read")
        dropped = plan.drop_missing_links() if args.missing_links == "drop" else 0
        matched = jira.Matched()
        if args.format == "jira-csv":
            records = jira.Records.read(client, args.workspace, args.project)
            matched = jira.match(plan, records, choices)
        new_field = args.keep_key is not None and jira.keep_keys(
            client, plan, workspace_id=args.workspace, field_key=args.keep_key
        )
    except (OSError, ValueError) as error:
        print(f"sprintboard: {args.file}: {error}", file=sys.stderr)
        return 2
    for note in [*plan.notes, *matched.notes]:
        say(note)
    problems = load.problems(client, plan, args.workspace)
    for problem in problems:
        say(f"{args.file}: {problem}")
    if problems:
        rows = len({p.split(":")[0] for p in problems})
        say(f"sprintboard: {rows} bad rows; nothing was written")
        return 1
    new: dict[str, int] = {}
    if args.create_missing:
        new = {"statuses": len(matched.new_statuses), "types": len(matched.new_types)}
    if args.keep_key is not None:
        new["fields"] = int(new_field)
    left_out = ""
    if args.unknown_assignees == "skip":
        left_out += f"; {matched.lost_assignees} rows without their unknown assignee"
    if args.missing_links == "drop":
        left_out += f"; {dropped} links to issues outside the file left out"
    if args.dry_run:
        counts = {**new, **load.summary(plan)}
        print(f"dry run: would create {_counts(counts)}{left_out}; nothing was written")
        return 0
    jira.create_missing(
        client, matched, workspace_id=args.workspace, project_id=args.project, progress=say
    )
    if new_field:
        jira.create_kept_key_field(
            client, workspace_id=args.workspace, field_key=args.keep_key, name=KEPT_KEY_NAME
        )
        say(f"field {args.keep_key} ({KEPT_KEY_NAME!r}, text) created")
    keys: dict[str, str] = {}
    counts = load.write(
        client, plan, workspace_id=args.workspace, project_id=args.project, progress=say, keys=keys
    )
    if args.key_map is not None:
        try:
            _write_key_map(args.key_map, keys)
        except OSError as error:
            say(f"sprintboard: {args.key_map}: {error.strerror or error} (the import is done)")
            return 1
        say(f"key map: {len(keys)} keys written to {args.key_map}")
    # (What was made before the rows adds to what they made: a --keep-key field, say.)
    made = {name: new.get(name, 0) + counts.get(name, 0) for name in {**new, **counts}}
    print(f"imported {_counts(made)}{left_out}")
    return 0


def _write_key_map(path: Path, keys: dict[str, str]) -> None:
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(("original", "new"))
        writer.writerows(keys.items())


def _pairs(values: list[str], option: str, *, upper: bool = True) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        source, sep, target = value.rpartition("=")
        if not sep or not source.strip() or not target.strip():
            raise ValueError(f"{option} {value!r}: expected FROM=TO")
        pairs[source.strip()] = target.strip().upper() if upper else target.strip()
    return pairs


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {name}" for name, n in counts.items())
