# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "the interpreter compiles nothing, so there are no compiled variants to count", skip-zh = "解释器不做编译，没有可数的编译变体" }
# ///
"""A new tl.constexpr value means a new compiled kernel; plain int arguments are specialized too.

On a CUDA GPU:  python constexpr_recompile.py
Counts compilations with triton.knobs.runtime.jit_post_compile_hook and asserts the counts.
How long a compile takes, apart from the process's one-time start-up: ../under-the-hood/first_launch.py.
"""

import json

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


# --8<-- [start:count]
compiled: list[dict] = []


def on_compile(*, key, repr, fn, compile, is_manual_warmup, already_compiled):  # (1)!
    compiled.append(compile["constants"])


triton.knobs.runtime.jit_post_compile_hook = on_compile


def launch(n: int, block_size: int) -> None:
    """Add two length-n vectors and say whether the launch compiled a new variant."""
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    before = len(compiled)
    add_kernel[(triton.cdiv(n, block_size),)](x, y, out, n, BLOCK_SIZE=block_size)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    what = "compiled a new variant" if len(compiled) > before else "reused a compiled variant"
    print(f"n={n:5} BLOCK_SIZE={block_size:5}: {what}")


# --8<-- [end:count]


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: the interpreter compiles nothing.")
    # --8<-- [start:run]
    launch(4096, 256)  # (1)!
    launch(4096, 256)  # (2)!
    assert len(compiled) == 1

    launch(4096, 512)
    launch(4096, 1024)  # (3)!
    assert len(compiled) == 3, compiled

    launch(4100, 1024)  # (4)!
    assert len(compiled) == 4, compiled
    launch(5000, 1024)  # (5)!
    assert len(compiled) == 4, compiled
    launch(1, 1024)  # (6)!
    assert len(compiled) == 5, compiled
    # --8<-- [end:run]
    print(f"compiled variants: {len(compiled)}")
    print("figures: " + json.dumps({"variants": {"value": len(compiled), "statistic": "count"}}))
    print("constexpr_recompile: all checks passed")
