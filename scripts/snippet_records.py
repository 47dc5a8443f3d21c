"""The data behind "every snippet is executed": snippet needs, locks and GPU records.

Used by the GPU runner (scripts/verify_snippets.py), the MkDocs hook (scripts/site_hooks.py) and
the tests. Standard library only, so it also runs on the GPU machine's bare Python.

* A snippet declares what it needs in its PEP 723 inline-metadata block, table ``[tool.snippet]``::

      # /// script
      # requires-python = ">=3.10"
      # [tool.snippet]
      # gpu = { min-cc = "8.0" }          # or: gpu = { skip = "why it never runs on a GPU" }
      # cpu = { interpreter = true }      # or: cpu = { skip = "why CI cannot run it on a CPU" }
      # ///

  ``cpu = { interpreter = false }`` means it runs on a plain CPU without TRITON_INTERPRET.
  Every ``skip`` reason comes with ``skip-zh``, the same reason in Chinese for the zh pages.

* A lock is ``locks/<id>.toml``: one torch + triton combination, its review dates and the snippets
  whose GPU record is knowingly behind (``[pending]``).
* A GPU record is ``locks/<id>.<device-slug>.json``, written by the GPU runner.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

REPO_ROOT = Path(__file__).resolve().parent.parent
SNIPPETS_DIR = REPO_ROOT / "snippets"
LOCKS_DIR = REPO_ROOT / "locks"

RECORD_SCHEMA = 1
STATUSES = ("passed", "failed", "skipped")
FIGURES_PREFIX = "figures: "
# A figure: {"value", "statistic"} plus optional "unit", "op", "shape", "dtype", "compile",
# which together are its ID card on the page.
FIGURE_STATISTICS = ("single", "median", "mean", "min", "count")
FIGURE_COMPILE = ("included", "excluded")
FIGURE_KEYS = {"value", "statistic", "unit", "op", "shape", "dtype", "compile"}

_PEP723_BLOCK = re.compile(
    r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$"
)


class SnippetContractError(ValueError):
    """A snippet's declared needs are missing or malformed."""


@dataclass(frozen=True)
class SnippetNeeds:
    """Where a snippet runs, read from its ``[tool.snippet]`` table."""

    path: str  # posix path relative to the repository root, e.g. snippets/x/y.py
    gpu_min_cc: str | None  # set when it runs natively on a GPU
    gpu_skip: str | None  # set when it never runs on a GPU, with the reason
    cpu_interpreter: bool  # run on CPU with TRITON_INTERPRET=1
    cpu_skip: str | None  # set when CI cannot run it on a CPU, with the reason
    timeout_s: int = 600
    skip_zh: dict[str, str] = field(default_factory=dict)  # "gpu"/"cpu" -> reason in Chinese

    @property
    def runs_on_gpu(self) -> bool:
        return self.gpu_skip is None

    @property
    def runs_on_cpu(self) -> bool:
        return self.cpu_skip is None


def relative_path(path: Path | str) -> str:
    """Repository-relative posix path of ``path``."""
    p = Path(path)
    if not p.is_absolute():
        p = REPO_ROOT / p
    return p.resolve().relative_to(REPO_ROOT).as_posix()


def list_snippets() -> list[str]:
    """Every runnable snippet, as repository-relative paths, sorted."""
    return sorted(relative_path(p) for p in SNIPPETS_DIR.rglob("*.py") if p.name != "__init__.py")


def file_sha256(path: Path | str) -> str:
    return hashlib.sha256((REPO_ROOT / path).read_bytes()).hexdigest()


def _script_metadata(text: str, where: str) -> dict:
    blocks = [m for m in _PEP723_BLOCK.finditer(text) if m.group("type") == "script"]
    if len(blocks) != 1:
        raise SnippetContractError(
            f"{where}: expected exactly one '# /// script' metadata block, found {len(blocks)}"
        )
    content = "".join(
        line[2:] if line.startswith("# ") else line[1:]
        for line in blocks[0].group("content").splitlines(keepends=True)
    )
    try:
        return tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        raise SnippetContractError(f"{where}: metadata block is not valid TOML: {exc}") from exc


