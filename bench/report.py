"""The figures of a run, their ratio to the same run's ceiling, the targets of issues 7 and 19, and
the one table (plus `bench/results.json`) that shows them.
"""

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results.json"


@dataclass
class Row:
    database: str
    name: str
    rps: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    errors: int = 0
    value: float | None = None
    """The figure a target reads, when it is not rps: ms, MiB or a factor."""
    unit: str = ""
    ratio: str = ""
    """The figure against the ceiling: a share of its rps, or the time in ceiling requests."""
    target: str = ""
    verdict: str = ""
    note: str = ""


@dataclass(frozen=True)
class Target:
    text: str
    share_of_ceiling: float | None = None
    at_most: float | None = None


TARGETS: dict[str, Target] = {
    # Issue 15's, restated per database (`BY_DATABASE`).
    "GET /tasks/{id}": Target(">= 13% of ceiling", share_of_ceiling=0.13),
    "GET /tasks (list 50, embeds)": Target(">= 6% of ceiling", share_of_ceiling=0.06),
    "POST /tasks": Target(">= 5% of ceiling", share_of_ceiling=0.05),
    "bulk-update 500 (p50)": Target("p50 <= 30 ms", at_most=30),
    "complete sprint of 5,000": Target("<= 150 ms", at_most=150),
    "sprint report, 5,000 items (p50)": Target("p50 <= 200 ms", at_most=200),
    "velocity of 50 sprints (p50)": Target("p50 <= 50 ms", at_most=50),
    "list at 100k vs 1k": Target("<= 1.5x slower", at_most=1.5),
    "server peak RSS": Target("<= 150 MiB", at_most=150),
    # Issue 19: the board in a browser (bench/board.py).
    "board of 1,000: interactive (p50)": Target("<= 1000 ms", at_most=1000),
    "backlog of 10,000: interactive (p50)": Target("<= 1000 ms", at_most=1000),
    "board of 1,000: scroll": Target("no long task", at_most=0),
    "backlog of 10,000: scroll": Target("no long task", at_most=0),
    "drag: card placed (p50)": Target("p50 <= 50 ms", at_most=50),
    "drag: bulk update answered (p50)": Target("p50 <= 100 ms", at_most=100),
    "remote change shown (p95)": Target("p95 <= 1000 ms", at_most=1000),
}


BY_DATABASE: dict[tuple[str, str], Target] = {
    ("postgresql", "GET /tasks/{id}"): Target(">= 7% of ceiling", share_of_ceiling=0.07),
    ("postgresql", "GET /tasks (list 50, embeds)"): Target(
        ">= 4% of ceiling", share_of_ceiling=0.04
    ),
    ("postgresql", "POST /tasks"): Target(">= 2.5% of ceiling", share_of_ceiling=0.025),
    ("postgresql", "bulk-update 500 (p50)"): Target("p50 <= 50 ms", at_most=50),
    ("postgresql", "complete sprint of 5,000"): Target("<= 300 ms", at_most=300),
}
"""Targets that differ on a database from `TARGETS`' (which holds SQLite's)."""


def judge(row: Row, ceiling_rps: float | None) -> None:
    target = BY_DATABASE.get((row.database, row.name), TARGETS.get(row.name))
    if row.rps is not None and ceiling_rps:
        row.ratio = f"{row.rps / ceiling_rps:.1%}"
    elif row.unit == "ms" and row.value is not None and ceiling_rps:
        row.ratio = f"= {row.value / 1000 * ceiling_rps:,.0f} ceiling req"
    if target is None:
        return
    row.target = target.text
    if row.errors:
        row.verdict = "ERR"
    elif target.share_of_ceiling is not None and row.rps is not None and ceiling_rps:
        row.verdict = "PASS" if row.rps >= target.share_of_ceiling * ceiling_rps else "MISS"
    elif target.at_most is not None and row.value is not None:
        row.verdict = "PASS" if row.value <= target.at_most else "MISS"


def _fmt(value: float | None, digits: int = 1) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def table(rows: list[Row]) -> str:
    header = [
        "db", "scenario", "rps", "p50 ms", "p99 ms", "figure", "vs ceiling", "target", "",
    ]  # fmt: skip
    lines = [header]
    for row in rows:
        figure = f"{_fmt(row.value)} {row.unit}".strip() if row.value is not None else ""
        lines.append(
            [
                row.database,
                row.name + (f"  [{row.note}]" if row.note else ""),
                _fmt(row.rps, 0),
                _fmt(row.p50_ms, 2),
                _fmt(row.p99_ms, 2),
                figure,
                row.ratio,
                row.target,
                row.verdict + (f" ({row.errors} errors)" if row.errors else ""),
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    numeric = {2, 3, 4, 5}
    out = []
    for n, line in enumerate(lines):
        cells = [
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(line)
        ]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def write_json(rows: list[Row], meta: dict[str, Any]) -> None:
    RESULTS.write_text(
        json.dumps({"meta": meta, "rows": [asdict(row) for row in rows]}, indent=2) + "\n"
    )
