"""The history of every claim: which torch releases each holds for, read from committed records.

``scripts/history_run.py`` runs every CPU-runnable claim snippet (``snippets/<page>/claim_*.py``)
under the newest patch of each torch minor from 2.5 on, with the triton that wheel pins, and
writes one record per release, ``locks/history/torch-<version>.json``: the date, Python, torch and
triton of the run and, per claim, the file's sha256, status and printed lines (the rows of the
lock records). This module reads them for the site hook (the "What changed when" page and the
``since(...)`` token) and the tests. Standard library only.

A claim's *outcome* under one release is its verdict and what it printed: ``passed`` with its
lines, ``fails: <first line of the error>``, or no outcome (the release could not install, or the
record has no row). Runs of releases with the same outcome form *spans*; the claim *holds* where
it passed. A claim file edited since a release's run is ``changed`` there: its row still shows
what that run found, marked "changed since its history run".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import snippet_records as records

HISTORY_DIR = records.REPO_ROOT / "locks" / "history"
PINS = records.SNIPPETS_DIR / "compatibility" / "pins.json"
FIRST_MINOR = (2, 5)
HISTORY_SCHEMA = 1
RECORD_STATUSES = ("ran", "not-installable")


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version.split("+")[0])[:3])


def minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def releases(pins: dict | None = None) -> list[dict]:
    """The newest patch of every torch minor from 2.5 on, from the pins table's data, with the
    triton requirement of its Linux x86_64 wheel."""
    pins = pins or json.loads(PINS.read_text(encoding="utf-8"))
    newest: dict[str, dict] = {}
    for row in pins["torch"]:
        if version_tuple(row["version"])[:2] < FIRST_MINOR or not row.get("x86_64"):
            continue
        key = minor(row["version"])
        if key not in newest or version_tuple(row["version"]) > version_tuple(
            newest[key]["version"]
        ):
            newest[key] = row
    return [
        {
            "torch": row["version"],
            "triton_requirement": (row["x86_64"]["triton"] or {}).get("requirement", "triton"),
            "requires_python": row.get("requires_python"),
            "wheel": row["x86_64"]["wheel"],
        }
        for row in sorted(newest.values(), key=lambda r: version_tuple(r["version"]))
    ]


def record_path(torch: str) -> Path:
    return HISTORY_DIR / f"torch-{torch}.json"


def record_head(release: dict) -> dict:
    return {
        "schema": HISTORY_SCHEMA,
        "torch": release["torch"],
        "triton_requirement": release["triton_requirement"],
        "runner": "scripts/history_run.py",
    }


def is_claim(path: str) -> bool:
    return Path(path).name.startswith("claim_")


def cpu_claims() -> list[str]:
    """Every claim snippet whose [tool.snippet] table lets it run on a CPU."""
    return [
        p
        for p in records.list_snippets()
        if is_claim(p) and records.read_snippet_needs(p).runs_on_cpu
    ]


def claims_to_run(record: dict, claims: list[str]) -> list[str]:
    """The claims a release's record lacks or holds for an older version of the file."""
    rows = {r["path"]: r for r in record.get("snippets", [])}
    return [
        p
        for p in claims
        if p not in rows
        or rows[p]["sha256"] != records.snippet_sha256(records.read_snippet_needs(p))
    ]


def validate_history_record(record: dict, where: str) -> None:
    for key in ("schema", "torch", "triton_requirement", "status", "date", "versions", "snippets"):
        if key not in record:
            raise ValueError(f"{where}: no '{key}'")
    if record["status"] not in RECORD_STATUSES:
        raise ValueError(f"{where}: status {record['status']!r} is not one of {RECORD_STATUSES}")
    if record["status"] == "not-installable" and not record.get("reason"):
        raise ValueError(f"{where}: a release that could not install says why ('reason')")
    if record["status"] == "ran":
        for key in ("torch", "triton", "python"):
            if key not in record["versions"]:
                raise ValueError(f"{where}: versions has no '{key}'")
        if record["versions"]["torch"].split("+")[0] != record["torch"]:
            raise ValueError(f"{where}: ran torch {record['versions']['torch']}")
    for row in record["snippets"]:
        for key in ("path", "sha256", "status", "stdout", "date"):
            if key not in row:
                raise ValueError(f"{where}: {row.get('path')}: no '{key}'")
        if row["status"] not in records.RUN_STATUSES:
            raise ValueError(f"{where}: {row['path']}: bad status {row['status']!r}")
        if row["status"] == "failed" and not row.get("reason"):
            raise ValueError(f"{where}: {row['path']}: failed without a reason")


def load_history_record(path: Path) -> dict:
    record = json.loads(path.read_text(encoding="utf-8"))
    validate_history_record(record, str(path))
    return record