def _one_of(table: object, where: str, allowed: set[str]) -> dict:
    if not isinstance(table, dict) or not table:
        raise SnippetContractError(f'{where} must be an inline table, e.g. {{ skip = "why" }}')
    unknown = set(table) - allowed
    if unknown:
        raise SnippetContractError(
            f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(allowed)}"
        )
    if "skip" in table or "skip-zh" in table:
        reasons = [table.get("skip"), table.get("skip-zh")]
        if len(table) != 2 or not all(isinstance(r, str) and r.strip() for r in reasons):
            raise SnippetContractError(
                f"{where}: 'skip' and 'skip-zh' take a non-empty reason each, and nothing else"
            )
    return table


def read_snippet_needs(path: Path | str) -> SnippetNeeds:
    """Read and validate a snippet's declared needs; raise SnippetContractError when wrong."""
    rel = relative_path(path)
    return parse_snippet_needs((REPO_ROOT / rel).read_text(encoding="utf-8"), rel)


def parse_snippet_needs(text: str, rel: str) -> SnippetNeeds:
    """Validate the ``[tool.snippet]`` table of a snippet's source ``text`` (``rel`` names it)."""
    meta = _script_metadata(text, rel)
    table = meta.get("tool", {}).get("snippet")
    if not isinstance(table, dict):
        raise SnippetContractError(f"{rel}: metadata block has no [tool.snippet] table")
    unknown = set(table) - {"gpu", "cpu", "timeout"}
    if unknown:
        raise SnippetContractError(f"{rel}: unknown [tool.snippet] keys {sorted(unknown)}")
    for key in ("gpu", "cpu"):
        if key not in table:
            raise SnippetContractError(f"{rel}: [tool.snippet] must say '{key} = ...'")
    gpu = _one_of(table["gpu"], f"{rel}: gpu", {"min-cc", "skip", "skip-zh"})
    cpu = _one_of(table["cpu"], f"{rel}: cpu", {"interpreter", "skip", "skip-zh"})
    if "skip" not in gpu:
        cc = gpu.get("min-cc")
        if not isinstance(cc, str) or not re.fullmatch(r"\d+\.\d", cc):
            raise SnippetContractError(f'{rel}: gpu needs min-cc = "major.minor", e.g. "8.0"')
    if "skip" not in cpu and not isinstance(cpu.get("interpreter"), bool):
        raise SnippetContractError(f"{rel}: cpu needs interpreter = true or false")
    if "skip" in gpu and "skip" in cpu:
        raise SnippetContractError(f"{rel}: a snippet must run somewhere (gpu and cpu both skip)")
    timeout = table.get("timeout", 600)
    if not isinstance(timeout, int) or timeout <= 0:
        raise SnippetContractError(f"{rel}: timeout must be a positive number of seconds")
    return SnippetNeeds(
        path=rel,
        gpu_min_cc=gpu.get("min-cc"),
        gpu_skip=gpu.get("skip"),
        cpu_interpreter=bool(cpu.get("interpreter", False)),
        cpu_skip=cpu.get("skip"),
        timeout_s=timeout,
        skip_zh={k: t["skip-zh"] for k, t in (("gpu", gpu), ("cpu", cpu)) if "skip-zh" in t},
    )


def validate_figure(name: str, figure: object) -> None:
    """Raise ValueError unless ``figure`` carries a value and a complete-enough ID card."""
    if not isinstance(figure, dict):
        raise ValueError(f"figure {name!r} must be an object with value and statistic")
    unknown = set(figure) - FIGURE_KEYS
    if unknown:
        raise ValueError(f"figure {name!r}: unknown keys {sorted(unknown)}")
    if not isinstance(figure.get("value"), (int, float)):
        raise ValueError(f"figure {name!r}: value must be a number")
    if figure.get("statistic") not in FIGURE_STATISTICS:
        raise ValueError(f"figure {name!r}: statistic must be one of {FIGURE_STATISTICS}")
    if "compile" in figure and figure["compile"] not in FIGURE_COMPILE:
        raise ValueError(f"figure {name!r}: compile must be one of {FIGURE_COMPILE}")


def parse_figures(output: str) -> dict:
    """Merge every ``figures: {json}`` line a snippet printed; validate each figure."""
    figures: dict = {}
    for line in output.splitlines():
        if line.startswith(FIGURES_PREFIX):
            value = json.loads(line[len(FIGURES_PREFIX) :])
            if not isinstance(value, dict):
                raise ValueError(f"figures line is not a JSON object: {line!r}")
            for name, figure in value.items():
                validate_figure(name, figure)
            figures.update(value)
    return figures


# ----------------------------------------------------------------------------- locks and records


