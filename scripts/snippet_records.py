"""The data behind "every snippet is executed": snippet needs, locks, run records and states.

Used by the runner (scripts/verify_snippets.py), the MkDocs hook (scripts/site_hooks.py), the
audit (scripts/audit_locks.py) and the tests. Standard library only, so it also runs on the GPU
machine's bare Python.

* A snippet declares what it needs in its PEP 723 inline-metadata block, table ``[tool.snippet]``::

      # /// script
      # requires-python = ">=3.10"
      # dependencies = ["torch", "triton", "numpy"]
      # [tool.snippet]
      # gpu = { min-cc = "8.0" }          # or: gpu = { skip = "why never on a GPU", ... }
      # cpu = { interpreter = true }      # or: cpu = { skip = "why never on a CPU", ... }
      # files = ["pkg/setup.py"]          # optional: data files it uses, bound into its hash
      # also-needs = "a C++ compiler"     # optional, with also-needs-zh: what a copy needs that
      # also-needs-zh = "C++ 编译器"       # no download carries (shown by its complete file)
      # exercise = { expect = "fail", message = "not solved yet", message-zh = "还没有做对" }
      # ///

  ``exercise`` marks an exercise's starter file (snippets/<page>/exercise_<topic>.py; its worked
  solution, exercise_<topic>_solution.py, is an ordinary snippet): untouched, it must exit
  non-zero having printed its own ``message`` (``message-zh`` when its ``LANGUAGE`` line says
  "zh"), and no traceback. The runner records such a run as passed (it did what it declares);
  a starter that passes untouched, or crashes, is failed (``exercise_outcome``).

  ``cpu = { interpreter = false }`` means it runs on a plain CPU without TRITON_INTERPRET.
  Every ``skip`` reason comes with ``skip-zh``, the same reason in Chinese for the zh pages.
  ``dependencies`` names packages without versions: each lock pins them (``[packages]``), and
  the complete file a reader copies from that lock's pages carries the pins.

* A lock is ``locks/<id>.toml``: one torch + triton combination, its review dates, the devices
  that verify it and the snippets whose GPU record is knowingly behind (``[pending]``, each with
  its reason in both languages and the day its GPU run is due).
* A record is ``locks/<id>.<platform>.json``: ``<platform>`` is a GPU device slug (written by the
  runner on that GPU) or ``cpu`` (written by the runner with ``--cpu`` in the lock's environment).
* A snippet's *state* on one platform of one lock is one of ``STATES``; it is worked out once per
  build by ``lock_states``.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10 (the GPU machine may have it)
    import tomli as tomllib  # type: ignore[no-redef]

REPO_ROOT = Path(__file__).resolve().parent.parent
SNIPPETS_DIR = REPO_ROOT / "snippets"
# SNIPPET_LOCKS_DIR: another folder of locks and records (scripts/add_lock.py --out-dir tries a
# lock in a scratch folder with copies of these)
LOCKS_DIR = Path(os.environ.get("SNIPPET_LOCKS_DIR") or REPO_ROOT / "locks")

RECORD_SCHEMA = 2
CPU = "cpu"  # the platform name of CPU records
ANY_GPU = "gpu"  # the GPU platform of a lock that no GPU device verifies (it has no record)
# GPU devices a lock may name, by slug: the runner's device name (torch.cuda.get_device_name()).
KNOWN_DEVICES = {"nvidia-h200": "NVIDIA H200"}
RUN_STATUSES = ("passed", "failed", "skipped")
LOCK_STATUSES = ("current", "supported", "retired")
STDOUT_LINES_KEPT = 400
# How many fresh processes a timing snippet measures when it is set (each such file reads it; its
# default is the count its records are made with). The test suite sets 1 for its CPU runs of
# timing snippets, which it runs side by side and keeps no time of; the runner never passes it on.
REPEATS_ENV = "SNIPPET_REPEATS"

# ----------------------------------------------------------------------------- figures

FIGURES_PREFIX = "figures: "
FIGURE_STATISTICS = ("median", "mean", "min", "count", "ratio", "spec")
FIGURE_SPREADS = ("min-max", "p20-p80")
FIGURE_COMPILE = ("included", "excluded")
# Which clock a time (or a rate computed from one) was read from: "kernel", the GPU time of the
# kernels alone (CUDA-graph replay such as triton.testing.do_bench_cudagraph, or profiler device
# time); "call", the time per call with the host launch in it (CUDA events around a call, as
# triton.testing.do_bench records them, or started on an idle GPU); "wall", the host's wall
# clock. Optional; a page that calls a figure "GPU time" or "kernel time" needs "kernel"
# (tests/test_defects.py).
FIGURE_CLOCKS = ("kernel", "call", "wall")
FIGURE_KEYS = {
    "value",
    "unit",
    "statistic",
    "low",
    "high",
    "spread",
    "repeats",
    "op",
    "reference",
    "shape",
    "dtype",
    "compile",
    "clock",
    "bytes",
    "flops",
    "ms_median",
}
# A measured quantity (time, throughput) moves between runs: it carries its spread.
MEASURED_UNITS = ("s", "ms", "us", "µs", "ns", "GB/s", "TB/s", "TFLOP/s", "tokens/s")
# A name that ends in a unit has that unit; a name "a_over_b" is a ratio, without a unit.
UNIT_SUFFIXES = {
    "_ms": ("ms",),
    "_us": ("µs", "us"),
    "_ns": ("ns",),
    "_s": ("s",),
    "_gbps": ("GB/s",),
    "_tbps": ("TB/s",),
    "_tflops": ("TFLOP/s",),
    "_mib": ("MiB",),
    "_gib": ("GiB",),
}
# A measured rate is an amount over a time: with ``bytes`` (or ``flops``) and ``ms_median``, the
# median time it was computed from, its value must be amount / ms_median / scale (as a benchmark
# row's). tests/test_defects.py requires them of every measured rate in a record.
FIGURE_RATES = {"GB/s": ("bytes", 1e6), "TB/s": ("bytes", 1e9), "TFLOP/s": ("flops", 1e9)}


MIN_REPEATS = 3  # a measured figure in a record; a run given REPEATS_ENV=1 measures once


def validate_figure(name: str, figure: object, min_repeats: int = MIN_REPEATS) -> None:
    """Raise ValueError unless ``figure`` carries a value and a complete ID card.

    Every figure has ``value`` and ``statistic``. A measured figure (a unit in MEASURED_UNITS)
    is a median or mean of ``repeats`` >= ``min_repeats`` runs with its spread: ``low``/``high`` and
    ``spread`` ("min-max" or "p20-p80"), and says whether compile time is in it (``compile``).
    A "spec" figure is a datasheet number, not a measurement; its ``op`` names the source.
    """
    if not isinstance(figure, dict):
        raise ValueError(f"figure {name!r} must be an object with value and statistic")
    unknown = set(figure) - FIGURE_KEYS
    if unknown:
        raise ValueError(f"figure {name!r}: unknown keys {sorted(unknown)}")
    value = figure.get("value")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ValueError(f"figure {name!r}: value must be a number")
    if figure.get("statistic") not in FIGURE_STATISTICS:
        raise ValueError(f"figure {name!r}: statistic must be one of {FIGURE_STATISTICS}")
    if "compile" in figure and figure["compile"] not in FIGURE_COMPILE:
        raise ValueError(f"figure {name!r}: compile must be one of {FIGURE_COMPILE}")
    if "clock" in figure and figure["clock"] not in FIGURE_CLOCKS:
        raise ValueError(f"figure {name!r}: clock must be one of {FIGURE_CLOCKS}")
    for suffix, units in UNIT_SUFFIXES.items():
        if name.endswith(suffix) and figure.get("unit") not in units:
            raise ValueError(
                f"figure {name!r}: its name says {units[0]}, its unit is {figure.get('unit')!r}"
            )
    if "_over_" in name and (figure.get("unit") or figure["statistic"] != "ratio"):
        raise ValueError(f"figure {name!r}: a name 'a_over_b' is a ratio: statistic ratio, no unit")
    validate_rate(name, figure)
    if figure.get("unit") in MEASURED_UNITS and figure["statistic"] != "spec":
        if figure["statistic"] not in ("median", "mean", "min"):
            raise ValueError(f"figure {name!r}: a measured figure is a median, mean or min")
        repeats = figure.get("repeats")
        if not isinstance(repeats, int) or repeats < min_repeats:
            raise ValueError(f"figure {name!r}: a measured figure needs repeats >= {min_repeats}")
        if figure.get("spread") not in FIGURE_SPREADS:
            raise ValueError(f"figure {name!r}: spread must be one of {FIGURE_SPREADS}")
        low, high = figure.get("low"), figure.get("high")
        if not all(isinstance(v, (int, float)) for v in (low, high)) or not low <= high:
            raise ValueError(f"figure {name!r}: needs low <= high (its spread)")
        if "compile" not in figure:
            raise ValueError(f"figure {name!r}: say whether compile time is included")
        if not figure.get("op"):
            raise ValueError(f"figure {name!r}: say what was measured (op)")


def validate_rate(name: str, figure: dict) -> None:
    """A measured rate (FIGURE_RATES) that gives its amount and median time is their quotient."""
    rate = FIGURE_RATES.get(figure.get("unit"))
    given = {"bytes", "flops", "ms_median"} & set(figure)
    if rate is None or figure["statistic"] == "spec":
        if given:
            raise ValueError(f"figure {name!r}: {sorted(given)} belong to a measured rate")
        return
    if not given:
        return
    amount, scale = rate
    ms, value = figure.get("ms_median"), figure["value"]
    if not isinstance(figure.get(amount), int) or not isinstance(ms, (int, float)) or ms <= 0:
        raise ValueError(
            f"figure {name!r}: a rate in {figure['unit']} gives {amount} and ms_median"
        )
    if given - {amount, "ms_median"}:
        raise ValueError(f"figure {name!r}: a rate in {figure['unit']} counts {amount}")
    expected = figure[amount] / ms / scale
    if abs(value - expected) > 0.51 + 0.01 * expected:
        raise ValueError(
            f"figure {name!r}: {value} {figure['unit']} is not {amount} / ms_median "
            f"({expected:.4g})"
        )


def parse_figures(output: str, min_repeats: int = MIN_REPEATS) -> dict:
    """Merge every ``figures: {json}`` line a snippet printed; validate each figure."""
    figures: dict = {}
    for line in output.splitlines():
        if line.startswith(FIGURES_PREFIX):
            value = json.loads(line[len(FIGURES_PREFIX) :])
            if not isinstance(value, dict):
                raise ValueError(f"figures line is not a JSON object: {line!r}")
            for name, figure in value.items():
                validate_figure(name, figure, min_repeats)
            figures.update(value)
    return figures


# A benchmark snippet prints one line per measurement, ``benchmark: {json}``: which
# implementation, which pass, shape and dtype, the median and 20/80 % quantiles of its time over
# ``repeats`` runs, which clock that time was read from (optional ``clock``, FIGURE_CLOCKS), and
# what the time means (bytes moved -> GB/s, or FLOPs -> TFLOP/s), so a reader and a test can
# recompute every ratio a page quotes.
BENCHMARK_PREFIX = "benchmark: "
BENCHMARK_IMPLS = (
    "triton", "triton_fn", "triton_compile", "triton_two_pass", "triton_one_pass", "triton_tma",
    "eager", "compile", "compile_max", "liger", "cublas", "copy",
    # a recipe's parts, and variants it replaced (rmsnorm/backward_stages, fused-softmax/variants)
    "triton_first_kernel", "triton_torch_sum", "triton_plain_loop", "triton_per_row",
)  # fmt: skip
# a looped kernel at one (BLOCK, num_warps) plan (fused-softmax/variants): triton_loop_16384x32
BENCHMARK_PLAN_IMPL = re.compile(r"triton_loop_[1-9][0-9]*x[1-9][0-9]*")
BENCHMARK_KEYS = {"impl", "pass", "shape", "dtype", "ms_median", "ms_p20", "ms_p80", "repeats"}
BENCHMARK_RATES = {"gbps": ("bytes", 1e6), "tflops": ("flops", 1e9)}  # rate = amount/ms/scale


def validate_benchmark_row(row: object) -> None:
    """Raise ValueError unless ``row`` is one complete measurement whose rate follows from it."""
    if not isinstance(row, dict):
        raise ValueError(f"a benchmark row must be an object, got {row!r}")
    missing = BENCHMARK_KEYS - set(row)
    if missing:
        raise ValueError(f"benchmark row {row}: lacks {sorted(missing)}")
    if row["impl"] not in BENCHMARK_IMPLS and not BENCHMARK_PLAN_IMPL.fullmatch(str(row["impl"])):
        raise ValueError(
            f"benchmark row: impl {row['impl']!r} not in {BENCHMARK_IMPLS} nor a looped plan "
            f"({BENCHMARK_PLAN_IMPL.pattern})"
        )
    if "clock" in row and row["clock"] not in FIGURE_CLOCKS:
        raise ValueError(f"benchmark row: clock {row['clock']!r} not in {FIGURE_CLOCKS}")
    if not (isinstance(row["shape"], list) and all(isinstance(n, int) for n in row["shape"])):
        raise ValueError(f"benchmark row: shape must be a list of integers, got {row['shape']!r}")
    if not isinstance(row["repeats"], int) or row["repeats"] < 3:
        raise ValueError("benchmark row: needs repeats >= 3")
    times = [row[k] for k in ("ms_p20", "ms_median", "ms_p80")]
    if not all(isinstance(t, (int, float)) and t > 0 for t in times) or times != sorted(times):
        raise ValueError(f"benchmark row: needs 0 < ms_p20 <= ms_median <= ms_p80, got {times}")
    rates = [r for r in BENCHMARK_RATES if r in row]
    if len(rates) != 1:
        raise ValueError(f"benchmark row: needs exactly one of {sorted(BENCHMARK_RATES)}")
    amount, scale = BENCHMARK_RATES[rates[0]]
    expected = row.get(amount, 0) / row["ms_median"] / scale
    if (
        not isinstance(row.get(amount), int)
        or abs(row[rates[0]] - expected) > 0.051 + 1e-3 * expected
    ):
        raise ValueError(f"benchmark row: {rates[0]} {row[rates[0]]} is not {amount}/ms_median")


def parse_benchmark(output: str) -> list[dict]:
    """Every ``benchmark: {json}`` row a snippet printed, validated, in order."""
    rows = []
    for line in output.splitlines():
        if line.startswith(BENCHMARK_PREFIX):
            row = json.loads(line[len(BENCHMARK_PREFIX) :])
            validate_benchmark_row(row)
            rows.append(row)
    return rows


def output_lines(output: str) -> list[str]:
    """What a record keeps of a snippet's standard output: its lines, figures and benchmark
    lines left out (they are kept as structured data)."""
    lines = [
        line.rstrip()
        for line in output.splitlines()
        if not line.startswith((FIGURES_PREFIX, BENCHMARK_PREFIX))
    ]
    if len(lines) > STDOUT_LINES_KEPT:
        half = STDOUT_LINES_KEPT // 2
        lines = [*lines[:half], f"... {len(lines) - 2 * half} lines left out ...", *lines[-half:]]
    return lines


# ----------------------------------------------------------------------------- snippet contract

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
    gpu_timing: bool = False  # it times something: the runner gives it the machine to itself
    dependencies: tuple[str, ...] = ()
    files: tuple[str, ...] = ()  # data files it uses (a .cpp, a pyproject.toml), repo-relative
    timeout_s: int = 600
    skip_zh: dict[str, str] = field(default_factory=dict)  # "gpu"/"cpu" -> reason in Chinese
    # "en"/"zh" -> what else a copy needs that no download carries (a compiler, a second torch)
    also_needs: dict[str, str] = field(default_factory=dict)
    # an exercise's starter: "en"/"zh" -> the message it prints when it fails, as it must
    exercise_message: dict[str, str] = field(default_factory=dict)
    # why the test suite must run it in a fresh process, not forked from a server that has
    # imported torch and triton (what scripts/fork_server.py's static rule does not see)
    fresh_process: str | None = None

    @property
    def is_starter(self) -> bool:
        return bool(self.exercise_message)

    @property
    def runs_on_gpu(self) -> bool:
        return self.gpu_skip is None

    @property
    def runs_on_cpu(self) -> bool:
        return self.cpu_skip is None

    def skip_reason(self, platform: str, lang: str = "en") -> str:
        """Why the snippet never runs on ``platform`` (a device slug or "cpu"), in ``lang``."""
        kind = CPU if platform == CPU else "gpu"
        reason = self.cpu_skip if kind == CPU else self.gpu_skip
        return (self.skip_zh.get(kind, "") if lang == "zh" else reason) or ""


def relative_path(path: Path | str) -> str:
    """Repository-relative posix path of ``path``."""
    p = Path(path)
    if not p.is_absolute():
        p = REPO_ROOT / p
    return p.resolve().relative_to(REPO_ROOT).as_posix()


def list_snippets() -> list[str]:
    """Every runnable snippet, as repository-relative paths, sorted: the .py files directly in
    a page's folder, snippets/<page>/<name>.py. Files deeper down (a package a snippet builds)
    are data files that a snippet declares (``files = [...]``)."""
    return sorted(relative_path(p) for p in SNIPPETS_DIR.glob("*/*.py"))


# The whole GPU verification, in named parts: each runs in one call of the GPU machine (at most
# 10 minutes), `scripts/verify_snippets.py --part <name>`. A part names page folders, or
# file-name patterns (fnmatch, "exercise_*"); the last part, with none named, holds every snippet
# no other part holds. A whole GPU record is one run of each part on the same device, each
# part's span under the call's budget.
GPU_PARTS: dict[str, tuple[str, ...]] = {
    "cookbook": ("cross-entropy", "fused-geglu", "fused-softmax", "rmsnorm"),
    "matmul": ("matmul",),  # the matmul recipe: max-autotune's compile alone takes minutes
    "exercises": ("exercise_*",),  # every chapter's exercise files, starters and solutions
    "chapters": (),  # every other page
}


def part_of(path: str) -> str:
    """The GPU part a snippet (snippets/<page>/<name>.py) runs in."""
    page, file = Path(path).parent.name, Path(path).name
    named = [
        part
        for part, names in GPU_PARTS.items()
        if page in names or any("*" in n and fnmatch.fnmatch(file, n) for n in names)
    ]
    return named[0] if named else next(part for part, names in GPU_PARTS.items() if not names)


def file_sha256(path: Path | str) -> str:
    return hashlib.sha256((REPO_ROOT / path).read_bytes()).hexdigest()


def snippet_sha256(needs: SnippetNeeds) -> str:
    """What a record binds a run to: the snippet file, and the data files it declares, if any."""
    if not needs.files:
        return file_sha256(needs.path)
    digest = hashlib.sha256()
    for rel in (needs.path, *needs.files):
        digest.update(rel.encode() + b"\0" + (REPO_ROOT / rel).read_bytes() + b"\0")
    return digest.hexdigest()


def script_metadata_block(text: str, where: str) -> re.Match:
    blocks = [m for m in _PEP723_BLOCK.finditer(text) if m.group("type") == "script"]
    if len(blocks) != 1:
        raise SnippetContractError(
            f"{where}: expected exactly one '# /// script' metadata block, found {len(blocks)}"
        )
    return blocks[0]


def _script_metadata(text: str, where: str) -> dict:
    content = "".join(
        line[2:] if line.startswith("# ") else line[1:]
        for line in script_metadata_block(text, where).group("content").splitlines(keepends=True)
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
    return _read_snippet_needs(rel, file_sha256(rel))


@cache
def _read_snippet_needs(rel: str, sha256: str) -> SnippetNeeds:
    return parse_snippet_needs((REPO_ROOT / rel).read_text(encoding="utf-8"), rel)


def parse_snippet_needs(text: str, rel: str) -> SnippetNeeds:
    """Validate the ``[tool.snippet]`` table of a snippet's source ``text`` (``rel`` names it)."""
    meta = _script_metadata(text, rel)
    table = meta.get("tool", {}).get("snippet")
    if not isinstance(table, dict):
        raise SnippetContractError(f"{rel}: metadata block has no [tool.snippet] table")
    known = {
        "gpu", "cpu", "timeout", "files", "also-needs", "also-needs-zh", "exercise",
        "fresh-process",
    }  # fmt: skip
    unknown = set(table) - known
    if unknown:
        raise SnippetContractError(f"{rel}: unknown [tool.snippet] keys {sorted(unknown)}")
    for key in ("gpu", "cpu"):
        if key not in table:
            raise SnippetContractError(f"{rel}: [tool.snippet] must say '{key} = ...'")
    gpu = _one_of(table["gpu"], f"{rel}: gpu", {"min-cc", "timing", "skip", "skip-zh"})
    cpu = _one_of(table["cpu"], f"{rel}: cpu", {"interpreter", "skip", "skip-zh"})
    if "skip" not in gpu:
        cc = gpu.get("min-cc")
        if not isinstance(cc, str) or not re.fullmatch(r"\d+\.\d", cc):
            raise SnippetContractError(f'{rel}: gpu needs min-cc = "major.minor", e.g. "8.0"')
        if not isinstance(gpu.get("timing", False), bool):
            raise SnippetContractError(f"{rel}: gpu timing is true or false")
    if "skip" not in cpu and not isinstance(cpu.get("interpreter"), bool):
        raise SnippetContractError(f"{rel}: cpu needs interpreter = true or false")
    if "skip" in gpu and "skip" in cpu:
        raise SnippetContractError(f"{rel}: a snippet must run somewhere (gpu and cpu both skip)")
    timeout = table.get("timeout", 600)
    if not isinstance(timeout, int) or timeout <= 0:
        raise SnippetContractError(f"{rel}: timeout must be a positive number of seconds")
    files = table.get("files", [])
    folder = rel.rsplit("/", 1)[0]
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise SnippetContractError(f"{rel}: files lists the data files it uses, relative to it")
    files = [f"{folder}/{f}" for f in files]
    missing = [f for f in files if not (REPO_ROOT / f).is_file()]
    if missing:
        raise SnippetContractError(f"{rel}: declared files do not exist: {missing}")
    also = [table.get("also-needs"), table.get("also-needs-zh")]
    if any(a is not None for a in also) and not all(isinstance(a, str) and a.strip() for a in also):
        raise SnippetContractError(
            f"{rel}: 'also-needs' and 'also-needs-zh' come together, each a non-empty sentence"
        )
    exercise = table.get("exercise")
    if exercise is not None:
        if (
            not isinstance(exercise, dict)
            or set(exercise) != {"expect", "message", "message-zh"}
            or exercise["expect"] != "fail"
            or not all(isinstance(exercise[k], str) and exercise[k].strip() for k in exercise)
        ):
            raise SnippetContractError(
                f'{rel}: exercise = {{ expect = "fail", message = "...", message-zh = "..." }}: '
                "a starter declares that it fails, and the message it fails with in each language"
            )
    fresh = table.get("fresh-process")
    if fresh is not None and not (isinstance(fresh, str) and fresh.strip()):
        raise SnippetContractError(
            f'{rel}: fresh-process = "reason": why the tests must not fork its CPU run'
        )
    deps = meta.get("dependencies", [])
    if not isinstance(deps, list) or not all(
        isinstance(d, str) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", d) for d in deps
    ):
        raise SnippetContractError(
            f"{rel}: dependencies must list package names without versions (each lock pins them)"
        )
    return SnippetNeeds(
        path=rel,
        gpu_min_cc=gpu.get("min-cc"),
        gpu_skip=gpu.get("skip"),
        gpu_timing=gpu.get("timing", False),
        cpu_interpreter=bool(cpu.get("interpreter", False)),
        cpu_skip=cpu.get("skip"),
        dependencies=tuple(deps),
        files=tuple(files),
        timeout_s=timeout,
        skip_zh={k: t["skip-zh"] for k, t in (("gpu", gpu), ("cpu", cpu)) if "skip-zh" in t},
        also_needs=dict(zip(("en", "zh"), also, strict=True)) if also[0] else {},
        exercise_message=(
            {"en": exercise["message"], "zh": exercise["message-zh"]} if exercise else {}
        ),
        fresh_process=fresh,
    )