def write_history_record(path: Path, record: dict) -> None:
    validate_history_record(record, str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


# ----------------------------------------------------------------------------- reading the history


def error_line(reason: str) -> str:
    """The error a failed run ended with: the last line of its reason that names an exception
    (``AssertionError: ...``), else the reason's first line."""
    lines = [line.strip() for line in reason.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Iteration)\b", line):
            return line
    return lines[0] if lines else "no output"


@dataclass(frozen=True)
class Outcome:
    """What one claim did under one release: ``passed`` and its lines, or ``failed``, the lines
    it printed before and the error it ended with, or ``skipped``."""

    verdict: str
    lines: tuple[str, ...] = ()
    error: str = ""

    @property
    def holds(self) -> bool:
        return self.verdict == "passed"


@dataclass(frozen=True)
class Cell:
    release: dict
    record: dict | None  # None: no record of this release yet
    row: dict | None  # None: the release did not install, or the record has no row for it
    outcome: Outcome | None
    changed: bool  # the claim file (sha256) differs from the one this run ran


@dataclass(frozen=True)
class ClaimHistory:
    path: str
    sha256: str
    cells: tuple[Cell, ...]

    @property
    def outcomes(self) -> list[Outcome]:
        """The distinct outcomes, in the order of the first release showing each."""
        return list(dict.fromkeys(c.outcome for c in self.cells if c.outcome is not None))

    @property
    def changed(self) -> bool:
        return any(c.changed for c in self.cells)

    def spans(self) -> list[tuple[Cell, Cell, Outcome]]:
        """Runs of consecutive releases with the same outcome (releases without one skipped)."""
        spans: list[list] = []
        for cell in self.cells:
            if cell.outcome is None:
                continue
            if spans and spans[-1][2] == cell.outcome:
                spans[-1][1] = cell
            else:
                spans.append([cell, cell, cell.outcome])
        return [tuple(s) for s in spans]

    def holds(self, anchor: str | None = None) -> tuple[Cell, Cell] | None:
        """The first and last release of the run of consecutive releases where the claim
        passed that holds ``anchor`` (a torch version, e.g. the current lock's), else the newest
        such run; None where it never passed."""
        runs: list[list[Cell]] = []
        for cell in self.cells:
            if cell.outcome is None:
                continue
            if cell.outcome.holds:
                if runs and runs[-1][-1] is not None:
                    runs[-1].append(cell)
                else:
                    runs.append([cell])
            elif runs and runs[-1][-1] is not None:
                runs.append([None])  # a failure ends the run
        runs = [r for r in runs if r[-1] is not None]
        if not runs:
            return None
        chosen = next((r for r in runs if any(c.release["torch"] == anchor for c in r)), runs[-1])
        return chosen[0], chosen[-1]

    def line_changes(self, first: Cell, last: Cell) -> list[Cell]:
        """The releases between ``first`` and ``last`` where what the claim printed changed."""
        inside = [
            c
            for c in self.cells
            if c.outcome is not None
            and version_tuple(first.release["torch"])
            <= version_tuple(c.release["torch"])
            <= version_tuple(last.release["torch"])
        ]
        return [
            b
            for a, b in zip(inside, inside[1:], strict=False)
            if a.outcome.lines != b.outcome.lines
        ]


def outcome_of(row: dict) -> Outcome:
    if row["status"] == "passed":
        return Outcome("passed", tuple(row["stdout"]))
    if row["status"] == "skipped":
        return Outcome("skipped", error=row.get("reason", ""))
    return Outcome("failed", tuple(row["stdout"]), error_line(row.get("reason", "")))


def _mtimes() -> tuple:
    files = sorted(HISTORY_DIR.glob("torch-*.json")) if HISTORY_DIR.is_dir() else []
    return tuple((f.name, f.stat().st_mtime_ns) for f in files)


def history_records() -> list[tuple[dict, dict | None]]:
    """Every history release with its record (None where it has none yet), oldest first."""
    return _history_records(_mtimes())


@cache
def _history_records(_key: tuple) -> list[tuple[dict, dict | None]]:
    out = []
    for release in releases():
        path = record_path(release["torch"])
        out.append((release, load_history_record(path) if path.is_file() else None))
    return out


def claim_history(path: str) -> ClaimHistory:
    sha = records.snippet_sha256(records.read_snippet_needs(path))
    cells = []
    for release, record in history_records():
        row = next((r for r in (record or {}).get("snippets", []) if r["path"] == path), None)
        cells.append(
            Cell(
                release=release,
                record=record,
                row=row,
                outcome=outcome_of(row) if row else None,
                changed=bool(row) and row["sha256"] != sha,
            )
        )
    return ClaimHistory(path, sha, tuple(cells))


def short_torch(version: str) -> str:
    """2.6.0 -> 2.6, 2.14.1 -> 2.14.1: a minor's newest patch is named by its minor unless it is
    a patch release."""
    return minor(version) if version.endswith(".0") else version
