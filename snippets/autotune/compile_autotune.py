# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "torch.compile does not trace a kernel under TRITON_INTERPRET=1; claim_compile_accepts.py runs TorchDynamo's check on the CPU", skip-zh = "在 TRITON_INTERPRET=1 下 torch.compile 无法追踪内核；TorchDynamo 的参数检查由 claim_compile_accepts.py 在 CPU 上运行" }
# ///
"""An autotuned kernel inside torch.compile(fullgraph=True): what works, what does not.

On a CUDA GPU:  python compile_autotune.py
Each option is compiled and checked against eager PyTorch; the in-place kernel runs once without
and once with restore_value, each in its own fresh process with empty Triton and Inductor caches.
"""

import json
import os
import subprocess
import sys
import tempfile

import torch
import triton
import triton.language as tl

torch._inductor.config.force_disable_caches = True  # every variant compiles and tunes afresh
N = 10_000
CONFIGS = [triton.Config({"BLOCK_SIZE": 128}), triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)]
grid = lambda meta: (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)


def double(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)


def double_even(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) * 2)
    else:
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)


def add_one(x_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)


def first_line(exc: Exception) -> str:
    """The exception's type and the sentence that says why, without the hints."""
    text = str(exc).strip()
    if "unsupported feature: " in text:
        text = text.split("unsupported feature: ", 1)[1]
    return f"{type(exc).__name__}: {text.splitlines()[0][:110]}"


# --8<-- [start:compiled]
def compiled_double(kernel):
    @torch.compile(fullgraph=True, dynamic=False)  # (1)!
    def run(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        kernel[grid](x, out, x.numel())
        return out

    return run


def try_compiled(label: str, kernel, sizes=(N,)) -> bool:
    torch._dynamo.reset()  # (2)!
    try:
        for n in sizes:
            x = torch.randn(n, device="cuda")
            torch.testing.assert_close(compiled_double(kernel)(x), x * 2, rtol=0, atol=0)
    except Exception as exc:  # (3)!
        print(f"compiled, {label + ':':<44} {first_line(exc)}")
        return False
    print(f"compiled, {label + ':':<44} runs, equal to x * 2")
    return True


# --8<-- [end:compiled]


# --8<-- [start:child]
def in_place_once(restore: bool) -> list[int]:
    """In a fresh process: one compiled call of an autotuned in-place +1 on zeros."""
    options = {"restore_value": ["x_ptr"]} if restore else {}
    kernel = triton.autotune(configs=CONFIGS, key=["n_elements"], **options)(triton.jit(add_one))

    @torch.compile(fullgraph=True)
    def increment(x: torch.Tensor) -> None:
        kernel[grid](x, x.numel())

    x = torch.zeros(N, dtype=torch.int32, device="cuda")
    increment(x)  # (1)!
    return x.unique().tolist()


# --8<-- [end:child]


def in_fresh_process(restore: bool) -> list[int]:
    with tempfile.TemporaryDirectory() as root:
        env = {
            **os.environ,
            "TRITON_CACHE_DIR": os.path.join(root, "triton"),
            "TORCHINDUCTOR_CACHE_DIR": os.path.join(root, "inductor"),
        }
        env.pop("TRITON_INTERPRET", None)
        proc = subprocess.run(
            [sys.executable, __file__, "--child", "restore" if restore else "plain"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def tuned(fn, **options):
    configs = options.pop("configs", CONFIGS)
    return triton.autotune(configs=configs, key=["n_elements"], **options)(triton.jit(fn))


if __name__ == "__main__":
    if "--child" in sys.argv:
        print(json.dumps(in_place_once(sys.argv[-1] == "restore")))
        sys.exit(0)
    if not torch.cuda.is_available():
        raise SystemExit(
            "This snippet needs a CUDA GPU: torch.compile does not trace interpreted kernels."
        )
    torch.manual_seed(0)
    # --8<-- [start:options]
    timer_calls = []

    def counting_do_bench(fn, quantiles):
        timer_calls.append(fn)
        return triton.testing.do_bench(fn, quantiles=quantiles)

    keep_first = {"early_config_prune": lambda configs, named_args, **kwargs: configs[:1]}
    results = {
        "configs, key": try_compiled("configs, key", tuned(double)),
        "restore_value": try_compiled("restore_value", tuned(double, restore_value=["out_ptr"])),
        "prune_configs_by": try_compiled(
            "prune_configs_by", tuned(double, prune_configs_by=keep_first)
        ),
        "do_bench": try_compiled("do_bench", tuned(double, do_bench=counting_do_bench)),
        "pre_hook": try_compiled(
            "pre_hook", tuned(double, pre_hook=lambda kwargs, reset_only=False: None)
        ),
    }
    print(f"custom do_bench calls under torch.compile: {len(timer_calls)}")  # (1)!
    # --8<-- [end:options]
    assert results == {
        "configs, key": True,
        "restore_value": True,
        "prune_configs_by": True,
        "do_bench": True,
        "pre_hook": False,
    }, results
    # --8<-- [start:heuristics]
    even = triton.heuristics({"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})
    inner = triton.autotune(configs=CONFIGS, key=["n_elements"])(even(triton.jit(double_even)))
    outer = even(triton.autotune(configs=CONFIGS, key=["n_elements"])(triton.jit(double_even)))
    inner_ok = try_compiled("autotune outermost, heuristic reads BLOCK_SIZE", inner, (1000, 1024))
    outer_ok = try_compiled("heuristics outermost, heuristic reads BLOCK_SIZE", outer, (1000, 1024))
    # --8<-- [end:heuristics]
    assert inner_ok and not outer_ok
    # --8<-- [start:parent]
    plain = in_fresh_process(restore=False)
    restored = in_fresh_process(restore=True)
    print(f"compiled in-place +1, nothing: x == 1 after one call: {plain == [1]}")
    print(f"compiled in-place +1, restore_value=['x_ptr']: x after one call {restored}")
    # --8<-- [end:parent]
    assert restored == [1], restored
    assert len(plain) == 1 and plain[0] > 1, plain
    figures = {
        "compiled_x_without_restore": {
            "value": plain[0],
            "statistic": "count",
            "op": "x after one call of an autotuned in-place +1 kernel inside torch.compile, "
            "no restore_value",
            "shape": f"n={N}",
            "dtype": "int32",
        }
    }
    print("figures: " + json.dumps(figures))
    print("compile_autotune: all checks passed")