TRACEBACK = "Traceback (most recent call last)"


def exercise_outcome(
    needs: SnippetNeeds, returncode: int | None, stdout: str, stderr: str, lang: str = "en"
) -> str | None:
    """Why an exercise's starter did not behave as it declares (None when it did): it must exit
    non-zero, print its message in ``lang`` and print no traceback (a crash is not a message)."""
    message = needs.exercise_message[lang]
    if returncode == 0:
        return "the starter passed untouched: its TODOs must leave the checker failing"
    if returncode is None or returncode < 0:
        return "the starter crashed or timed out instead of failing with its message"
    if TRACEBACK in stderr or TRACEBACK in stdout:
        return f"the starter failed with a traceback (exit {returncode}), not only its message"
    if message not in stdout:
        return f"the starter failed (exit {returncode}) without printing {message!r}"
    return None


# ----------------------------------------------------------------------------- locks


class LockError(ValueError):
    """A lock file is missing a key, has a bad value, or names something unknown."""


@dataclass(frozen=True)
class Reason:
    """A reason shown to readers, in both languages."""

    en: str
    zh: str

    def __call__(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


@dataclass(frozen=True)
class Lock:
    id: str
    title: str
    torch: str
    triton: str
    cuda: str
    python: str  # the Requires-Python range both wheels allow, e.g. ">=3.10"
    status: str  # current | supported | retired
    reviewed: dt.date
    next_review: dt.date
    mike_version: str
    packages: dict[str, str]  # name -> exact version a reader installs
    devices: tuple[str, ...]  # GPU device slugs whose records verify this lock
    gpu_reason: Reason | None = None  # why no GPU verifies it, when devices is empty
    pending: dict[str, Reason] = field(default_factory=dict)
    pending_due: dict[str, dt.date] = field(default_factory=dict)  # path -> GPU run due by

    @property
    def record_platforms(self) -> tuple[str, ...]:
        """Every record a complete lock has: one per device, and the CPU one."""
        return (*self.devices, CPU)

    @property
    def platforms(self) -> tuple[str, ...]:
        """What a badge shows a state for: each device (or "gpu" when none verifies the lock,
        whose state then says so), and the CPU."""
        return (*(self.devices or (ANY_GPU,)), CPU)

    @property
    def triton_minor(self) -> tuple[int, int]:
        major, minor = self.triton.split(".")[:2]
        return int(major), int(minor)

    def pins(self, names: tuple[str, ...] | list[str]) -> list[str]:
        """``name==version`` for each package name, from this lock's ``[packages]``."""
        missing = [n for n in names if n not in self.packages]
        if missing:
            raise LockError(f"lock {self.id} pins no version of {missing} ([packages])")
        return [f"{n}=={self.packages[n]}" for n in names]


LOCK_KEYS = {
    "id",
    "title",
    "status",
    "reviewed",
    "next-review",
    "mike-version",
    "python",
    "cuda",
    "packages",
    "gpu",
    "pending",
}


def lock_ids() -> list[str]:
    return sorted(p.stem for p in LOCKS_DIR.glob("*.toml"))


def parse_lock(data: dict, where: str) -> Lock:
    """Validate a lock's TOML data; raise LockError with what is wrong and how to fix it."""

    def need(key: str, kind: type | tuple[type, ...], table: dict = data, at: str = "") -> object:
        if key not in table:
            raise LockError(f"{where}: missing key {at}{key!r}")
        if not isinstance(table[key], kind):
            raise LockError(f"{where}: {at}{key} has the wrong type ({type(table[key]).__name__})")
        return table[key]

    unknown = set(data) - LOCK_KEYS
    if unknown:
        raise LockError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(LOCK_KEYS)}")
    status = need("status", str)
    if status not in LOCK_STATUSES:
        raise LockError(f"{where}: status {status!r} is not one of {LOCK_STATUSES}")
    reviewed, next_review = need("reviewed", dt.date), need("next-review", dt.date)
    if not reviewed < next_review:
        raise LockError(f"{where}: next-review ({next_review}) must come after {reviewed}")
    packages = need("packages", dict)
    for name in ("torch", "triton"):
        if not isinstance(packages.get(name), str):
            raise LockError(f"{where}: [packages] must pin {name}")
    for name, version in packages.items():
        if not isinstance(version, str) or not re.fullmatch(r"\d+(\.\d+)*", version):
            raise LockError(f"{where}: [packages] {name} = {version!r} is not an exact version")
    python = need("python", str)
    if not re.fullmatch(r">=3\.\d+(,<3\.\d+)?", python):
        raise LockError(
            f'{where}: python = {python!r}; write the range as ">=3.10" or ">=3.11,<3.15"'
        )
    mike_version = need("mike-version", str)
    if not re.fullmatch(r"triton-\d+\.\d+", mike_version):
        raise LockError(
            f'{where}: mike-version {mike_version!r} must read "triton-<major>.<minor>"'
        )
    gpu = need("gpu", dict)
    devices = need("devices", list, gpu, "gpu.")
    unknown_devices = [d for d in devices if d not in KNOWN_DEVICES]
    if unknown_devices:
        raise LockError(
            f"{where}: unknown device {unknown_devices}; known: {sorted(KNOWN_DEVICES)} "
            "(add a new one to KNOWN_DEVICES in scripts/snippet_records.py)"
        )
    gpu_reason = None
    if not devices:
        if not (isinstance(gpu.get("reason"), str) and isinstance(gpu.get("reason-zh"), str)):
            raise LockError(f"{where}: gpu.devices is empty: give reason and reason-zh")
        gpu_reason = Reason(gpu["reason"], gpu["reason-zh"])
    pending, pending_due = {}, {}
    for path, entry in data.get("pending", {}).items():
        if not (
            isinstance(entry, dict)
            and set(entry) == {"reason", "reason-zh", "due"}
            and all(isinstance(entry[k], str) and entry[k].strip() for k in ("reason", "reason-zh"))
            and isinstance(entry["due"], dt.date)
        ):
            raise LockError(
                f'{where}: pending "{path}" needs {{ reason = "...", reason-zh = "...", '
                "due = YYYY-MM-DD }: why its GPU run waits, in both languages, and the day by "
                "which it is due (scripts/audit_locks.py fails after it)"
            )
        pending[path] = Reason(entry["reason"], entry["reason-zh"])
        pending_due[path] = entry["due"]
    return Lock(
        id=need("id", str),
        title=need("title", str),
        torch=packages["torch"],
        triton=packages["triton"],
        cuda=need("cuda", str),
        python=python,
        status=status,
        reviewed=reviewed,
        next_review=next_review,
        mike_version=mike_version,
        packages=dict(packages),
        devices=tuple(devices),
        gpu_reason=gpu_reason,
        pending=pending,
        pending_due=pending_due,
    )


