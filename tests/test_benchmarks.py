"""Benchmark rows in the records: complete, self-consistent, and the source of every ratio a
cookbook page quotes (each figure of a benchmark snippet is recomputed here from its rows)."""

from __future__ import annotations

import math

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
    expected = expected_figures(entry["benchmark"])
    got = {
        name: figure["value"]
        for name, figure in entry["figures"].items()
        if not name.startswith("host_us_")  # wall-clock figures, not computed from the rows
    }
    assert got == expected, {k: (got.get(k), expected.get(k)) for k in got.keys() | expected}
