"""Every snippet keeps the contract; every snippet CI may run passes on this CPU under each lock;
what a page quotes of a snippet's output is what the snippet prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import snippet_records as records
from conftest import CURRENT, LOCKS, REPO, markdown_pages, page_source_of

SNIPPETS = records.list_snippets()
# Timing snippets that repeat whole fresh processes read how many from the environment; the
# suite's runs set 1 (tests/conftest.py), so their figures there hold one measurement.
REPEATED = [p for p in SNIPPETS if records.REPEATS_ENV in (REPO / p).read_text(encoding="utf-8")]


def test_there_are_snippets():
    assert len(SNIPPETS) >= 5, SNIPPETS


@pytest.mark.parametrize("path", SNIPPETS)
def test_snippet_declares_its_needs(path):
    needs = records.read_snippet_needs(path)
    assert needs.runs_on_gpu or needs.runs_on_cpu
    for lock in LOCKS:  # every lock pins every package a snippet names
        assert lock.pins(needs.dependencies)


def test_every_data_file_belongs_to_a_snippet():
    """A non-Python file under snippets/ is declared by a snippet (files = [...]), so a change
    to it makes that snippet's record stale."""
    declared = {f for p in SNIPPETS for f in records.read_snippet_needs(p).files}
    data = {
        records.relative_path(p)
        for p in records.SNIPPETS_DIR.rglob("*")
        if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts
    }
    assert data <= declared, f"not declared by any snippet: {sorted(data - declared)}"


def test_a_declared_data_file_is_part_of_the_snippets_hash(tmp_path):
    needs = records.read_snippet_needs("snippets/block-programming/vector_add.py")
    with_file = records.SnippetNeeds(**{**needs.__dict__, "files": ("README.md",)})
    assert records.snippet_sha256(with_file) != records.snippet_sha256(needs)


@pytest.mark.parametrize("path", SNIPPETS)
def test_snippet_folder_is_named_after_its_page(path):
    """snippets/<page>/x.py serves docs/<lang>/<page>/index.md (or <page>.md), in both languages."""
    folder = path.split("/")[1]
    pages = [p for p in (f"{folder}/index.md", f"{folder}.md") if p in markdown_pages("en")]
    assert pages, f"{path}: no page docs/en/{folder}/index.md or docs/en/{folder}.md"
    for lang in ("en", "zh"):
        assert path in page_source_of(lang, pages[0]).snippet_files, (
            f"{path} is not shown on docs/{lang}/{pages[0]}, the page its folder names"
        )


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
@pytest.mark.parametrize("path", SNIPPETS)
def test_snippet_runs_on_cpu(path, lock, cpu_runs):
    """Run the file in its own process, as a reader would, on the CPU, with the lock's versions."""
    needs = records.read_snippet_needs(path)
    if needs.cpu_skip:
        pytest.skip(f"not on a CPU: {needs.cpu_skip}")
    proc = cpu_runs.run(lock, path)
    if needs.is_starter:  # an exercise's starter: it must fail, with its own message
        wrong = records.exercise_outcome(needs, proc.returncode, proc.stdout, proc.stderr)
        assert wrong is None, f"{path} on CPU ({lock.id}): {wrong}\n{proc.stdout}\n{proc.stderr}"
        return
    assert proc.returncode == 0, f"{path} failed on CPU ({lock.id}):\n{proc.stdout}\n{proc.stderr}"
    once = path in REPEATED  # measured once here: the runner's records need MIN_REPEATS
    records.parse_figures(proc.stdout, 1 if once else records.MIN_REPEATS)  # as the runner reads