def load_lock(lock_id: str) -> Lock:
    path = LOCKS_DIR / f"{lock_id}.toml"
    if not path.is_file():
        raise FileNotFoundError(f"no lock {lock_id!r} (locks/{lock_id}.toml); known: {lock_ids()}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise LockError(f"{path.name}: not valid TOML: {exc}") from exc
    lock = parse_lock(data, path.name)
    if lock.id != lock_id:
        raise LockError(f"{path.name}: id = {lock.id!r} does not match the file name")
    return lock


def all_locks() -> list[Lock]:
    """Every lock, newest Triton first."""
    return sorted((load_lock(i) for i in lock_ids()), key=lambda k: k.triton_minor, reverse=True)


def current_lock_id() -> str:
    """The one lock whose status is 'current'."""
    current = [lock.id for lock in all_locks() if lock.status == "current"]
    if len(current) != 1:
        raise LockError(f"exactly one lock must have status = 'current'; found {current}")
    return current[0]


# ----------------------------------------------------------------------------- records


def device_slug(device_name: str) -> str:
    """'NVIDIA H200' -> 'nvidia-h200'."""
    return re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")


# The environment settings that change what a snippet builds or runs: a record keeps those set
# when it was made (the runner's "environment"), so that its command reproduces it. Left out:
# what the runner sets per snippet (records of each run: cache, interpreter, GPU, repeat count).
RECORDED_ENV_NAMES = (
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED", "MAX_JOBS",
    "CUDA_HOME", "CUDA_PATH", "CUDACXX", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS",
    "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING", "CUBLAS_WORKSPACE_CONFIG",
    "NVIDIA_TF32_OVERRIDE", "LD_LIBRARY_PATH", "LD_PRELOAD", "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
)  # fmt: skip
RECORDED_ENV_PREFIXES = ("TRITON_", "PYTORCH_", "TORCH_", "TORCHINDUCTOR_", "TORCHDYNAMO_")
RUNNER_SET_ENV = (
    "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "TRITON_INTERPRET", "TRITON_DEBUG", REPEATS_ENV,
)  # fmt: skip


def recorded_environment(environ: dict[str, str]) -> dict[str, str]:
    """The settings of ``environ`` a record keeps (RECORDED_ENV_NAMES and *_PREFIXES), sorted."""
    return {
        name: value
        for name, value in sorted(environ.items())
        if (name in RECORDED_ENV_NAMES or name.startswith(RECORDED_ENV_PREFIXES))
        and name not in RUNNER_SET_ENV
    }


def record_path(lock_id: str, platform: str) -> Path:
    return LOCKS_DIR / f"{lock_id}.{platform}.json"


def load_record(lock_id: str, platform: str) -> dict | None:
    path = record_path(lock_id, platform)
    if not path.is_file():
        return None
    record = json.loads(path.read_text(encoding="utf-8"))
    validate_record(record, where=path.name)
    return record


# Earlier runs of a file kept in its row ("earlier"): the same file (sha256), lock and platform,
# newest first. A figure whose earlier values moved (outside this run's spread and by more than
# MOVED_RATIO) is shown with them: one run's value and spread would say more than the runs do.
EARLIER_RUNS_KEPT = 4
MOVED_RATIO = 0.05  # a figure without a spread "moved" when an earlier value differs by more


def earlier_runs(new: dict, old: dict | None) -> list[dict]:
    """The ``earlier`` list of a new row: the old row's run and the runs it kept, when both
    rows passed for the same file; else none (a changed file starts its history again)."""
    if not old or old.get("sha256") != new.get("sha256"):
        return []
    if old.get("status") != "passed" or new.get("status") != "passed":
        return []
    values = {k: f["value"] for k, f in old.get("figures", {}).items()}
    runs = ([{"date": old["date"], "figures": values}] if values else []) + old.get("earlier", [])
    return runs[:EARLIER_RUNS_KEPT]


def other_runs(entry: dict, name: str) -> list[float]:
    """The values figure ``name`` had in the earlier runs its row keeps, newest first."""
    return [run["figures"][name] for run in entry.get("earlier", []) if name in run["figures"]]


def moved_between_runs(figure: dict, others: list[float]) -> bool:
    """Whether an earlier run's value differs from this run's by more than MOVED_RATIO and,
    where the figure has a spread, lies outside it too."""
    value = figure["value"]

    def moved(v: float) -> bool:
        outside = "low" not in figure or not figure["low"] <= v <= figure["high"]
        return outside and abs(v - value) > MOVED_RATIO * abs(value)

    return any(moved(v) for v in others)


def held_on_rerun(old: float, new: float, low: float | None, high: float | None) -> bool:
    """A re-run's value held when it lies in the earlier run's spread or within MOVED_RATIO."""
    inside = low is not None and high is not None and low <= new <= high
    return inside or abs(new - old) <= MOVED_RATIO * abs(old)


def rerun_comparison(old: dict | None, new: dict) -> list[dict]:
    """Each measured figure and benchmark time of ``new`` (a row of this run) beside the same
    one in ``old`` (the record's row before this run, for the same file): its clock, both values
    and whether it held (held_on_rerun). Empty when the file changed or either run failed."""
    if not old or old.get("sha256") != new.get("sha256"):
        return []
    if old.get("status") != "passed" or new.get("status") != "passed":
        return []
    out = []
    for name, figure in new.get("figures", {}).items():
        before = old.get("figures", {}).get(name)
        if not before or figure.get("unit") not in MEASURED_UNITS:
            continue
        value, earlier = figure["value"], before["value"]
        out.append({
            "what": name, "clock": figure.get("clock", "?"), "old": earlier, "new": value,
            "held": held_on_rerun(earlier, value, before.get("low"), before.get("high")),
        })  # fmt: skip

    def key(row: dict) -> tuple:
        return (row["impl"], row["pass"], tuple(row["shape"]), row["dtype"], row.get("clock", "?"))

    before_rows = {key(r): r for r in old.get("benchmark", [])}
    for row in new.get("benchmark", []):
        before = before_rows.get(key(row))
        if not before:
            continue
        impl, pass_, shape, dtype, clock = key(row)
        out.append({
            "what": f"{impl} {pass_} {'x'.join(map(str, shape))} {dtype}", "clock": clock,
            "old": before["ms_median"], "new": row["ms_median"],
            "held": held_on_rerun(before["ms_median"], row["ms_median"], before["ms_p20"],
                                  before["ms_p80"]),
        })  # fmt: skip
    return out


def rerun_summary(rows: list[dict], previous_rows: dict[str, dict]) -> dict[str, dict]:
    """Per clock, how many of the measured figures and benchmark times of ``rows`` (this run)
    held against the record's previous run of the same files (rerun_comparison)."""
    summary: dict[str, dict] = {}
    for row in rows:
        for c in rerun_comparison(previous_rows.get(row["path"]), row):
            counts = summary.setdefault(c["clock"], {"compared": 0, "held": 0})
            counts["compared"] += 1
            counts["held"] += bool(c["held"])
    return dict(sorted(summary.items()))


def rerun_files(rows: list[dict], previous_rows: dict[str, dict]) -> list[str]:
    """The files of ``rows`` that rerun_summary compared: unchanged since the record's previous
    run of them, and passed in both runs."""
    return sorted(r["path"] for r in rows if rerun_comparison(previous_rows.get(r["path"]), r))


def validate_rerun(rerun: object, where: str) -> None:
    ok = isinstance(rerun, dict) and all(
        isinstance(c, dict) and set(c) == {"compared", "held"} and 0 <= c["held"] <= c["compared"]
        for c in rerun.values()
    )
    if not ok:
        raise ValueError(f"{where}: rerun maps each clock to {{compared, held}} counts")


def validate_earlier(entry: dict, where: str) -> None:
    earlier = entry.get("earlier", [])
    if not isinstance(earlier, list) or len(earlier) > EARLIER_RUNS_KEPT:
        raise ValueError(f"{where}: {entry['path']}: earlier is a list of at most "
                         f"{EARLIER_RUNS_KEPT} runs")  # fmt: skip
    for run in earlier:
        if not isinstance(run, dict) or set(run) != {"date", "figures"}:
            raise ValueError(f"{where}: {entry['path']}: an earlier run has date and figures")
        unknown = set(run["figures"]) - set(entry["figures"])
        bad = [k for k, v in run["figures"].items() if not isinstance(v, (int, float))]
        if unknown or bad:
            raise ValueError(
                f"{where}: {entry['path']}: earlier figures not in this run or not numbers: "
                f"{sorted(unknown | set(bad))}"
            )


def times_something(entry: dict) -> bool:
    """Whether a record's row holds a timing: benchmark rows, or a figure that is measured (a
    unit in MEASURED_UNITS) or says whether compile time is in it."""
    if entry.get("benchmark"):
        return True
    return any(
        (f.get("unit") in MEASURED_UNITS or "compile" in f) and f.get("statistic") != "spec"
        for f in entry.get("figures", {}).values()
    )


def validate_record(record: dict, where: str = "record") -> None:
    """Raise ValueError when a record lacks a key the site and the tests rely on."""

    def need(obj: dict, keys: tuple[str, ...], at: str) -> None:
        missing = [k for k in keys if k not in obj]
        if missing:
            raise ValueError(f"{where}: {at} lacks {missing}")

    need(record, ("schema", "lock", "platform", "date", "device", "versions", "snippets"), "record")
    if record["schema"] != RECORD_SCHEMA:
        raise ValueError(f"{where}: schema {record['schema']}, expected {RECORD_SCHEMA}")
    gpu = record["platform"] != CPU
    need(record["device"], ("name", "cc", "driver") if gpu else ("name", "machine"), "device")
    need(record["versions"], ("torch", "triton", "python") + (("cuda",) if gpu else ()), "versions")
    environment = record.get("environment", {})  # optional: records before 2026-12 lack them
    if not isinstance(environment, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in environment.items()
    ):
        raise ValueError(f"{where}: environment maps names to values (strings)")
    compiler = record.get("compiler", {"cxx": "?"})
    if not isinstance(compiler, dict) or not isinstance(compiler.get("cxx"), str):
        raise ValueError(f"{where}: compiler says which C++ compiler the snippets got (cxx)")
    for name, part in record.get("parts", {}).items():  # optional: a run in named parts
        if name not in GPU_PARTS:
            raise ValueError(f"{where}: part {name!r} is not one of {list(GPU_PARTS)}")
        need(part, ("started", "finished", "runner"), f"part {name}")
        for run, what in [(part, f"part {name}")] + [
            (later, f"part {name}, later run") for later in part.get("later", [])
        ]:
            if run is not part:  # files of the part re-run after its whole run
                need(run, ("started", "finished", "runner"), what)
                if "--only" not in run["runner"]:
                    raise ValueError(f"{where}: part {name}: a later run names its files (--only)")
            if "rerun" in run:
                validate_rerun(run["rerun"], f"{where}: {what}")
            files = run.get("rerun_files", [])  # optional: runs before 2026-12-06 lack it
            if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
                raise ValueError(f"{where}: {what}: rerun_files lists the files compared")
            if files and "rerun" not in run:
                raise ValueError(f"{where}: {what}: rerun_files without a rerun summary")
    for entry in record["snippets"]:
        need(
            entry,
            ("path", "sha256", "status", "seconds", "date", "figures", "stdout"),
            f"snippet {entry.get('path')}",
        )
        if entry["status"] not in RUN_STATUSES:
            raise ValueError(
                f"{where}: {entry['path']}: status {entry['status']!r} not in {RUN_STATUSES}"
            )
        for name, figure in entry["figures"].items():
            validate_figure(name, figure)
        for row in entry.get("benchmark", []):
            validate_benchmark_row(row)
        validate_earlier(entry, where)
        if entry["status"] != "passed" and not entry.get("reason"):
            raise ValueError(f"{where}: {entry['path']}: {entry['status']} without a reason")
        if gpu and entry.get("alone") is False and times_something(entry):
            raise ValueError(
                f"{where}: {entry['path']}: a timing measured beside other snippets on the GPU"
            )


# ----------------------------------------------------------------------------- states


@dataclass(frozen=True)
class State:
    """One word of the vocabulary the site, the tests and the audit share."""

    name: str
    icon: str
    verified: bool  # the record speaks for the file as it is now
    blocks_ci: bool  # CI fails while a snippet is in this state
    en: str  # the badge's sentence
    zh: str
    short_en: str = ""  # a table cell's words
    short_zh: str = ""

    def short(self, lang: str) -> str:
        return self.short_zh if lang == "zh" else self.short_en


STATES: dict[str, State] = {
    s.name: s
    for s in (
        State(
            "verified",
            "✓",
            True,
            False,
            "verified on {device} · {versions} · {date}",
            "已在 {device} 上验证 · {versions} · {date}",
            short_en="verified",
            short_zh="已验证",
        ),
        State(
            "changed",
            "!",
            False,
            True,
            "changed since its run on {device} ({date}): not verified",
            "在 {device} 上运行（{date}）之后已修改：未经验证",
            short_en="changed since its run",
            short_zh="运行后已修改",
        ),
        State(
            "pending",
            "…",
            False,
            False,
            "{device} run pending: {reason}",
            "等待在 {device} 上重新运行：{reason}",
            short_en="re-run pending",
            short_zh="待重新运行",
        ),
        State(
            "failed",
            "✗",
            False,
            True,
            "failed on {device} ({date}): {reason}",
            "在 {device} 上失败（{date}）：{reason}",
            short_en="failed",
            short_zh="失败",
        ),
        State(
            "skipped",
            "–",
            False,
            True,
            "skipped on {device} ({date}): {reason}",
            "在 {device} 上被跳过（{date}）：{reason}",
            short_en="skipped by the runner",
            short_zh="被 runner 跳过",
        ),
        State(
            "not-run",
            "?",
            False,
            True,
            "not run on {device} yet",
            "尚未在 {device} 上运行",
            short_en="not run",
            short_zh="未运行",
        ),
        State(
            "no-record",
            "?",
            False,
            True,
            "no {device} record for this lock",
            "本锁定版本没有 {device} 的记录",
            short_en="no record",
            short_zh="没有记录",
        ),
        State(
            "not-here",
            "◇",
            False,
            False,
            "not run on {device}: {reason}",
            "不在 {device} 上运行：{reason}",
            short_en="never runs here",
            short_zh="不在此运行",
        ),
        State(
            "no-gpu",
            "○",
            False,
            False,
            "not verified on a GPU for this lock: {reason}",
            "本锁定版本未经 GPU 验证：{reason}",
            short_en="no GPU for this lock",
            short_zh="本锁定版本无 GPU",
        ),
    )
}


@dataclass(frozen=True)
class SnippetState:
    """What one record of one lock says about one snippet file as it is now."""

    path: str
    platform: str  # a device slug, or "cpu"
    state: State
    reason: Reason | None = None
    record: dict | None = None  # the platform's record, when there is one
    entry: dict | None = None  # the snippet's row in it


def snippet_state(
    needs: SnippetNeeds, lock: Lock, platform: str, record: dict | None
) -> SnippetState:
    """Compare a snippet file with its row in the lock's record for ``platform``."""

    def state(name: str, reason: Reason | None = None) -> SnippetState:
        return SnippetState(needs.path, platform, STATES[name], reason, record, entry)

    entry = None
    if record is not None:
        entry = next((e for e in record["snippets"] if e["path"] == needs.path), None)
    skip = needs.cpu_skip if platform == CPU else needs.gpu_skip
    if skip:
        return state(
            "not-here", Reason(needs.skip_reason(platform), needs.skip_reason(platform, "zh"))
        )
    if platform != CPU and platform not in lock.devices:
        return state("no-gpu", lock.gpu_reason)
    if record is None:
        name, reason = "no-record", None
    elif entry is None:
        name, reason = "not-run", None
    elif entry["sha256"] != snippet_sha256(needs):
        name, reason = "changed", None
    elif entry["status"] == "passed":
        return state("verified")
    else:
        name = entry["status"]
        reason = Reason(entry["reason"], entry["reason"])  # a program's own words: not translated
    if platform != CPU and needs.path in lock.pending:  # knowingly behind: say why, do not fail
        return state("pending", lock.pending[needs.path])
    return state(name, reason)


@dataclass(frozen=True)
class LockStates:
    """Every snippet's state on every platform of one lock, worked out once."""

    lock: Lock
    records: dict[str, dict | None]  # platform -> record
    states: dict[str, dict[str, SnippetState]]  # path -> platform -> state

    def of(self, path: str) -> dict[str, SnippetState]:
        if path not in self.states:
            raise KeyError(f"{path} is not a snippet (snippets/**/*.py)")
        return self.states[path]

    def blocking(self) -> list[SnippetState]:
        return [s for by in self.states.values() for s in by.values() if s.state.blocks_ci]


def lock_states(lock: Lock) -> LockStates:
    records = {
        platform: load_record(lock.id, platform) if platform != ANY_GPU else None
        for platform in lock.platforms
    }
    states = {}
    for path in list_snippets():
        needs = read_snippet_needs(path)
        states[path] = {p: snippet_state(needs, lock, p, r) for p, r in records.items()}
    return LockStates(lock, records, states)


def platform_label(platform: str, record: dict | None, needs: SnippetNeeds | None = None) -> str:
    """How a platform is named on the page: 'NVIDIA H200 (CC 9.0)' or 'CPU (TRITON_INTERPRET=1)'."""
    if platform == CPU:
        if needs is not None and not needs.cpu_interpreter and needs.runs_on_cpu:
            return "CPU"
        return "CPU (TRITON_INTERPRET=1)"
    if record is not None:
        return f"{record['device']['name']} (CC {record['device']['cc']})"
    return KNOWN_DEVICES.get(platform, "GPU")


def state_text(s: SnippetState, lang: str, needs: SnippetNeeds | None = None) -> str:
    """The sentence a badge shows for one state, in ``lang``."""
    record, entry = s.record or {}, s.entry or {}
    versions = record.get("versions", {})
    torch_version = versions.get("torch", "?").split("+")[0]
    return getattr(s.state, "zh" if lang == "zh" else "en").format(
        device=platform_label(s.platform, s.record, needs),
        versions=f"torch {torch_version} · triton {versions.get('triton', '?')}",
        date=entry.get("date") or record.get("date", "?"),
        reason=s.reason(lang) if s.reason else "",
    )


def quote_source(
    states: dict[str, SnippetState], figure: str | None = None, label: str | None = None
) -> SnippetState:
    """Which record a page quotes a figure or a printed line from: a passed GPU row that has it
    first, else the CPU row; for a printed line, a row of the file as it is now (verified)
    before a row of an earlier version (a pending GPU run), so that the page quotes what the
    file prints today where a record shows it. Raises LookupError when no record has it."""
    ordered = [s for p, s in states.items() if p != CPU] + [states[CPU]]
    if label is not None:
        ordered.sort(key=lambda s: not s.state.verified)  # stable: GPU before CPU within each
    for s in ordered:
        entry = s.entry
        if entry is None or entry["status"] != "passed":
            continue
        if figure is not None and figure not in entry["figures"]:
            continue
        if label is not None and not any(line.startswith(label) for line in entry["stdout"]):
            continue
        return s
    path = next(iter(states.values())).path
    what = f"figure {figure!r}" if figure else f"a printed line starting {label!r}"
    raise LookupError(f"no passed record of this lock has {what} for {path}")


def awaits_pending_run(
    lock: Lock,
    states: dict[str, SnippetState],
    figure: str | None = None,
    label: str | None = None,
    pass_: str | None = None,
) -> bool:
    """Whether a page's quote of a file (a figure, a printed line or a benchmark pass) waits for
    the file's pending GPU run: the file is in the lock's [pending] and no passed record of the
    lock has the quote yet. The site shows such a quote as not measured yet; the tests skip it."""
    path = next(iter(states.values())).path
    if path not in lock.pending:
        return False
    if pass_ is not None:
        return not any(
            r["pass"] == pass_
            for p, s in states.items()
            if p != CPU and s.entry and s.entry["status"] == "passed"
            for r in s.entry.get("benchmark", [])
        )
    try:
        quote_source(states, figure=figure, label=label)
    except LookupError:
        return True
    return False


def find_output(entry: dict, label: str) -> str:
    """The line a snippet printed that starts with ``label`` (exactly one must)."""
    lines = [line for line in entry["stdout"] if line.startswith(label)]
    if len(lines) != 1:
        raise LookupError(
            f"{entry['path']}: {len(lines)} printed lines start with {label!r} (need exactly one)"
        )
    return lines[0]
