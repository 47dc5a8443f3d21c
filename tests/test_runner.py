"""The GPU runner's own machinery, without a GPU: a crashing snippet is recorded as failed with
its signal; the C++ compiler the snippets get is one that builds extensions PyTorch can load
(decided with fake compilers: small shell scripts); the record keeps the settings it ran with."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import snippet_records as records
import verify_snippets
from conftest import CURRENT, copy_project

REAL_CXX = shutil.which("g++")
needs_gxx = pytest.mark.skipif(REAL_CXX is None, reason="needs g++ to build the fakes' libraries")

CRASHING = """\
# /// script
# requires-python = ">=3.10"
# dependencies = []
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
import os
import signal

print("loaded the extension", flush=True)
os.kill(os.getpid(), signal.SIGSEGV)  # what a C++ extension built with the wrong compiler did
"""


def test_a_snippet_killed_by_a_signal_is_recorded_as_failed_with_the_signal(tmp_path):
    """The whole runner, as documented, on a copy of the project with a snippet that crashes:
    the record has it failed, naming SIGSEGV; the run exits 1."""
    project = copy_project(tmp_path / "p")
    planted = "snippets/block-programming/planted_crash.py"
    (project / planted).write_text(CRASHING)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "scripts/verify_snippets.py", "--cpu", "--only", "planted_crash",
         "--out-dir", str(out)],
        cwd=project, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    record = json.loads((out / f"{CURRENT.id}.cpu.json").read_text(encoding="utf-8"))
    records.validate_record(record)
    (row,) = [r for r in record["snippets"] if r["path"] == planted]
    assert row["status"] == "failed", row
    assert row["reason"].startswith("killed by SIGSEGV (signal 11, exit -11)"), row["reason"]
    assert row["stdout"] == ["loaded the extension"]
    assert re.search(r"planted_crash\.py: failed .* killed by SIGSEGV", proc.stdout), proc.stdout


def test_exit_reasons_name_the_signal():
    assert verify_snippets.exit_reason(1) == "exit code 1"
    assert verify_snippets.exit_reason(-6) == "killed by SIGABRT (signal 6, exit -6)"
    assert verify_snippets.exit_reason(-9) == "killed by SIGKILL (signal 9, exit -9)"


# ----------------------------------------------------------------------------- the compiler


@needs_gxx
def test_elf_needed_reads_what_readelf_reads(tmp_path):
    library = tmp_path / "probe.so"
    source = tmp_path / "probe.cpp"
    source.write_text(verify_snippets.CXX_PROBE)
    subprocess.run([REAL_CXX, "-shared", "-fPIC", "-o", library, source], check=True)
    needed = verify_snippets.elf_needed(library)
    assert any(n.startswith("libstdc++.so") for n in needed), needed
    if shutil.which("readelf"):
        dynamic = subprocess.run(
            ["readelf", "-d", library], capture_output=True, text=True, check=True
        ).stdout
        assert needed == re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic)
    with pytest.raises(ValueError, match="not an ELF"):
        verify_snippets.elf_needed(source)


def fakes(folder: Path, gxx: str | None, cxx: str | None, clang: str | None) -> dict[str, str]:
    """Shell scripts named g++, c++ and clang++ in ``folder``, each of one kind: "static" wraps
    the real g++ with -static-libstdc++ (as the H200 image's /opt/gcc/bin/g++ does), "dynamic"
    is the real g++, "broken" fails; None: no such compiler. Returns an environment whose PATH
    holds the fakes only (each sets the PATH the real g++ needs for its assembler and linker)."""
    folder.mkdir(exist_ok=True)
    real = f"PATH={os.environ['PATH']} exec {REAL_CXX}"
    bodies = {
        "static": f'{real} -static-libstdc++ "$@"',
        "dynamic": f'{real} "$@"',
        "broken": 'echo "fatal error: no such file" >&2; exit 1',
    }
    for name, kind in {"g++": gxx, "c++": cxx, "clang++": clang}.items():
        if kind:
            (folder / name).write_text(f"#!/bin/sh\n{bodies[kind]}\n")
            (folder / name).chmod(0o755)
    return {"PATH": str(folder)}


@needs_gxx
def test_a_compiler_that_links_libstdcxx_dynamically_is_kept(tmp_path):
    env = fakes(tmp_path / "bin", gxx="static", cxx="dynamic", clang=None)
    changes, info = verify_snippets.choose_cxx(env)  # no CXX: cpp_extension's c++
    assert changes == {} and info["cxx"] == str(tmp_path / "bin" / "c++"), info


@needs_gxx
def test_a_static_libstdcxx_wrapper_is_replaced_by_the_first_that_links_it_dynamically(tmp_path):
    env = fakes(tmp_path / "bin", gxx="static", cxx="broken", clang="dynamic")
    env["CXX"] = str(tmp_path / "bin" / "g++")  # the H200 image's CXX, a static wrapper
    changes, info = verify_snippets.choose_cxx(env)
    clang = str(tmp_path / "bin" / "clang++")
    assert changes == {"CXX": clang}, (changes, info)
    assert info["cxx"] == clang and info["replaced"] == env["CXX"]
    assert "links libstdc++ statically" in info["why"], info


@needs_gxx
def test_a_compiler_later_on_path_is_found_behind_a_wrapper_of_the_same_name(tmp_path):
    """The H200 image: /opt/gcc/bin (a static wrapper g++) before /usr/bin (the system's g++)."""
    env = fakes(tmp_path / "opt", gxx="static", cxx="static", clang=None)
    system = fakes(tmp_path / "usr", gxx="dynamic", cxx=None, clang=None)
    env["PATH"] += os.pathsep + system["PATH"]
    changes, info = verify_snippets.choose_cxx(env)
    assert changes == {"CXX": str(tmp_path / "usr" / "g++")}, info


@needs_gxx
def test_a_missing_cxx_falls_back_to_path(tmp_path):
    env = fakes(tmp_path / "bin", gxx="dynamic", cxx=None, clang=None)
    env["CXX"] = str(tmp_path / "no-such-compiler")
    changes, info = verify_snippets.choose_cxx(env)
    assert changes == {"CXX": str(tmp_path / "bin" / "g++")}
    assert "not found" in info["why"]


@needs_gxx
def test_the_runner_stops_when_no_compiler_links_libstdcxx_dynamically(tmp_path, monkeypatch):
    env = fakes(tmp_path / "bin", gxx="static", cxx="static", clang="broken")
    with pytest.raises(verify_snippets.CompilerError) as caught:
        verify_snippets.choose_cxx(env)
    message = str(caught.value)
    assert "links libstdc++ statically" in message and "could not build" in message, message
    assert "set CXX to a compiler that links libstdc++ dynamically" in message
    # the documented command stops before any snippet runs, with that message, exit 2
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CXX", raising=False)
    assert verify_snippets.main(["--cpu", "--only", "vector_add", "--out-dir", str(tmp_path)]) == 2
    assert not list(tmp_path.glob("*.json")), "no record is written"


def test_the_record_keeps_the_settings_that_change_what_snippets_build_or_run():
    environ = {
        "CXX": "/usr/bin/g++",
        "TORCH_CUDA_ARCH_LIST": "9.0",
        "TRITON_PRINT_AUTOTUNING": "1",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "CUDA_HOME": "/usr/local/cuda",
        "TRITON_CACHE_DIR": "/tmp/x",  # the runner's own, per snippet
        "TORCHINDUCTOR_CACHE_DIR": "/tmp/x/inductor",  # the runner's own, per snippet
        records.REPEATS_ENV: "1",  # never passed on
        "HOME": "/root",
        "PATH": "/usr/bin",
    }
    assert records.recorded_environment(environ) == {
        "CUDA_HOME": "/usr/local/cuda",
        "CXX": "/usr/bin/g++",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "TORCH_CUDA_ARCH_LIST": "9.0",
        "TRITON_PRINT_AUTOTUNING": "1",
    }
    record = json.loads(json.dumps(records.load_record(CURRENT.id, records.CPU)))
    record["environment"] = {"CXX": 1}
    with pytest.raises(ValueError, match="environment"):
        records.validate_record(record)
    record["environment"], record["compiler"] = {}, {"version": "x"}
    with pytest.raises(ValueError, match="compiler"):
        records.validate_record(record)


def test_a_rerun_reports_what_moved_outside_its_spread_and_five_percent(capsys):
    figure = {"value": 10.0, "statistic": "median", "unit": "ms", "low": 9.5, "high": 10.5}
    bench = {"impl": "triton", "pass": "forward", "shape": [4, 8], "dtype": "bf16",
             "clock": "kernel", "ms_median": 1.0, "ms_p20": 0.99, "ms_p80": 1.01}  # fmt: skip
    old = {"path": "snippets/x/y.py", "sha256": "a", "status": "passed",
           "figures": {"t_ms": figure, "n": {"value": 3, "statistic": "count"}},
           "benchmark": [bench]}  # fmt: skip
    held = dict(
        old, figures={"t_ms": dict(figure, value=10.4)}, benchmark=[dict(bench, ms_median=1.04)]
    )
    moved = dict(
        old, figures={"t_ms": dict(figure, value=12.0)}, benchmark=[dict(bench, ms_median=1.2)]
    )
    assert [c["held"] for c in records.rerun_comparison(old, held)] == [True, True]
    assert [c["held"] for c in records.rerun_comparison(old, moved)] == [False, False]
    assert records.rerun_comparison(dict(old, sha256="b"), moved) == []  # another file
    verify_snippets.print_rerun_report([moved], {old["path"]: old})
    out = capsys.readouterr().out
    assert (
        "kernel: 0 of 1 held" in out and "moved: snippets/x/y.py: t_ms (?) 10 -> 12 (+20%)" in out
    )


def test_a_rerun_summary_counts_per_clock_and_is_kept_in_the_part():
    """What a re-run held, per clock, is what the report prints and what the record keeps."""
    bench = {"impl": "triton", "pass": "forward", "shape": [4, 8], "dtype": "bf16",
             "clock": "kernel", "ms_median": 1.0, "ms_p20": 0.99, "ms_p80": 1.01}  # fmt: skip
    old = {"path": "snippets/x/y.py", "sha256": "a", "status": "passed", "figures": {},
           "benchmark": [bench, dict(bench, clock="call"), dict(bench, dtype="fp32")]}  # fmt: skip
    new = dict(old, benchmark=[dict(bench, ms_median=1.5), dict(bench, clock="call"),
                               dict(bench, dtype="fp32", ms_median=1.02)])  # fmt: skip
    summary = records.rerun_summary([new], {old["path"]: old})
    assert summary == {"call": {"compared": 1, "held": 1}, "kernel": {"compared": 2, "held": 1}}
    assert records.rerun_summary([dict(new, sha256="b")], {old["path"]: old}) == {}
    records.validate_rerun(summary, "test")
    with pytest.raises(ValueError):
        records.validate_rerun({"kernel": {"compared": 1, "held": 2}}, "test")


def test_a_later_run_of_a_few_files_keeps_the_parts_whole_run_on_record():
    """A part's files re-run with --only after its whole run are listed under the part's
    "later" runs, each naming its files; the whole run's span stays as it was."""
    record = records.load_record("torch-2.11.0-triton-3.6.0", "nvidia-h200")
    whole = dict(record["parts"]["cookbook"], later=[])
    later = {"started": "2026-12-04T00:00:00+00:00", "finished": "2026-12-04T00:01:00+00:00",
             "runner": "scripts/verify_snippets.py --part cookbook --only rmsnorm/"}  # fmt: skip
    ok = dict(record, parts={**record["parts"], "cookbook": dict(whole, later=[later])})
    records.validate_record(ok)
    unnamed = dict(later, runner="scripts/verify_snippets.py --part cookbook")
    bad = dict(record, parts={**record["parts"], "cookbook": dict(whole, later=[unnamed])})
    with pytest.raises(ValueError, match="names its files"):
        records.validate_record(bad)


def test_a_rerun_names_the_files_it_compared():
    """A part's re-run counts only the files unchanged since the record's previous run, and the
    record says which: a changed file (another sha256) or a failed run is left out."""
    bench = {"impl": "triton", "pass": "forward", "shape": [4, 8], "dtype": "bf16",
             "clock": "kernel", "ms_median": 1.0, "ms_p20": 0.99, "ms_p80": 1.01}  # fmt: skip
    old = {p: {"path": p, "sha256": "a", "status": "passed", "figures": {}, "benchmark": [bench]}
           for p in ("snippets/a/a.py", "snippets/b/b.py", "snippets/c/c.py")}  # fmt: skip
    new = [old["snippets/a/a.py"], dict(old["snippets/b/b.py"], sha256="b"),
           dict(old["snippets/c/c.py"], status="failed")]  # fmt: skip
    assert records.rerun_files(new, old) == ["snippets/a/a.py"]
    record = records.load_record("torch-2.11.0-triton-3.6.0", "nvidia-h200")
    rerun = {"kernel": {"compared": 1, "held": 1}, "call": {"compared": 1, "held": 0}}
    part = dict(record["parts"]["cookbook"], rerun=rerun, rerun_files=["snippets/a/a.py"])
    records.validate_record(dict(record, parts={**record["parts"], "cookbook": part}))
    part.pop("rerun", None)
    with pytest.raises(ValueError, match="without a rerun summary"):
        records.validate_record(dict(record, parts={**record["parts"], "cookbook": part}))


def test_run_change_tokens_compare_each_figure_with_the_run_before(monkeypatch):
    """largest_change, change_range (every matching figure), crossed_one and crossed_cells
    (the figures of one shape: the lowest over all shapes crossed too, and is not counted), and
    the since_last_run sentences built on them, read each figure beside the row's first earlier
    run."""
    import datetime as dt
    import types

    import site_hooks

    gpu_lock = next(lock for lock in records.all_locks() if lock.devices)
    state = site_hooks.BuildState(gpu_lock, records.lock_states(gpu_lock), dt.date.today())
    monkeypatch.setattr(site_hooks, "STATE", state)

    figures = {
        "forward_bfloat16_16x32_liger_over_fn_call": (1.02, 0.97),  # crossed, -4.9 %
        "backward_float32_16x32_liger_over_fn_call": (1.10, 1.21),  # +10 %
        "forward_backward_bfloat16_8x64_liger_over_fn_call": (0.95, 1.01),  # crossed
        "forward_bfloat16_liger_over_fn_call": (1.02, 0.97),  # the lowest over shapes: crossed
        "host_us_eager": (20.0, 30.0),  # +50 %
    }
    before = {k: old for k, (old, _) in figures.items()}
    entry = {"figures": {k: {"value": new} for k, (_, new) in figures.items()},
             "earlier": [{"date": "d", "figures": before}]}  # fmt: skip
    monkeypatch.setattr(
        site_hooks, "_source_entry", lambda path: types.SimpleNamespace(entry=entry)
    )
    cell = "*_liger_over_fn_call"
    assert site_hooks.largest_change("en", "x.py", cell) == "10 %"
    assert site_hooks.change_range("zh", "x.py", cell) == "−5% 到 +10%"
    assert site_hooks.change_range("en", "x.py", "host_us_*") == "+50 % to +50 %"
    assert site_hooks.crossed_one("x.py", cell) == "2"
    assert site_hooks.crossed_cells("en", "x.py", cell) == (
        "bfloat16 forward at 16 × 32, bfloat16 forward and backward at 8 × 64"
    )
    assert site_hooks.crossed_cells("zh", "x.py geglu.py", cell).startswith(
        "x bfloat16 前向 16 × 32、"
    )
    assert site_hooks.since_last_run("en", None, "x.py", cell, "per-call") == (
        "Since the run before this one, the per-call cells moved by 10 % or less, and 2 of them "
        "crossed 1.0 (bfloat16 forward at 16 × 32, bfloat16 forward and backward at 8 × 64)."
    )
    assert site_hooks.since_last_run("zh", None, "x.py", "backward_*", "per-call") == (
        "与上一次运行相比，每次调用表的各格的变动不超过 10%，没有一个跨过 1.0。"
    )
    with pytest.raises(LookupError, match="RUN_SUBJECTS"):
        site_hooks.since_last_run("en", None, "x.py", cell, "the cells")
    with pytest.raises(LookupError):
        site_hooks.crossed_one("x.py", "*_of_copy")
    entry["figures"]["triton_of_cublas_float16_64x64x64"] = {"value": 1.01}
    before["triton_of_cublas_float16_64x64x64"] = 0.98
    assert site_hooks.since_last_run("en", None, "x.py", "triton_of_cublas_*", "matmul-cublas") == (
        "Since the run before this one, the ratios of cuBLAS's time over a Triton kernel's moved "
        "by 4 % or less, and 1 of them crossed 1.0."
    ).replace(
        "'", "&#x27;"
    )  # a figure crossed_cells cannot name by pass and dtype: the count alone
    assert site_hooks.range_since_last_run("en", None, "x.py", "host_us_*", "recipes-host") == (
        "Since the run before this one, the four recipes&#x27; host-cost figures moved by +50 % to "
        "+50 %."
    )
    entry["earlier"] = []  # a changed file: its history starts again
    assert site_hooks.range_since_last_run(
        "zh", None, "x.py y.py", "host_us_*", "recipes-host"
    ) == (
        "这些文件自上次改动以来，记录里还没有更早的运行，四个配方的主机端耗时还没有先前的值可比。"
    )
    assert site_hooks.since_last_run("en", None, "x.py", cell, "per-call") == (
        "The record keeps no earlier run of this file since it last changed, so the per-call "
        "cells have no earlier values to compare yet."
    )
    assert site_hooks.since_last_run("zh", None, "x.py y.py", cell, "recipes-per-call") == (
        "这些文件自上次改动以来，记录里还没有更早的运行，四个配方每次调用表的各格还没有先前的值可比。"
    )
    entry["earlier"] = [{"date": "d", "figures": before}]
    cpu_only = next(lock for lock in records.all_locks() if not lock.devices)
    monkeypatch.setattr(site_hooks, "STATE", site_hooks.BuildState(cpu_only, None, dt.date.today()))
    with pytest.raises(site_hooks.Unmeasured):
        site_hooks.crossed_one("x.py", cell)
    token = f'{{{{ since_last_run("x.py y.py", "{cell}", "per-call") }}}}'  # as a page writes it
    shown = site_hooks.expand_tokens("{{ measured }}" + token + "{{ end_measured }}", "en", None)
    assert shown == (
        '<span class="record-unmeasured" data-snippet="x.py">'
        "This comparison is not measured for this lock (no GPU run).</span>"
    )


def test_order_tokens_compare_two_implementations_cell_by_cell(monkeypatch):
    """faster_at lists the cells where one implementation's median is not the shorter, and
    stops the build when that is half of them or more; gap_within is the largest gap either
    way. Both read the clock asked for (and the pass, after a colon) and nothing else."""
    import types

    import site_hooks

    def row(impl, pass_, dtype, shape, ms, clock):
        return {"impl": impl, "pass": pass_, "dtype": dtype, "shape": list(shape),
                "clock": clock, "ms_median": ms}  # fmt: skip

    times = {  # (pass, dtype, shape): (a, b) call medians; kernel times the other way round
        ("forward", "bfloat16", (16, 32)): (1.0, 2.0),
        ("backward", "bfloat16", (16, 32)): (3.0, 2.0),  # a longer
        ("forward", "float32", (8, 64)): (1.0, 1.03),
        ("backward", "float32", (8, 64)): (1.0, 1.5),
        ("forward", "float32", (4, 4)): (1.0, 1.0),  # a tie is not shorter
    }
    rows = []
    for (pass_, dtype, shape), (a, b) in times.items():
        cell = (pass_, dtype, shape)
        rows += [row("a", *cell, a, "call"), row("b", *cell, b, "call"),
                 row("a", *cell, b, "kernel"), row("b", *cell, a, "kernel"),
                 row("c", *cell, a, "call")]  # fmt: skip
    monkeypatch.setattr(site_hooks, "_benchmark_source",
                        lambda path: types.SimpleNamespace(entry={"benchmark": rows}))  # fmt: skip
    faster, gap = site_hooks.faster_at, site_hooks.gap_within
    assert faster("en", None, "x.py", "call", "a", "b") == (
        "at every shape but the bfloat16 backward at 16 × 32 and the float32 forward at 4 × 4"
    )
    assert faster("zh", None, "x.py", "call", "a", "b") == (
        "除 bfloat16 反向 16 × 32、float32 前向 4 × 4 外，在每个形状上"
    )
    assert faster("en", None, "x.py", "call:forward", "a", "b") == (
        "at every shape but the float32 at 4 × 4"
    )
    assert faster("en", None, "x.py", "call:forward", "c", "b") == (
        "at every shape but the float32 at 4 × 4"
    )
    with pytest.raises(LookupError, match="at 1 of 2 cells"):
        faster("en", None, "x.py", "call:backward", "b", "a")
    with pytest.raises(LookupError, match="turn the sentence around"):
        faster("en", None, "x.py", "call", "b", "a")  # shorter at 2 of 5 cells
    with pytest.raises(LookupError, match="turn the sentence around"):
        faster("en", None, "x.py", "kernel", "a", "b")  # the kernel rows: a is never shorter
    assert faster("en", None, "x.py", "kernel:forward", "b", "a") == (
        "at every shape but the float32 at 4 × 4"
    )
    assert faster("en", None, "x.py", "call::float32", "a", "b") == (
        "at every shape but the forward at 4 × 4"
    )
    assert faster("zh", None, "x.py", "call::float32", "a", "b") == "除 前向 4 × 4 外，在每个形状上"
    assert gap("en", None, "x.py", "call::float32", "a", "b") == "34 %"  # 1.0 over 1.5
    cells = site_hooks.gap_cells
    assert cells("en", None, "x.py", "call", "a", "b") == "within 50 % of each other at every shape"
    with pytest.raises(LookupError, match="no call::float64 cell"):
        cells("en", None, "x.py", "call::float64", "a", "b")
    assert gap("en", None, "x.py", "call", "a", "b") == "50 %"  # 3.0 over 2.0
    # several peers: the shortest of their times counts; d is shorter than a at 8 × 64 only
    d = {(16, 32): 1.5, (8, 64): 0.99, (4, 4): 1.5}
    for (pass_, dtype, shape), _ in times.items():
        if pass_ == "forward":
            rows.append(row("d", pass_, dtype, shape, d[shape], "call"))
    assert faster("en", None, "x.py", "call:forward", "a", "b") == (
        "at every shape but the float32 at 4 × 4"
    )
    with pytest.raises(LookupError, match="at 1 of 3 cells"):
        faster("en", None, "x.py", "call:forward", "a", "b d")
    assert site_hooks.faster_everywhere("en", None, "x.py", "call:backward:float32", "a", "b") == ""
    with pytest.raises(LookupError, match="at the float32 at 4 × 4"):
        site_hooks.faster_everywhere("en", None, "x.py", "call:forward", "a", "b")

    def unmeasured(path):
        raise site_hooks.Unmeasured()

    expand = site_hooks.expand_tokens
    order = '{{ faster_at("x.py", "call:backward:float32", "a", "b") }}'
    span = "Before. {{ measured }}A is shorter " + order + ".{{ end_measured }} After."
    assert expand(span, "en", None) == "Before. A is shorter at every shape. After."
    with pytest.raises(site_hooks.PluginError, match="stands outside"):
        expand("A is shorter " + order + ".", "en", None)  # on every lock, measured or not
    with pytest.raises(site_hooks.PluginError, match="never closed"):
        expand("{{ measured }}A is shorter " + order + ".", "en", None)
    with monkeypatch.context() as patch:  # a lock with no GPU run: nothing to check
        patch.setattr(site_hooks, "_benchmark_source", unmeasured)
        with pytest.raises(site_hooks.Unmeasured):
            site_hooks.faster_everywhere("en", None, "x.py", "call:forward", "a", "b")
        # the span's words make no sense without the phrase: one sentence stands for the span
        for lang, words in (
            ("en", "This comparison is not measured for this lock (no GPU run)."),
            ("zh", "这项比较本锁定版本未测（没有 GPU 运行）。"),
        ):
            shown = expand(span, lang, None)
            assert shown == (
                f'Before. <span class="record-unmeasured" data-snippet="x.py">{words}</span> After.'
            )
        # a figure alone is marked where it stands, without parentheses
        assert ">not measured for this lock (no GPU run)</span>" in site_hooks.unmeasured_html(
            "en", "x.py"
        )
    span = site_hooks.ratio_range
    assert span("en", None, "x.py", "call", "a", "b") == "from 50 % shorter to 50 % longer than"
    assert span("en", None, "x.py", "call:forward", "a", "b") == "from 0 % to 50 % shorter than"
    assert span("zh", None, "x.py", "call", "a", "b") == "短 50% 到长 50%"
    assert span("en", None, "x.py", "kernel:forward", "a", "b") == "from 0 % to 100 % longer than"
    assert gap("zh", None, "x.py", "call:forward", "a", "b") == "50%"  # 1.0 over 2.0
    assert gap("en", None, "x.py", "call:forward", "a", "c") == "0 %"
    with pytest.raises(LookupError, match="no call cell times both"):
        gap("en", None, "x.py", "call", "a", "nobody")
    with pytest.raises(LookupError, match="the clock is one of"):
        faster("en", None, "x.py", "calls", "a", "b")


def test_gap_cells_names_the_cells_that_stand_out(monkeypatch):
    """gap_cells gives the gap of every cell but one or two that stand out (over 5 % and over
    twice the next gap), which it names with their own gaps; a gap that does not stand out is
    folded into "within"."""
    import types

    import site_hooks

    def rows(gaps):
        out = []
        for i, g in enumerate(gaps):
            cell = {"pass": "forward", "dtype": "bfloat16", "shape": [16, 2**i], "clock": "kernel"}
            out += [dict(cell, impl="a", ms_median=1.0 + g), dict(cell, impl="b", ms_median=1.0)]
        return out

    def render(gaps, lang="en"):
        entry = {"benchmark": rows(gaps)}
        monkeypatch.setattr(site_hooks, "_benchmark_source",
                            lambda path: types.SimpleNamespace(entry=entry))  # fmt: skip
        return site_hooks.gap_cells(lang, None, "x.py", "kernel", "a", "b")

    assert render([0.01, 0.015, -0.27, 0.005]) == (
        "within 2 % of each other at every shape but the bfloat16 forward at 16 × 4 (27 %)"
    )
    assert render([0.01, 0.015, -0.27, 0.005], "zh") == (
        "除 bfloat16 前向 16 × 4（27%）外，在每个形状上相差不超过 2%"
    )
    assert render([0.08, 0.015, 0.29, 0.005, 0.01]) == (
        "within 2 % of each other at every shape but the bfloat16 forward at 16 × 4 (29 %) and "
        "the bfloat16 forward at 16 × 1 (8 %)"
    )
    assert render([0.04, 0.015, 0.07, 0.005]) == "within 7 % of each other at every shape"
    assert render([0.01, 0.2, 0.3]) == "within 30 % of each other at every shape"  # too few cells


def test_holds_renders_nothing_and_stops_the_build_where_an_order_is_wrong(monkeypatch):
    """holds checks a typed order of figures ("a < b < c") against the latest run: nothing to
    see where it holds, an error naming the pair where it does not; on a lock whose figures are
    not measured, its measured span says so in place of its sentence."""
    import types

    import site_hooks

    values = {"a": 1.0, "b": 2.0, "c": 2.0}
    entry = {"figures": {k: {"value": v} for k, v in values.items()}}
    monkeypatch.setattr(site_hooks, "_source_entry",
                        lambda path, need_figure: types.SimpleNamespace(entry=entry))  # fmt: skip
    assert site_hooks.holds("en", None, "x.py", "a < b") == ""
    with pytest.raises(LookupError, match=r"b \(2.0\) is not below c \(2.0\)"):
        site_hooks.holds("en", None, "x.py", "a < b < c")
    with pytest.raises(LookupError, match=r"b \(2.0\) is not below a \(1.0\)"):
        site_hooks.holds("en", None, "x.py", "a < b<a")  # spaces optional; the wrong pair named
    assert site_hooks.holds("en", None, "x.py", "a < b, c") == ""  # below each of a group
    assert site_hooks.holds("en", None, "x.py", "0.5 < a < 1.5 < b, c < 2.5") == ""  # numbers
    with pytest.raises(LookupError, match=r"a \(1.0\) is not below 1 \(1.0\)"):
        site_hooks.holds("en", None, "x.py", "a < 1")
    with pytest.raises(LookupError, match=r"b \(2.0\) is not below c"):
        site_hooks.holds("en", None, "x.py", "a, b < c")
    with pytest.raises(LookupError, match="two or more groups"):
        site_hooks.holds("en", None, "x.py", "a")
    with pytest.raises(LookupError, match="two or more groups"):
        site_hooks.holds("en", None, "x.py", "a < b,")
    with pytest.raises(KeyError):
        site_hooks.holds("en", None, "x.py", "a < nobody")

    def unmeasured(path, need_figure):
        raise site_hooks.Unmeasured()

    monkeypatch.setattr(site_hooks, "_source_entry", unmeasured)
    with pytest.raises(site_hooks.Unmeasured):  # nothing to check: its measured span says so
        site_hooks.holds("en", None, "x.py", "b < a")
    span = 'Lower{{ holds("x.py", "b < a") }}.'
    with pytest.raises(site_hooks.PluginError, match="stands outside"):
        site_hooks.expand_tokens(span, "en", None)
    shown = site_hooks.expand_tokens("{{ measured }}" + span + "{{ end_measured }}", "en", None)
    assert "Lower" not in shown and "This comparison is not measured" in shown


def test_rerun_held_says_what_a_part_run_compared_or_that_it_compared_nothing(monkeypatch):
    """rerun_held reads the part's rerun summary; a part that ran with no file unchanged since
    an earlier run says so (the first run after every file of it changed); a part that never
    ran on the GPU record of a GPU lock stops the build."""
    import datetime as dt

    import site_hooks

    gpu_lock = next(lock for lock in records.all_locks() if lock.devices)
    state = site_hooks.BuildState(gpu_lock, records.lock_states(gpu_lock), dt.date.today())
    monkeypatch.setattr(site_hooks, "STATE", state)
    runs = {"cookbook": {"started": "2026-12-06T10:11:21+00:00",
                         "rerun": {"kernel": {"compared": 4, "held": 3}},
                         "rerun_files": ["snippets/a/a.py"]},
            "matmul": {"started": "2026-12-07T09:00:00+00:00"}}  # fmt: skip
    monkeypatch.setattr(site_hooks, "gpu_part_runs",
                        lambda part: iter([("nvidia-h200", runs.get(part, {}))]))  # fmt: skip
    assert site_hooks.rerun_held("en", "cookbook") == (
        "in the nvidia-h200 run of the cookbook part on 2026-12-06, against the record&#x27;s "
        "run before it of the files unchanged since (a.py), kernel time 3 of 4 held (75%)"
    )
    assert site_hooks.rerun_held("en", "matmul") == (
        "in the nvidia-h200 run of the matmul part on 2026-12-07, no file had run before in the "
        "same version, so nothing was compared yet"
    )
    assert site_hooks.rerun_held("zh", "matmul").startswith("2026-12-07 在 nvidia-h200 上运行")
    with pytest.raises(LookupError, match="re-run summary of part 'chapters'"):
        site_hooks.rerun_held("en", "chapters")


def test_each_snippet_run_starts_with_empty_triton_and_inductor_caches():
    """Nothing compiled or autotuned in an earlier run (Triton kernels, Inductor's graphs and
    autotuning results) is reused: both caches live in the run's own empty folder."""
    needs = records.read_snippet_needs("snippets/matmul/matmul.py")
    env = verify_snippets.snippet_env(needs, cpu=False, cache_dir="/tmp/run-1")
    assert env["TRITON_CACHE_DIR"] == "/tmp/run-1"
    assert env["TORCHINDUCTOR_CACHE_DIR"].startswith("/tmp/run-1/")
