"""Benchmark rows in the records: complete, self-consistent, and the source of every ratio a
cookbook page quotes (each figure of a benchmark snippet is recomputed here from its rows)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
import snippet_records as records
from conftest import LOCKS

ROW = {
    "impl": "triton",
    "pass": "forward",
    "shape": [4096, 14336],
    "dtype": "bfloat16",
    "ms_median": 0.1,
    "ms_p20": 0.09,
    "ms_p80": 0.11,
    "repeats": 50,
    "bytes": 1_000_000,
    "gbps": 10.0,
}


def benchmark_entries() -> list[tuple[str, str, dict, dict]]:
    """(lock id, platform, record, entry) of every record row that holds benchmark rows."""
    found = []
    for lock in LOCKS:
        for platform in lock.record_platforms:
            record = records.load_record(lock.id, platform)
            for entry in (record or {}).get("snippets", []):
                if entry.get("benchmark"):
                    found.append((lock.id, platform, record, entry))
    return found


ENTRIES = benchmark_entries()


def test_the_cookbook_has_benchmark_records():
    paths = {entry["path"] for _, _, _, entry in ENTRIES}
    for recipe in ("fused-geglu", "fused-softmax", "rmsnorm", "cross-entropy", "matmul"):
        assert any(p.startswith(f"snippets/{recipe}/") for p in paths), recipe


@pytest.mark.parametrize("entry", [e for *_, e in ENTRIES], ids=lambda e: e["path"])
def test_a_records_rows_each_time_one_thing(entry):
    """No two rows of a file's record share implementation, pass, shape, dtype and clock: a
    figure or a re-run comparison that looks a row up by them finds the one it means."""
    keys = [
        (r["impl"], r["pass"], tuple(r["shape"]), r["dtype"], r.get("clock"))
        for r in entry["benchmark"]
    ]
    assert len(set(keys)) == len(keys), sorted(k for k in keys if keys.count(k) > 1)


def test_a_complete_row_is_accepted():
    records.validate_benchmark_row(ROW)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"impl": "handwritten"}, "impl"),
        ({"shape": "4096x14336"}, "shape"),
        ({"repeats": 2}, "repeats"),
        ({"ms_p20": 0.2}, "ms_p20 <= ms_median"),
        ({"gbps": 20.0}, "is not bytes/ms_median"),
        ({"tflops": 1.0}, "exactly one of"),
    ],
)
def test_a_row_that_does_not_add_up_is_refused(change, message):
    with pytest.raises(ValueError, match=message):
        records.validate_benchmark_row({**ROW, **change})


def test_a_row_without_its_median_is_refused():
    row = {k: v for k, v in ROW.items() if k != "ms_median"}
    with pytest.raises(ValueError, match="lacks"):
        records.validate_benchmark_row(row)


def test_benchmark_lines_are_kept_as_rows_not_as_printed_output():
    out = 'hello\nbenchmark: {"x": 1}\nfigures: {}\nbye'
    assert records.output_lines(out) == ["hello", "bye"]
    with pytest.raises(ValueError):
        records.parse_benchmark(out)  # a row without the keys a page needs


HBM_GBPS = 4800.0  # the H200 datasheet, as snippets/block-programming/vector_add_bandwidth.py


def expected_single_clock_figures(rows: list[dict]) -> dict[str, float]:
    """The ratios of records made before rows carried a clock (one do_bench time per row)."""
    out: dict[str, float] = {}
    at = {(r["impl"], r["pass"], tuple(r["shape"]), r["dtype"]): r for r in rows}
    ms = lambda impl, pass_, shape, dtype: at[impl, pass_, shape, dtype]["ms_median"]  # noqa: E731
    passes = {r["pass"] for r in rows}
    if {"forward", "backward"} <= passes:  # the memory-bound recipes
        largest = max((tuple(r["shape"]) for r in rows), key=math.prod)
        dtype = rows[0]["dtype"]
        for pass_ in ("forward", "backward"):
            t = ms("triton", pass_, largest, dtype)
            for other in ("compile", "eager"):
                out[f"{pass_}_{other}_over_triton"] = round(ms(other, pass_, largest, dtype) / t, 2)
            gbps = at["triton", pass_, largest, dtype]["gbps"]
            out[f"{pass_}_triton_of_hbm"] = round(gbps / HBM_GBPS, 3)
        out["copy_of_hbm"] = round(at["copy", "forward", largest, dtype]["gbps"] / HBM_GBPS, 3)
    if "matmul" in passes:
        for (impl, pass_, shape, dtype), r in at.items():
            if pass_ == "matmul" and impl in ("triton", "triton_tma"):
                name = f"{impl}_of_cublas_{dtype}_{'x'.join(map(str, shape))}"
                out[name] = round(ms("cublas", pass_, shape, dtype) / r["ms_median"], 3)
        fused = [r for r in rows if r["pass"] == "linear_gelu"]
        largest = max((tuple(r["shape"]) for r in fused), key=math.prod)
        dtype = fused[0]["dtype"]
        t = ms("triton", "linear_gelu", largest, dtype)
        for other in ("compile", "eager"):
            out[f"fused_{other}_over_triton"] = round(
                ms(other, "linear_gelu", largest, dtype) / t, 2
            )
    return out


TARGET_BYTES = 32 * 2**20  # issue 18: the shapes that move at least 32 MiB are judged
PEERS = ("eager", "compile", "liger")


def floor3(x: float) -> float:
    return math.floor(x * 1000) / 1000


def expected_figures(rows: list[dict]) -> dict[str, float]:
    """Every ratio the recipes print, recomputed from their kernel-time rows (not with the
    recipes' code): rounded down to three decimals, each per shape and the lowest over shapes."""
    if not any("clock" in r for r in rows):
        return expected_single_clock_figures(rows)
    at = {(r["impl"], r["pass"], tuple(r["shape"]), r["dtype"]): r["ms_median"]
          for r in rows if r["clock"] == "kernel"}  # fmt: skip
    out: dict[str, float] = {}
    lowest: dict[tuple, list[float]] = {}

    def put(pass_: str, dtype: str, shape: tuple, kind: str, value: float) -> None:
        out[f"{pass_}_{dtype}_{'x'.join(map(str, shape))}_{kind}"] = value
        lowest.setdefault((pass_, dtype, kind), []).append(value)

    for row in rows:
        impl, pass_, shape, dtype = row["impl"], row["pass"], tuple(row["shape"]), row["dtype"]
        if row["clock"] != "kernel" or impl != "triton":
            continue
        t = at[impl, pass_, shape, dtype]
        if "bytes" in row and row["bytes"] >= TARGET_BYTES:  # a memory-bound recipe
            best = min(at[p, pass_, shape, dtype] for p in PEERS if (p, pass_, shape, dtype) in at)
            copy = at["copy", pass_, shape, dtype]
            put(pass_, dtype, shape, "best_over_triton", floor3(best / t))
            put(pass_, dtype, shape, "triton_of_copy", floor3(copy / t))
            put(pass_, dtype, shape, "copy_over_best", floor3(best / copy))
            one_block = dtype in ("float32", "float64") and shape[1] <= 32768
            if ("triton_two_pass", pass_, shape, dtype) in at and one_block:
                # cross-entropy's one pass on a row held in registers, read once: against a copy
                # of the bytes it moves, twice the forward's copy (2-byte rows are read twice)
                name = f"{pass_}_{dtype}_{'x'.join(map(str, shape))}_one_pass_of_copy"
                out[name] = floor3(2 * at["copy", "forward", shape, dtype] / t)
        elif "flops" in row and pass_ != "matmul":  # the fused operator
            for other in ("eager", "compile", "compile_max", "cublas"):
                put(
                    pass_,
                    dtype,
                    shape,
                    f"{other}_over_triton",
                    floor3(at[other, pass_, shape, dtype] / t),
                )
            cublas = at["cublas", pass_, shape, dtype]
            put(
                pass_,
                dtype,
                shape,
                "eager_over_cublas",
                floor3(at["eager", pass_, shape, dtype] / cublas),
            )
    for (impl, pass_, shape, dtype), t in at.items():
        if pass_ == "matmul" and impl != "cublas":
            name = f"{impl}_of_cublas_{dtype}_{'x'.join(map(str, shape))}"
            out[name] = floor3(at["cublas", pass_, shape, dtype] / t)
    calls = {(r["impl"], r["pass"], tuple(r["shape"]), r["dtype"]): r["ms_median"]
             for r in rows if r["clock"] == "call"}  # fmt: skip
    for row in rows:  # per call: Liger's call over the autograd.Function route's
        impl, pass_, shape, dtype = row["impl"], row["pass"], tuple(row["shape"]), row["dtype"]
        if row["clock"] == "call" and impl == "triton_fn":  # at every shape
            ratio = floor3(calls["liger", pass_, shape, dtype] / calls[impl, pass_, shape, dtype])
            put(pass_, dtype, shape, "liger_over_fn_call", ratio)
    for (pass_, dtype, kind), values in lowest.items():
        out[f"{pass_}_{dtype}_{kind}"] = min(values)
    return out


# The files that time a recipe's parts, or the variants it replaced, beside the recipe.
PART_FILES = ("snippets/rmsnorm/backward_stages.py", "snippets/fused-softmax/variants.py")


def expected_part_figures(path: str, rows: list[dict]) -> dict[str, float]:
    """The figures of PART_FILES, recomputed from their kernel-time rows (not with their code)."""
    at = {(r["impl"], r["pass"], tuple(r["shape"]), r["dtype"]): r["ms_median"] for r in rows}
    out: dict[str, float] = {}
    for (impl, pass_, shape, dtype), t in at.items():
        copy = at["copy", pass_, shape, dtype]
        if path == PART_FILES[0] and impl == "triton":  # the whole backward, as rmsnorm.py's
            tag = f"{pass_}_{dtype}_{'x'.join(map(str, shape))}"
            first = at["triton_first_kernel", pass_, shape, dtype]
            torch_sum = at["triton_torch_sum", pass_, shape, dtype]
            out[f"{tag}_first_kernel_of_copy"] = floor3(copy / first)
            out[f"{tag}_torch_sum_over_kernel"] = floor3(torch_sum / t)
            out[f"{tag}_first_kernel_of_whole"] = floor3(first / t)
            out[f"{tag}_first_kernel_of_whole_torch_sum"] = floor3(first / torch_sum)
        elif path == PART_FILES[1] and impl == "triton_plain_loop":
            out[f"{pass_}_{dtype}_plain_over_triton"] = floor3(
                t / at["triton", pass_, shape, dtype]
            )
        elif path == PART_FILES[1] and pass_ == "forward" and impl in ("triton", "triton_per_row"):
            out[f"{pass_}_{dtype}_{impl.removeprefix('triton_')}_of_copy"] = floor3(copy / t)
        elif path == PART_FILES[1] and impl == "triton_loop_4096x8":  # the looped plans' first
            fastest = min(
                ms for (i, p, s, d), ms in at.items()
                if i.startswith("triton_loop_") and (p, s, d) == (pass_, shape, dtype)
            )  # fmt: skip
            if shape == (4096, 32768):  # where softmax.py takes one block: the persistent plan
                tag = f"{pass_}_{dtype}_{shape[1]}"
                out[f"{tag}_fastest_loop_over_triton"] = floor3(
                    fastest / at["triton", pass_, shape, dtype]
                )
                out[f"{tag}_fastest_loop_of_copy"] = floor3(copy / fastest)
                continue
            size = {"bfloat16": 2, "float32": 4}[dtype]
            block, warps = softmax_loop_plans()[pass_, size]
            out[f"{pass_}_{dtype}_fastest_plan_over_plan"] = floor3(
                fastest / at[f"triton_loop_{block}x{warps}", pass_, shape, dtype]
            )
            out[f"{pass_}_{dtype}_fastest_plan_of_copy"] = floor3(copy / fastest)
    return out


def softmax_loop_plans() -> dict:
    """softmax.py's LOOP_PLAN, read from its source (not imported)."""
    import ast

    source = (records.SNIPPETS_DIR / "fused-softmax" / "softmax.py").read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "LOOP_PLAN":
            return ast.literal_eval(node.value)
    raise AssertionError("softmax.py has no LOOP_PLAN")


# Rows such as each part file times (impl, pass, shape, dtype), each given made-up kernel times.
MADE_UP_ROWS = {
    PART_FILES[0]: [
        (impl, "backward", shape, "bfloat16")
        for shape in ((4096, 4096), (16384, 8192))
        for impl in ("copy", "triton", "triton_first_kernel", "triton_torch_sum")
    ],
    PART_FILES[1]: [
        *((impl, pass_, (2048, 65536), dtype)
          for dtype in ("bfloat16", "float32") for pass_ in ("forward", "backward")
          for impl in (("triton", "triton_plain_loop") if pass_ == "backward" else ())
          + ("triton_loop_4096x8", "triton_loop_8192x16", "triton_loop_8192x32",
             "triton_loop_16384x16", "triton_loop_16384x32", "triton_loop_32768x32", "copy")),
        *((impl, "forward", (4096, 32768), "bfloat16")
          for impl in ("triton", "triton_per_row", "triton_loop_4096x8", "triton_loop_8192x16",
                       "triton_loop_8192x32", "triton_loop_16384x16", "triton_loop_16384x32",
                       "triton_loop_32768x32", "copy")),
    ],
}  # fmt: skip
MADE_UP_RUN = """
import json, random, sys, torch
sys.path.insert(0, sys.argv[1])
module = __import__(sys.argv[2])
harness = module.rmsnorm if hasattr(module, "rmsnorm") else module.softmax
rng, rows = random.Random(0), []
for impl, pass_, shape, dtype in json.loads(sys.argv[3]):
    times = [rng.uniform(0.5, 2.0) for _ in range(10)]
    rows.append(harness.timed_row(impl, pass_, shape, getattr(torch, dtype), "kernel", times,
                                  "bytes", 3 * shape[0] * shape[1] * 2))
figures = module.part_figures(rows)  # each part file's figures, from all its rows
for row in rows:
    print("benchmark: " + json.dumps(row))
print("figures: " + json.dumps(figures))
"""


@pytest.mark.parametrize("path", PART_FILES)
def test_a_part_files_figures_are_what_its_rows_give(path):
    """The part files' own figure code, fed made-up rows as their GPU run times them: every row
    and figure passes the runner's checks (a statistic or an impl the record does not know fails
    a GPU run), and each figure is the value this test recomputes from the rows, which the test
    above then holds their GPU records to."""
    import json
    import subprocess
    import sys

    folder = records.SNIPPETS_DIR / Path(path).parent.name
    source = (folder / Path(path).name).read_text(encoding="utf-8")
    for impl in {impl for impl, *_ in MADE_UP_ROWS[path]}:  # the names its GPU run gives its rows
        plan = records.BENCHMARK_PLAN_IMPL.fullmatch(impl)  # triton_loop_<BLOCK>x<warps>: PLANS
        named = f"({impl[12:].replace('x', ', ')})" if plan else f'"{impl}"'
        assert named in source, f"{path} times no {impl!r}: MADE_UP_ROWS is out of date"
    made_up = [
        [impl, pass_, list(shape), dtype] for impl, pass_, shape, dtype in MADE_UP_ROWS[path]
    ]
    assert len({json.dumps(row) for row in made_up}) == len(made_up), "a row made up twice"
    run = subprocess.run(
        [sys.executable, "-c", MADE_UP_RUN, str(folder), Path(path).stem, json.dumps(made_up)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "TRITON_INTERPRET": "1"},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    rows = records.parse_benchmark(run.stdout)
    figures = records.parse_figures(run.stdout)
    assert len(rows) == len(made_up)
    got = {name: figure["value"] for name, figure in figures.items()}
    assert got == expected_part_figures(path, rows)
    assert len(got) == {PART_FILES[0]: 8, PART_FILES[1]: 14}[path]


def test_the_recipes_time_with_one_harness():
    """The timing section each recipe shows is the same code in every recipe file, so a page's
    description of it (the cookbook's method) holds for all of them."""
    recipes = ["fused-geglu/geglu.py", "fused-softmax/softmax.py", "rmsnorm/rmsnorm.py",
               "cross-entropy/cross_entropy.py", "matmul/matmul.py"]  # fmt: skip
    sections = set()
    for recipe in recipes:
        text = (records.SNIPPETS_DIR / recipe).read_text(encoding="utf-8")
        start, end = "# --8<-- [start:harness]", "# --8<-- [end:harness]"
        assert start in text and end in text, recipe
        sections.add(text[text.index(start) : text.index(end)])
    assert len(sections) == 1, "the harness sections differ between the recipes"


@pytest.mark.parametrize(
    "lock_id, platform, record, entry",
    ENTRIES,
    ids=[f"{e[0]}-{e[1]}-{e[3]['path']}" for e in ENTRIES],
)
def test_every_figure_of_a_benchmark_recomputes_from_its_rows(lock_id, platform, record, entry):
    for row in entry["benchmark"]:
        records.validate_benchmark_row(row)  # each rate is its amount over its median
    if entry["path"] in PART_FILES:
        expected = expected_part_figures(entry["path"], entry["benchmark"])
    else:
        expected = expected_figures(entry["benchmark"])
    got = {
        name: figure["value"]
        for name, figure in entry["figures"].items()
        if not name.startswith("host_us_")  # wall-clock figures, not computed from the rows
    }
    assert got == expected, {k: (got.get(k), expected.get(k)) for k in got.keys() | expected}