def quoted_outputs() -> list[tuple[str, str]]:
    """(snippet, label) of every output a page quotes, in either language."""
    found = set()
    for lang in ("en", "zh"):
        for page in markdown_pages(lang):
            for token in page_source_of(lang, page).tokens:
                if token.name == "output":
                    found.add(token.args)
                elif token.name == "output_block":  # its first line; the block as a whole is
                    found.add((token.args[0], token.args[1]))  # checked against the record
                    # in tests/test_site.py (its last label need not be unique)
    return sorted(found)


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
@pytest.mark.parametrize("path, label", quoted_outputs())
def test_quoted_output_is_what_the_snippet_prints(path, label, lock, cpu_runs):
    """The line a page shows comes from a record; on a CPU, the snippet prints that line today."""
    states = records.lock_states(lock).of(path)
    needs = records.read_snippet_needs(path)
    try:
        source = records.quote_source(states, label=label)
    except LookupError:
        if path in lock.pending:
            pytest.skip("a line its pending GPU run will print: the page says so")
        if lock.devices or not needs.runs_on_gpu:
            raise
        pytest.skip(f"printed only on a GPU, and no GPU verifies {lock.id}: the page says so")
    quoted = records.find_output(source.entry, label)
    assert source.state.verified or path in lock.pending, (
        f"{path}: the quoted record is {source.state.name}, and the file is not pending"
    )  # a pending file's quotes come from its last run, and the page says so
    cpu_entry = states[records.CPU].entry
    printed_on_cpu = cpu_entry is not None and any(
        line.startswith(label) for line in cpu_entry["stdout"]
    )
    if needs.cpu_skip:
        pytest.skip(f"not on a CPU ({needs.cpu_skip}): the GPU record is the only source")
    proc = cpu_runs.run(lock, path)
    printed = [line.rstrip() for line in proc.stdout.splitlines() if line.startswith(label)]
    if source.platform != records.CPU and not printed_on_cpu:  # a line only a GPU run prints
        assert printed == [], f"{path} prints {printed} on a CPU, but its CPU record does not"
        return
    assert printed == [quoted], (
        f"{path} on {lock.id}: the page quotes {quoted!r} (from the {source.platform} record), "
        f"the snippet prints {printed!r} on this CPU"
    )


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
def test_cpu_record_matches_the_files(lock):
    """The committed CPU record speaks for every snippet file as it is now."""
    states = records.lock_states(lock)
    assert states.records[records.CPU] is not None, f"locks/{lock.id}.cpu.json is missing"
    stale = [
        f"{s.path}: {s.state.name}"
        for by in states.states.values()
        for p, s in by.items()
        if p == records.CPU and s.state.blocks_ci
    ]
    assert not stale, (
        f"the CPU record of {lock.id} is behind: {stale}. Run `make records-cpu` and commit "
        f"locks/{lock.id}.cpu.json"
    )


@pytest.mark.parametrize(
    "snippet, correct, off_by_one",
    [
        ("vector_add.py", "mask = offsets < n_elements", "mask = offsets <= n_elements"),
        ("transpose_2d.py", "(offs_m[:, None] < M)", "(offs_m[:, None] <= M)"),
    ],
)
def test_a_write_past_the_end_is_caught_by_the_snippets_own_check(
    tmp_path, snippet, correct, off_by_one
):
    """An off-by-one mask writes one element too many: the guard around the output sees it.
    (A wrong result, in every kernel and claim snippet: tests/test_mutations.py.)"""
    source = (REPO / "snippets/block-programming" / snippet).read_text()
    assert correct in source
    proc = run_interpreted(tmp_path, source.replace(correct, off_by_one))
    assert proc.returncode != 0
    assert "wrote outside" in proc.stderr, proc.stderr[-2000:]


def run_interpreted(tmp_path, source: str) -> subprocess.CompletedProcess:
    script = tmp_path / "snippet.py"
    script.write_text(source)
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""}
    return subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600
    )


# ----------------------------------------------------------------------------- the contract

HEADER = """\
# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton"]
#
# [tool.snippet]
{body}
# ///
print("hello")
"""


def needs_of(body: str, header: str = HEADER) -> records.SnippetNeeds:
    text = header.format(body="\n".join("# " + line for line in body.strip().splitlines()))
    return records.parse_snippet_needs(text, "snippets/x.py")


def test_contract_reads_gpu_and_interpreter():
    needs = needs_of('gpu = { min-cc = "8.0" }\ncpu = { interpreter = true }')
    assert (needs.gpu_min_cc, needs.gpu_skip, needs.cpu_interpreter, needs.cpu_skip) == (
        "8.0",
        None,
        True,
        None,
    )
    assert needs.dependencies == ("torch", "triton")
    assert not needs.gpu_timing
    timed = needs_of('gpu = { min-cc = "8.0", timing = true }\ncpu = { interpreter = true }')
    assert timed.gpu_timing


def test_contract_reads_skip_reasons_in_both_languages():
    needs = needs_of(
        'gpu = { skip = "interpreter claim", skip-zh = "解释器断言" }\n'
        "cpu = { interpreter = false }"
    )
    assert needs.gpu_skip == "interpreter claim" and not needs.runs_on_gpu
    assert needs.skip_reason("nvidia-h200", "zh") == "解释器断言"
    assert needs.skip_reason("nvidia-h200", "en") == "interpreter claim"
    assert needs.runs_on_cpu and not needs.cpu_interpreter