@dataclass(frozen=True)
class Lock:
    id: str
    title: str
    torch: str
    triton: str
    cuda: str
    status: str  # current | supported | retired
    reviewed: dt.date
    next_review: dt.date
    mike_version: str
    devices: tuple[str, ...]
    pending: dict[str, str] = field(default_factory=dict)


def load_lock(lock_id: str) -> Lock:
    path = LOCKS_DIR / f"{lock_id}.toml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in LOCKS_DIR.glob("*.toml")))
        raise FileNotFoundError(f"no lock {lock_id!r} (locks/{lock_id}.toml); known: {known}")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if data.get("id") != lock_id:
        raise ValueError(f"{path.name}: id = {data.get('id')!r} does not match the file name")
    return Lock(
        id=lock_id,
        title=data["title"],
        torch=data["torch"],
        triton=data["triton"],
        cuda=data["cuda"],
        status=data["status"],
        reviewed=data["reviewed"],
        next_review=data["next-review"],
        mike_version=data["mike-version"],
        devices=tuple(data["gpu"]["devices"]),
        pending=dict(data.get("pending", {})),
    )


def current_lock_id() -> str:
    """The one lock whose status is 'current'."""
    current = [
        p.stem
        for p in sorted(LOCKS_DIR.glob("*.toml"))
        if tomllib.loads(p.read_text(encoding="utf-8")).get("status") == "current"
    ]
    if len(current) != 1:
        raise ValueError(f"exactly one lock must have status = 'current'; found {current}")
    return current[0]


def device_slug(device_name: str) -> str:
    """'NVIDIA H200' -> 'nvidia-h200'."""
    return re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")


def record_path(lock_id: str, slug: str) -> Path:
    return LOCKS_DIR / f"{lock_id}.{slug}.json"


def load_record(lock_id: str, slug: str) -> dict | None:
    path = record_path(lock_id, slug)
    if not path.is_file():
        return None
    record = json.loads(path.read_text(encoding="utf-8"))
    validate_record(record, where=path.name)
    return record


def validate_record(record: dict, where: str = "record") -> None:
    """Raise ValueError when a record lacks a key the site and the tests rely on."""

    def need(obj: dict, keys: tuple[str, ...], at: str) -> None:
        missing = [k for k in keys if k not in obj]
        if missing:
            raise ValueError(f"{where}: {at} lacks {missing}")

    need(record, ("lock", "date", "device", "versions", "snippets"), "record")
    need(record["device"], ("name", "cc", "driver"), "device")
    need(record["versions"], ("torch", "triton", "cuda", "python"), "versions")
    for entry in record["snippets"]:
        need(
            entry,
            ("path", "sha256", "status", "seconds", "figures"),
            f"snippet {entry.get('path')}",
        )
        if entry["status"] not in STATUSES:
            raise ValueError(
                f"{where}: {entry['path']}: status {entry['status']!r} not in {STATUSES}"
            )
        for name, figure in entry["figures"].items():
            validate_figure(name, figure)
        if entry["status"] != "passed" and not entry.get("reason"):
            raise ValueError(f"{where}: {entry['path']}: {entry['status']} without a reason")


# ----------------------------------------------------------------------------- freshness


@dataclass(frozen=True)
class Freshness:
    """What the site says about one snippet on one device record."""

    path: str
    state: str  # verified | changed | pending | failed | skipped | not-run | no-record | cpu-only
    reason: str = ""
    record: dict | None = None  # the device record, when there is one
    entry: dict | None = None  # the snippet's row in it


def snippet_freshness(needs: SnippetNeeds, lock: Lock, record: dict | None) -> Freshness:
    """Compare a snippet file with its row in one GPU record of the lock."""
    if not needs.runs_on_gpu:
        return Freshness(needs.path, "cpu-only", needs.gpu_skip or "")
    entry = None
    if record is not None:
        entry = next((e for e in record["snippets"] if e["path"] == needs.path), None)
    if record is None:
        state, reason = "no-record", ""
    elif entry is None:
        state, reason = "not-run", ""
    elif entry["sha256"] != file_sha256(needs.path):
        state, reason = "changed", ""
    elif entry["status"] == "failed":
        state, reason = "failed", entry["reason"]
    elif entry["status"] == "skipped":
        return Freshness(needs.path, "skipped", entry["reason"], record, entry)
    else:
        return Freshness(needs.path, "verified", "", record, entry)
    if needs.path in lock.pending:  # knowingly behind: say why instead of failing
        state, reason = "pending", lock.pending[needs.path]
    return Freshness(needs.path, state, reason, record, entry)
