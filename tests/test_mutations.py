"""Each kernel snippet's and each claim snippet's own check can fail: one small, realistic
mutation per file (a kernel that computes the wrong thing; a claim whose asserted behaviour is
flipped) is applied to a copy, and the copy must exit non-zero with the file's own message, not
pass, crash, or fail in the mutated line itself (a NameError is the mutation's fault, not a check).

The copies run on this CPU, the way CI runs each file (TRITON_INTERPRET=1 where the file says so),
under the current lock only, in the pool of tests/conftest.py's CPU runs (queued at collection,
after those runs), so they overlap the builds and the browser test. A file that CI does not run
on a CPU, or whose CPU run is too costly to repeat (a C++ build, several fresh processes), is
listed in NOT_MUTATED with the reason. When a file changes so that its mutation no longer
applies, the test says so: update MUTATIONS.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import snippet_records as records
from conftest import (
    BACKGROUND_STARTS,
    CPU_RUN_TIMEOUT_FACTOR,
    CPU_RUNS,
    CURRENT,
    REPO,
    WAITS_FOR_THE_POOL,
    environ,
    run_counting_cpu,
)


@dataclass(frozen=True)
class Mutation:
    old: str  # text that occurs exactly once in the file
    new: str  # what it becomes
    expect: str  # a regular expression the failing run's output must match: the file's own check


WRONG = r"Mismatched elements"  # torch.testing.assert_close's own message
ASSERT = r"AssertionError"  # a bare assert of the file (its line is in the traceback)

MUTATIONS: dict[str, Mutation] = {
    # ------------------------------------------------------------------ kernels: a wrong result
    "snippets/acceptance/gradients.py": Mutation(
        "tl.store(gb_ptr + o, g * a * s, mask=mask)",
        "tl.store(gb_ptr + o, g * a, mask=mask)",
        rf"{WRONG}|GradcheckError",
    ),
    "snippets/acceptance/silu_mul.py": Mutation(
        "out = a * tl.where(a >= 0, 1.0, e) / (1 + e) * b",
        "out = a * tl.where(a >= 0, 1.0, e) / (1 + e) * b * 1.001",
        WRONG,
    ),
    "snippets/acceptance/test_silu_mul.py": Mutation(
        "out = a * tl.where(a >= 0, 1.0, e) / (1 + e) * b",
        "out = a * tl.where(a >= 0, 1.0, e) / (1 + e + 1e-3) * b",
        rf"{WRONG}|failed",
    ),
    "snippets/autotune/autotune_basics.py": Mutation(
        "tl.store(out_ptr + offsets, x + y, mask=mask)",
        "tl.store(out_ptr + offsets, x * y, mask=mask)",
        WRONG,
    ),
    "snippets/autotune/inplace_autotune.py": Mutation(
        "tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)",
        "tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 2, mask=mask)",
        ASSERT,
    ),
    "snippets/block-programming/offsets_int64.py": Mutation(
        "    tl.store(out_ptr + offsets, x + y, mask=mask)",
        "    tl.store(out_ptr + offsets, x + y + 1, mask=mask)",
        r"wrong sums",
    ),
    "snippets/block-programming/program_ids.py": Mutation(
        "tl.store(out_ptr + offsets, pid, mask=offsets < n_elements)",
        "tl.store(out_ptr + offsets, pid + 1, mask=offsets < n_elements)",
        r"BLOCK_SIZE=\d+: ",
    ),
    "snippets/block-programming/row_max.py": Mutation(
        'tl.where(has_nan, float("nan"), tl.max(x, axis=0))',
        'tl.where(has_nan, float("nan"), tl.min(x, axis=0))',
        ASSERT,
    ),
    "snippets/block-programming/transpose_2d.py": Mutation(
        "out_ptr + offs_n[None, :] * stride_on + offs_m[:, None] * stride_om",
        "out_ptr + offs_n[None, :] * stride_om + offs_m[:, None] * stride_on",
        ASSERT,
    ),
    "snippets/block-programming/vector_add.py": Mutation(
        "tl.store(out_ptr + offsets, x + y, mask=mask)",
        "tl.store(out_ptr + offsets, x - y, mask=mask)",
        WRONG,
    ),
    "snippets/compatibility/doctor.py": Mutation(
        "return have >= want and have[: len(want) - 1] == want[:-1]",
        "return have >= want",  # ~= without its upper bound
        ASSERT,
    ),
    "snippets/debugging/breakpoint_pdb.py": Mutation(
        "tl.store(out_ptr + offsets, x * 2, mask=mask)",
        "tl.store(out_ptr + offsets, x * 3, mask=mask)",
        WRONG,
    ),
    "snippets/debugging/print_block.py": Mutation(
        "tl.store(out_ptr + offsets, x * scale, mask=mask)",
        "tl.store(out_ptr + offsets, x * scale * scale, mask=mask)",
        WRONG,
    ),
    "snippets/debugging/shrink_failing_case.py": Mutation(
        "min(triton.next_power_of_2(x.numel()), 1024)",
        "min(triton.next_power_of_2(x.numel()), 2048)",
        ASSERT,
    ),
    "snippets/fused-geglu/geglu.py": Mutation(
        "(d * g * s).to(dup_ptr.dtype.element_ty)",
        "(d * s).to(dup_ptr.dtype.element_ty)",
        rf"{WRONG}|GradcheckError",
    ),
    "snippets/fused-softmax/softmax.py": Mutation(
        "    y = e * (1.0 / tl.sum(e, axis=0))\n",
        "    y = e * (1.0 / (tl.sum(e, axis=0) + 1e-3))\n",
        WRONG,
    ),
    "snippets/id-card/envelope_dispatch.py": Mutation(
        "out = a * tl.where(a >= 0, 1.0, e) / (1 + e) * b",
        "out = a * tl.where(a >= 0, 1.0, e) / (1 + e) * (b + 1e-3)",
        WRONG,
    ),
    "snippets/inference-server/python_backend_model.py": Mutation(
        "tl.load(x_ptr + offsets, mask=mask) + 1.0, mask=mask)",
        "tl.load(x_ptr + offsets, mask=mask) + 2.0, mask=mask)",
        rf"{WRONG}|not equal|{ASSERT}",
    ),
    "snippets/matmul/matmul.py": Mutation(
        "        acc = tl.dot(a, b, acc)  # (4)!\n",
        "        acc = tl.dot(a, b, acc) * 1.01  # (4)!\n",
        WRONG,
    ),
    "snippets/pitfalls/missing_mask.py": Mutation(
        "mask = offsets < n_elements  # (2)!",
        "mask = offsets <= n_elements  # (2)!",
        ASSERT,
    ),
    "snippets/cross-entropy/cross_entropy.py": Mutation(
        "    lse = m + tl.log(s)\n    in_range",
        "    lse = m + tl.log(s) + 1e-3\n    in_range",
        WRONG,
    ),
    "snippets/rmsnorm/rmsnorm.py": Mutation(
        "(x * rstd * w).to(y_ptr.dtype.element_ty)",
        "(x * rstd).to(y_ptr.dtype.element_ty)",
        WRONG,
    ),
    "snippets/rmsnorm/backward_stages.py": Mutation(
        "dy, x, w, rstd, dx, partial, m, n",
        "x, dy, w, rstd, dx, partial, m, n",
        r"the stages differ from rmsnorm.py's backward",
    ),
    "snippets/fused-softmax/variants.py": Mutation(
        "dot += dy.to(acc_dtype) * y.to(acc_dtype)",
        "dot += dy.to(acc_dtype)",
        r"the plain loop differs from softmax.py's backward",
    ),
    "snippets/torch-compile/export.py": Mutation(
        "return (x.float() * torch.sigmoid(y.float())).to(x.dtype).contiguous()",
        "return (x.float() * torch.sigmoid(x.float())).to(x.dtype).contiguous()",
        WRONG,
    ),
    "snippets/torch-compile/graph_breaks.py": Mutation(
        "return (x.float() * torch.sigmoid(y.float())).to(x.dtype).contiguous()",
        "return (y.float() * torch.sigmoid(x.float())).to(x.dtype).contiguous()",
        WRONG,
    ),
    "snippets/triton-op/mutating_op.py": Mutation(
        "out.copy_(x.to(c) * torch.sigmoid(y.to(c)))",
        "out.copy_(x.to(c) * torch.sigmoid(-y.to(c)))",
        WRONG,
    ),
    "snippets/triton-op/raw_kernel.py": Mutation(
        "tl.store(out_ptr + offsets, x * tl.sigmoid(y), mask=mask)",
        "tl.store(out_ptr + offsets, y * tl.sigmoid(x), mask=mask)",
        WRONG,
    ),
    "snippets/triton-op/sigmoid_mul_op.py": Mutation(
        "out = x.to(c) * torch.sigmoid(y.to(c))  # (2)!",
        "out = x.to(c) * torch.sigmoid(y.to(c) + 0.01)  # (2)!",
        WRONG,
    ),
    "snippets/when-to-write/matmul_cublas.py": Mutation(
        "tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)",
        "tl.store(c_ptrs, (acc * 1.05).to(c_ptr.dtype.element_ty), mask=mask)",
        WRONG,
    ),
    # ------------------------------------------------------- claims: the asserted behaviour flipped
    "snippets/acceptance/claim_assert_close_defaults.py": Mutation(
        "assert _DTYPE_PRECISIONS[torch.float16] == (1e-3, 1e-5)",
        "assert _DTYPE_PRECISIONS[torch.float16] == (1e-2, 1e-5)",
        ASSERT,
    ),
    "snippets/acceptance/claim_do_bench_defaults.py": Mutation(
        'defaults["return_mode"] == "mean"',
        'defaults["return_mode"] == "median"',
        ASSERT,
    ),
    "snippets/acceptance/claim_do_bench_events.py": Mutation(
        "assert order == sorted(order), steps",
        "assert order == sorted(order)[::-1], steps",
        ASSERT,
    ),
    "snippets/acceptance/claim_sigmoid_underflow.py": Mutation(
        "naive[1] == 0 and naive[2] == 0",
        "naive[1] != 0 and naive[2] == 0",
        ASSERT,
    ),
    "snippets/acceptance/claim_tf32_defaults.py": Mutation(
        'assert precision == "tf32"',
        'assert precision == "ieee"',
        ASSERT,
    ),
    "snippets/autotune/claim_autotune_signature.py": Mutation(
        'assert message == "warmup, rep, and use_cuda_graph parameters are deprecated"',
        'assert message == "warmup and rep parameters are deprecated"',
        ASSERT,
    ),
    "snippets/autotune/claim_cache_key.py": Mutation(
        "assert len(timed) == 3 * len(CONFIGS)\n",
        "assert len(timed) == 2 * len(CONFIGS)\n",
        ASSERT,
    ),
    "snippets/autotune/claim_compile_accepts.py": Mutation(
        "assert accepted == list(ARGUMENTS)[:7], accepted",
        "assert accepted == list(ARGUMENTS)[:6], accepted",
        ASSERT,
    ),
    "snippets/autotune/claim_compile_accepts_since.py": Mutation(
        'SINCE = {"reset_to_zero": (2, 6), "restore_value": (2, 6), "prune_configs_by": (2, 7)}',
        'SINCE = {"reset_to_zero": (2, 6), "restore_value": (2, 6), "prune_configs_by": (2, 99)}',
        ASSERT,
    ),
    "snippets/autotune/claim_do_bench_defaults.py": Mutation(
        "assert len(every_run) == 100",
        "assert len(every_run) == 10",
        ASSERT,
    ),
    "snippets/autotune/claim_failed_config.py": Mutation(
        'assert not hasattr(add_one, "configs_timings") or len(getattr(add_one, "cache", {})) == 0',
        'assert len(getattr(add_one, "cache", {})) > 0',
        ASSERT,
    ),
    "snippets/autotune/claim_heuristics_order.py": Mutation(
        "assert str(exc) == \"'BLOCK_SIZE'\"",
        "assert str(exc) == \"'BLOCK'\"",
        ASSERT,
    ),
    "snippets/autotune/claim_hooks.py": Mutation(
        "assert total.item() > 5 + N, total",
        "assert total.item() == 5 + N, total",
        ASSERT,
    ),
    "snippets/autotune/claim_interpreter_autotune.py": Mutation(
        'assert str(exc) == "0 active drivers ([]). There should only be one."',
        'assert str(exc) == "1 active driver."',
        ASSERT,
    ),
    "snippets/autotune/claim_prune_configs.py": Mutation(
        'best.kwargs["BLOCK_SIZE"] == 8192',
        'best.kwargs["BLOCK_SIZE"] == 4096',
        ASSERT,
    ),
    "snippets/block-programming/claim_grid_arguments.py": Mutation(
        '["BLOCK_SIZE", "n_elements", "out_ptr", "x_ptr"]',
        '["n_elements", "out_ptr", "x_ptr"]',
        ASSERT,
    ),
    "snippets/block-programming/claim_grid_limits.py": Mutation(
        'assert launch((1, 3)) == "ran 3 programs"',
        'assert launch((1, 3)) == "ran 1 programs"',
        ASSERT,
    ),
    "snippets/block-programming/claim_interpreter_bf16.py": Mutation(
        "assert wrong > 0.5,",
        "assert wrong < 0.5,",
        r"bfloat16 now works under the interpreter",
    ),
    "snippets/block-programming/claim_interpreter_compile.py": Mutation(
        "except torch._dynamo.exc.Unsupported as exc:",
        "except torch._dynamo.exc.Unsupported as exc:\n    raise AssertionError("
        '"torch.compile now traces interpreted kernels: update the pages") from exc\n'
        "except KeyError as exc:",
        r"torch.compile now traces interpreted kernels",
    ),
    "snippets/block-programming/claim_interpreter_oob.py": Mutation(
        "assert out[5:].tolist() == [7.0, 7.0, 7.0]",
        "assert out[5:].tolist() == [0.0, 0.0, 0.0]",
        ASSERT,
    ),
    "snippets/cpp-extensions/claim_target_version.py": Mutation(
        'assert first_error(STABLE, V2_10) == "compiles"',
        'assert first_error(STABLE, V2_10) != "compiles"',
        ASSERT,
    ),
    "snippets/compatibility/claim_triton_min_cc.py": Mutation(
        'assert answers == {"6.1": False,', 'assert answers == {"6.1": True,', ASSERT
    ),
    "snippets/cpp-extensions/claim_cuda_build.py": Mutation(
        'assert nvcc_verdict(f"{major - 1}.8").startswith("RuntimeError")',
        'assert nvcc_verdict(f"{major - 1}.8").startswith("builds")',
        r"another major is refused",
    ),
    "snippets/debugging/claim_always_compile.py": Mutation(
        "assert prints == [1, 0, 1, 1], counts", "assert prints == [1, 1, 1, 1], counts", ASSERT
    ),
    "snippets/debugging/claim_debug_build.py": Mutation(
        "assert found[False] == ([], 0), found",
        "assert found[False] == ([], 1), found",
        ASSERT,
    ),
    "snippets/debugging/claim_interpret_at_decoration.py": Mutation(
        'assert type(compiled).__name__ == "JITFunction"',
        'assert type(compiled).__name__ == "InterpretedFunction"',
        ASSERT,
    ),
    "snippets/debugging/claim_interpreter_asserts.py": Mutation(
        'assert results["assert x >= 0"].startswith("no error")',
        'assert results["assert x >= 0"].startswith("InterpreterError")',
        ASSERT,
    ),
    "snippets/debugging/claim_interpreter_autotune.py": Mutation(
        "assert len(timed) == 2, timed",
        "assert len(timed) == 1, timed",
        ASSERT,
    ),
    "snippets/debugging/claim_interpreter_bf16_store.py": Mutation(
        "assert differ > 0.1 and",
        "assert differ < 0.1 and",
        ASSERT,
    ),
    "snippets/debugging/claim_static_checks.py": Mutation(
        "assert (len(first), len(second)) == (3, 3), (first, second)",
        "assert (len(first), len(second)) == (1, 0), (first, second)",
        ASSERT,
    ),
    "snippets/fused-softmax/claim_load_order.py": Mutation(
        "return (issued if before is None else before), issued",
        "return (before or 0), issued",
        r"an operation of the loop now waits on a load of the same pass",
    ),
    "snippets/fused-softmax/claim_loop_spills.py": Mutation(
        'constexprs={"BLOCK": block, **constexprs}',
        'constexprs={"BLOCK": 4 * block, **constexprs}',
        r"the float64 backward's plan spills",
    ),
    "snippets/fused-softmax/claim_maximum_nan.py": Mutation(
        "== [True, True, True, False]",
        "== [True, True, False, False]",
        ASSERT,
    ),
    "snippets/matmul/claim_wrap_triton_dispatch.py": Mutation(
        'assert outside == "TraceableTritonKernelWrapper", outside',
        'assert outside == "JITFunction", outside',
        ASSERT,
    ),
    "snippets/pitfalls/non_contiguous.py": Mutation(
        "x, y = x.contiguous(), y.contiguous()  # (1)!", "x, y = x, y.contiguous()  # (1)!", ASSERT
    ),
    "snippets/pitfalls/claim_cpu_tensor_error.py": Mutation(
        'assert str(error) == "0 active drivers ([]). There should only be one.", error',
        'assert str(error) == "1 active driver.", error',
        ASSERT,
    ),
    "snippets/pitfalls/claim_interpreter_race.py": Mutation(
        "assert atomic == n, atomic",
        "assert atomic == n + 1, atomic",
        ASSERT,
    ),
    "snippets/pitfalls/claim_jit_innermost.py": Mutation(
        "assert str(heuristics_error) == EXPECTED, heuristics_error",
        "assert str(heuristics_error) != EXPECTED, heuristics_error",
        ASSERT,
    ),
    "snippets/triton-op/claim_mutation_rules.py": Mutation(
        'assert plain_call == "no error, out written: [2.0, 2.0, 2.0]", plain_call',
        'assert plain_call == "no error, out written: [3.0, 3.0, 3.0]", plain_call',
        ASSERT,
    ),
    "snippets/triton-op/claim_schema.py": Mutation(
        'READ = {"2.11": INFERRED, "2.15": GIVEN}',
        'READ = {"2.11": GIVEN, "2.15": INFERRED}',
        r"registered .*, expected",
    ),
    "snippets/triton-op/claim_vmap.py": Mutation(
        "assert (without, with_rule) == (8, 1), (without, with_rule)",
        "assert (without, with_rule) == (1, 1), (without, with_rule)",
        ASSERT,
    ),
    "snippets/triton-op/claim_wrap_triton_interpreter.py": Mutation(
        'assert wrap_result == f"RuntimeError: {message}", wrap_result',
        'assert wrap_result == f"TypeError: {message}", wrap_result',
        ASSERT,
    ),
    "snippets/under-the-hood/claim_vector_width.py": Mutation(
        'assert small["sizePerThread"] == "[1]"',
        'assert small["sizePerThread"] == "[2]"',
        ASSERT,
    ),
    "snippets/when-to-write/claim_profiler_device_time.py": Mutation(
        'assert names == ["self_device_time_total"], names',
        'assert names == ["self_cuda_time_total"], names',
        ASSERT,
    ),
}

# Kernel and claim snippets that CI runs on a CPU but that are not mutated here, and why.
NOT_MUTATED: dict[str, str] = {
    "snippets/torch-compile/claim_compile_cpu_tensors.py": (
        "costly: torch.compile on the CPU before its one assert (35 CPU s a run)"
    ),
    "snippets/choosing-a-route/first_call_times.py": "costly: three fresh torch.compile processes",
    "snippets/cpp-extensions/build_time.py": "costly: cold C++ builds, timed",
    "snippets/cpp-extensions/claim_static_libstdcxx.py": "costly: C++ builds, two of them",
    "snippets/cpp-extensions/muladd_inline.py": "costly: a C++ build of the mutated source",
    "snippets/cpp-extensions/stable_abi_across_releases.py": "costly: C++ builds, two torches",
}

# The failure of a broken mutation, not of the file's check.
BROKEN = re.compile(r"\b(?:SyntaxError|IndentationError|NameError|ModuleNotFoundError)\b")
SNIPPETS = records.list_snippets()


def is_kernel_or_claim(path: str) -> bool:
    if Path(path).name.startswith("exercise_"):  # a starter is its solution with the TODOs in:
        return False  # its mutation, which must fail with the checker's message (test_exercises)
    text = (REPO / path).read_text(encoding="utf-8")
    claim = Path(path).name.startswith("claim_")
    return claim or any(m in text for m in ("@triton.jit", "TORCH_LIBRARY", "load_inline"))


def runs_on_cpu(path: str) -> bool:
    return records.read_snippet_needs(path).runs_on_cpu


def test_every_kernel_and_claim_snippet_ci_runs_on_a_cpu_has_a_mutation_or_a_reason():
    wanted = {p for p in SNIPPETS if is_kernel_or_claim(p) and runs_on_cpu(p)}
    missing = sorted(wanted - set(MUTATIONS) - set(NOT_MUTATED))
    assert not missing, (
        f"add a mutation to MUTATIONS in tests/test_mutations.py (or a reason to NOT_MUTATED) "
        f"for {missing}: its own check must be shown able to fail"
    )
    gone = sorted((set(MUTATIONS) | set(NOT_MUTATED)) - set(SNIPPETS))
    assert not gone, f"MUTATIONS or NOT_MUTATED name files that are not snippets: {gone}"
    not_on_cpu = sorted(p for p in MUTATIONS if p in SNIPPETS and not runs_on_cpu(p))
    assert not not_on_cpu, f"CI does not run these on a CPU, so no mutation can: {not_on_cpu}"


def mutated_text(path: str) -> str | None:
    """The file with its mutation, or None when the mutation no longer applies."""
    text = (REPO / path).read_text(encoding="utf-8")
    mutation = MUTATIONS[path]
    if text.count(mutation.old) != 1:
        return None
    return text.replace(mutation.old, mutation.new)


def run_mutated(path: str) -> subprocess.CompletedProcess:
    """Run the mutated copy as CI runs the file (its folder beside it)."""
    text = mutated_text(path)
    if text is None:
        raise LookupError(f"the mutation of {path} no longer applies")
    needs = records.read_snippet_needs(path)
    env = {k: v for k, v in environ().items() if k != "TRITON_INTERPRET"}  # a pool thread's
    env.update(CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    env[records.REPEATS_ENV] = "1"
    if needs.cpu_interpreter:
        env["TRITON_INTERPRET"] = "1"
    with tempfile.TemporaryDirectory(prefix="mutated-") as root:
        folder = Path(root) / Path(path).parent
        shutil.copytree(REPO / Path(path).parent, folder, ignore=shutil.ignore_patterns("__py*"))
        (Path(root) / path).write_text(text, encoding="utf-8")
        for shared in ("locks",):  # a file may compare itself with the locks (doctor.py)
            shutil.copytree(REPO / shared, Path(root) / shared)
        return run_counting_cpu(
            [sys.executable, path], Path(root), env, needs.timeout_s * CPU_RUN_TIMEOUT_FACTOR
        )


# A proof, like a record, binds a run to what ran: the mutated file's sha256, the message it
# had to fail with and the lock. A proven mutation is not run again until one of them changes
# (so CI re-runs only the files edited since); `WRITE_MUTATION_PROOFS=1 pytest
# tests/test_mutations.py` runs every mutation again and rewrites the proofs. Commit them.
PROOFS = REPO / "tests" / "mutation_proofs.json"
WRITE_PROOFS = os.environ.get("WRITE_MUTATION_PROOFS") == "1"


def proof_key(path: str) -> dict:
    text = mutated_text(path) or ""
    return {
        "mutated_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "expect": MUTATIONS[path].expect,
        "lock": CURRENT.id,
    }


def load_proofs() -> dict:
    return json.loads(PROOFS.read_text(encoding="utf-8")) if PROOFS.is_file() else {}


def proven(path: str) -> dict | None:
    """The committed proof of this mutation, when it is of this very mutated file and lock."""
    if WRITE_PROOFS:
        return None
    proof = load_proofs().get(path)
    if proof and all(proof.get(k) == v for k, v in proof_key(path).items()):
        return proof
    return None


def start_mutated_runs(cpu_runs, items) -> None:
    """Queue the mutated copies the selected tests will check (conftest.BACKGROUND_STARTS)."""
    for item in items:
        if item.name.startswith("test_a_mutation_makes_the_snippet_fail"):
            path = item.callspec.params["path"]
            if path in SNIPPETS and mutated_text(path) is not None and not proven(path):
                cpu_runs.submit(("mutated", path), run_mutated, path)


BACKGROUND_STARTS.append(start_mutated_runs)
WAITS_FOR_THE_POOL.add("test_a_mutation_makes_the_snippet_fail_with_its_own_message")


@pytest.mark.parametrize("path", sorted(MUTATIONS))
def test_a_mutation_makes_the_snippet_fail_with_its_own_message(path):
    mutation = MUTATIONS[path]
    if path not in SNIPPETS:
        pytest.fail(f"{path} is no longer a snippet: remove it from MUTATIONS")
    count = (REPO / path).read_text(encoding="utf-8").count(mutation.old)
    assert count == 1, (
        f"the mutation of {path} no longer applies: {mutation.old!r} occurs {count} times in "
        "the file (once expected). Pick a new small mutation of its result or its claim in "
        "MUTATIONS (tests/test_mutations.py)."
    )
    proof = proven(path)
    if proof:  # this mutated file failed here before, with its own message (see PROOFS)
        assert proof["returncode"] > 0 and re.search(mutation.expect, proof["message"]), proof
        return
    proc = CPU_RUNS.submit(("mutated", path), run_mutated, path).result()
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, (
        f"{path} passed with {mutation.old!r} -> {mutation.new!r}: its own check does not see "
        f"the change.\n{output[-1500:]}"
    )
    assert proc.returncode > 0, (
        f"{path}, mutated, crashed (exit {proc.returncode}): {output[-1500:]}"
    )
    assert not BROKEN.search(output), f"the mutation of {path} broke the code:\n{output[-1500:]}"
    found = re.search(mutation.expect, output)
    assert found, (
        f"{path}, mutated, failed without its own message ({mutation.expect!r}):\n{output[-1500:]}"
    )
    if WRITE_PROOFS:  # one test at a time: read, add this proof, write
        proofs = load_proofs()
        lines = [x.strip() for x in output.splitlines() if re.search(mutation.expect, x)]
        message = lines[0][:300] if lines else found.group(0)
        proofs[path] = {
            **proof_key(path),
            "returncode": proc.returncode,
            "message": message,
            "date": dt.date.today().isoformat(),
        }
        PROOFS.write_text(json.dumps(dict(sorted(proofs.items())), indent=1) + "\n", "utf-8")


def test_a_proof_holds_only_for_the_mutated_file_it_ran(monkeypatch):
    """Edit the file or its mutation, and the committed proof no longer spares the run."""
    proofs = load_proofs()
    assert proofs, f"no proofs in {PROOFS.name}: run WRITE_MUTATION_PROOFS=1 pytest {__file__}"
    if WRITE_PROOFS:
        pytest.skip("proofs are being rewritten")
    path = next((p for p in sorted(proofs) if p in MUTATIONS and proven(p)), None)
    assert path, "every proof is stale: rewrite the proofs"
    m = MUTATIONS[path]
    monkeypatch.setitem(MUTATIONS, path, Mutation(m.old, m.new + " ", m.expect))
    assert proven(path) is None
