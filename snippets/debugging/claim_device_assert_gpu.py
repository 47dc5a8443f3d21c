# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "runs device-side asserts on a GPU; claim_interpreter_asserts.py checks the interpreter", skip-zh = "在 GPU 上运行设备端断言；解释器的情况由 claim_interpreter_asserts.py 检查" }
# timeout = 300
# ///
"""Claim: on the GPU, a failing tl.device_assert (or assert) in a kernel does nothing by default;
with @triton.jit(debug=True), or TRITON_DEBUG=1 set before triton is imported, it stops the kernel
and the next CUDA call raises "device-side assert triggered".

A failed device-side assert leaves the process's CUDA context unusable, so each debug run happens
in a child process. On a CUDA GPU:  python claim_device_assert_gpu.py
"""

import os
import re
import subprocess
import sys

if "--child" not in sys.argv:
    os.environ.pop("TRITON_DEBUG", None)  # the default build, whatever the shell says

import torch
import triton
import triton.language as tl


def checked_sqrt(x_ptr, out_ptr, n_elements, CHECK: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    if CHECK == "tl.device_assert(x >= 0)":
        tl.device_assert(x >= 0, "x must be >= 0")
    if CHECK == "assert x >= 0":
        assert x >= 0, "x must be >= 0"
    tl.store(out_ptr + offsets, tl.sqrt(x), mask=mask)


# --8<-- [start:child]
def run_once(kernel, check: str) -> str:
    x = torch.tensor([4.0, -1.0, 9.0], device="cuda")
    out = torch.empty_like(x)
    try:
        kernel[(1,)](x, out, 3, CHECK=check, BLOCK_SIZE=4)
        torch.cuda.synchronize()  # (1)!
    except RuntimeError as exc:
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}"
    return f"no error, out = {out.tolist()}"


def in_child(how: str, check: str) -> tuple[str, str]:
    """Run in a fresh process; return its result and the first assertion line the GPU printed."""
    env = {**os.environ, "TRITON_DEBUG": "1"} if how == "TRITON_DEBUG=1" else dict(os.environ)
    proc = subprocess.run(
        [sys.executable, __file__, "--child", how, check],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = proc.stdout + proc.stderr  # (2)!
    result = re.search(r"^RESULT (.*)$", output, re.MULTILINE)
    if result is None:
        raise AssertionError(f"the child printed no result:\n{output}")
    printed = re.search(r"Assertion `(.*?)` failed", output)
    return result.group(1), (f"Assertion `{printed.group(1)}` failed" if printed else "nothing")


# --8<-- [end:child]

if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        how, check = sys.argv[2], sys.argv[3]
        kernel = triton.jit(checked_sqrt, debug=True if how == "debug=True" else None)
        print(f"RESULT {run_once(kernel, check)}", flush=True)
        sys.exit(0)
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it runs device-side asserts.")
    # --8<-- [start:run]
    default = run_once(triton.jit(checked_sqrt), "tl.device_assert(x >= 0)")  # (1)!
    print(f"GPU, default build, tl.device_assert(x >= 0): {default}")
    results = {}
    for how, check in (
        ("debug=True", "tl.device_assert(x >= 0)"),  # (2)!
        ("TRITON_DEBUG=1", "assert x >= 0"),  # (3)!
    ):
        results[how], printed = in_child(how, check)
        print(f"GPU, {how}, {check}: {results[how]}")
        print(f"  printed by the GPU with {how}: {printed}")
    # --8<-- [end:run]
    assert default.startswith("no error") and "nan" in default, default
    for how, result in results.items():
        assert "device-side assert triggered" in result, (how, result)
    print("claim_device_assert_gpu: all checks passed")