@pytest.mark.parametrize(
    "body, message",
    [
        ("cpu = { interpreter = true }", "must say 'gpu"),
        ('gpu = { min-cc = "8" }\ncpu = { interpreter = true }', "min-cc"),
        ('gpu = { min-cc = "8.0" }\ncpu = { skip = "", skip-zh = "x" }', "non-empty reason"),
        ('gpu = { min-cc = "8.0" }\ncpu = { skip = "why" }', "skip-zh"),
        (
            'gpu = { skip = "a", skip-zh = "甲" }\ncpu = { skip = "b", skip-zh = "乙" }',
            "must run somewhere",
        ),
        ('gpu = { min-cc = "8.0" }\ncpu = { interpreter = true }\ncolour = 1', "unknown"),
        ('gpu = { min-cc = "8.0", skip = "x" }\ncpu = { interpreter = true }', "nothing else"),
        ('gpu = { min-cc = "8.0", timing = 1 }\ncpu = { interpreter = true }', "true or false"),
    ],
)
def test_contract_rejects_malformed_needs(body, message):
    with pytest.raises(records.SnippetContractError, match=message):
        needs_of(body)


def test_contract_rejects_pinned_dependencies():
    header = HEADER.replace('["torch", "triton"]', '["torch==2.11.0"]')
    with pytest.raises(records.SnippetContractError, match="without versions"):
        needs_of('gpu = { min-cc = "8.0" }\ncpu = { interpreter = true }', header)


def test_contract_needs_exactly_one_block():
    with pytest.raises(records.SnippetContractError, match="exactly one"):
        records.parse_snippet_needs('print("no metadata")\n', "snippets/x.py")


def test_the_current_lock_runs_in_this_python():
    import torch
    import triton

    assert torch.__version__.split("+")[0] == CURRENT.torch
    assert triton.__version__ == CURRENT.triton


@pytest.mark.parametrize("path", SNIPPETS)
def test_a_snippet_that_times_something_on_the_gpu_declares_it(path):
    """The GPU runner runs snippets that time nothing several at once: one whose GPU record
    holds a timing (benchmark rows, a measured figure) must say `timing = true`, so that it
    gets the GPU to itself."""
    needs = records.read_snippet_needs(path)
    for lock in LOCKS:
        for platform in lock.devices:
            record = records.load_record(lock.id, platform) or {"snippets": []}
            row = next((e for e in record["snippets"] if e["path"] == path), None)
            if row and row["status"] == "passed" and records.times_something(row):
                assert needs.gpu_timing, (
                    f"{path} times something on {platform} ({lock.id}): declare "
                    "gpu = { ..., timing = true }"
                )
                assert row.get("alone", True), f"{path}: its timing ran beside other snippets"


@pytest.mark.parametrize("path", SNIPPETS)
def test_a_snippet_prints_the_reserved_prefixes_only_before_json(path):
    """`figures: ` and `benchmark: ` start the structured lines the runner parses as JSON: a
    human line that starts the same way (say "benchmark: all checks passed") would fail the run
    on the GPU, where a CPU-skipped snippet is first parsed."""
    not_json = re.compile(
        r"""print\(\s*f?(["'])(?:figures|benchmark): (?!\{json\.dumps\(|\1 \+ json\.dumps\()"""
    )
    found = [m.group(0) for m in not_json.finditer((REPO / path).read_text())]
    assert not found, f"{path}: {found} not followed by JSON"


TIMED = """\
import json
print("figures: " + json.dumps({"t": {"value": 1.0, "unit": "ms", "statistic": "median",
    "spread": "min-max", "low": 0.9, "high": 1.1, "repeats": 3, "op": "x", "compile": "excluded"}}))
"""


@pytest.mark.parametrize("beside, status", [(0, "passed"), (3, "failed")])
def test_the_gpu_runner_refuses_a_timing_measured_beside_other_snippets(tmp_path, beside, status):
    import verify_snippets

    snippet = tmp_path / "timed.py"
    snippet.write_text(TIMED)
    needs = records.SnippetNeeds(
        path=str(snippet), gpu_min_cc="8.0", gpu_skip=None, cpu_interpreter=False, cpu_skip=None
    )
    row = verify_snippets.run_snippet(needs, cpu=False, device_cc="9.0", beside=beside)
    assert (row["status"], row["alone"]) == (status, beside == 0), row
    if status == "failed":
        assert "timing = true" in row["reason"]
        row["status"] = "passed"  # a record that claims it passed is refused too
    record = {
        "schema": records.RECORD_SCHEMA, "lock": CURRENT.id, "platform": "nvidia-h200",
        "date": "2026-12-01", "device": {"name": "H200", "cc": "9.0", "driver": "1"},
        "versions": {"torch": "2", "triton": "3", "python": "3", "cuda": "13"}, "snippets": [row],
    }  # fmt: skip
    if beside:
        with pytest.raises(ValueError, match="beside other snippets"):
            records.validate_record(record)
    else:
        records.validate_record(record)


def test_the_runner_compiles_bytecode_once_where_the_install_has_none(tmp_path, monkeypatch):
    import compileall
    import importlib
    import shutil

    import verify_snippets

    package = tmp_path / "no_bytecode_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    env = verify_snippets.bytecode_cache_env({}, "no_bytecode_pkg")
    prefix = Path(env["PYTHONPYCACHEPREFIX"])
    try:
        # a process given it writes the bytecode into the run's folder, not beside the source
        child = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        child.update(env, PYTHONPATH=str(tmp_path))
        subprocess.run([sys.executable, "-c", "import no_bytecode_pkg"], env=child, check=True)
        assert list(prefix.rglob("__init__*.pyc")), "no bytecode in the run's folder"
        assert not (package / "__pycache__").exists()
    finally:
        shutil.rmtree(prefix)
    # installed with its bytecode (as pip installs), or a prefix already chosen: left alone
    assert verify_snippets.bytecode_cache_env({"PYTHONPYCACHEPREFIX": "x"}, "no_bytecode_pkg") == {}
    compileall.compile_dir(package, quiet=1)
    assert verify_snippets.bytecode_cache_env({}, "no_bytecode_pkg") == {}


def test_the_runner_keeps_what_the_earlier_run_of_an_unchanged_file_measured(tmp_path, monkeypatch):
    """...and writes the compiler the snippets got and the settings they ran with."""
    import json
    import shutil

    import verify_snippets

    path = "snippets/autotune/inplace_autotune.py"  # figures on a CPU, in a few seconds
    record = records.load_record(CURRENT.id, records.CPU)
    before = next(r for r in record["snippets"] if r["path"] == path)
    assert before["sha256"] == records.snippet_sha256(records.read_snippet_needs(path))
    cxx = os.environ.get("CXX") or shutil.which("c++")
    monkeypatch.setenv("CXX", cxx)  # as given by hand on the H200 of 2026-12-02
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    assert verify_snippets.main(["--cpu", "--only", path, "--out-dir", str(tmp_path)]) == 0
    written = json.loads((tmp_path / records.record_path(CURRENT.id, records.CPU).name).read_text())
    row = next(r for r in written["snippets"] if r["path"] == path)
    values = {k: f["value"] for k, f in before["figures"].items()}
    assert row["earlier"][0] == {"date": before["date"], "figures": values}
    assert row["earlier"][1:] == before.get("earlier", [])[: records.EARLIER_RUNS_KEPT - 1]
    assert written["compiler"]["cxx"] == written["environment"]["CXX"] == os.environ["CXX"]
    assert written["environment"]["TORCH_CUDA_ARCH_LIST"] == "9.0"


def test_a_snippet_that_reads_the_repeat_count_is_a_timing_snippet():
    """Only a snippet declared to time something gets the suite's count (tests/conftest.py),
    and the verification page says what CI sets, in both languages."""
    assert REPEATED, f"no snippet reads {records.REPEATS_ENV}"
    for path in REPEATED:
        assert records.read_snippet_needs(path).gpu_timing, f"{path} is not declared timing"
    for lang in ("en", "zh"):
        page = (REPO / "docs" / lang / "verification.md").read_text(encoding="utf-8")
        assert f"`{records.REPEATS_ENV}=1`" in page, lang


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
@pytest.mark.parametrize("path", REPEATED)
def test_the_suite_measures_a_timing_snippet_once_and_its_records_use_the_default(
    path, lock, cpu_runs
):
    """The suite's run measured each figure once; the CPU record, which the runner made, as
    often as the file says by default (the runner does not pass the count on)."""
    needs = records.read_snippet_needs(path)
    if needs.cpu_skip:
        pytest.skip(f"not on a CPU: {needs.cpu_skip}")
    proc = cpu_runs.run(lock, path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    measured = {
        n: f["repeats"] for n, f in records.parse_figures(proc.stdout, 1).items() if "repeats" in f
    }
    assert measured and set(measured.values()) == {1}, measured
    default = re.search(rf'{records.REPEATS_ENV}", "(\d+)"', (REPO / path).read_text()).group(1)
    row = next(
        r for r in records.load_record(lock.id, records.CPU)["snippets"] if r["path"] == path
    )
    recorded = {n: f["repeats"] for n, f in row["figures"].items() if "repeats" in f}
    assert recorded.keys() == measured.keys()
    assert int(default) >= records.MIN_REPEATS
    assert set(recorded.values()) == {int(default)}, recorded


def test_the_runner_does_not_pass_the_repeat_count_on(monkeypatch):
    import verify_snippets

    monkeypatch.setenv(records.REPEATS_ENV, "1")
    needs = records.read_snippet_needs(REPEATED[0])
    for cpu in (True, False):
        assert records.REPEATS_ENV not in verify_snippets.snippet_env(needs, cpu, "/tmp/cache")
