# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: tl.static_print and tl.static_assert run when the kernel is compiled; under the
interpreter, which compiles nothing, they run in every program at launch.

On a CUDA GPU:  python claim_static_checks.py
On a CPU:       TRITON_INTERPRET=1 python claim_static_checks.py
Each mode prints its own lines (labelled "compiled" or "interpreter") and asserts what it saw.
"""

import os
import tempfile

os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()  # a fresh cache: the first launch compiles

import contextlib
import io

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
MODE = "interpreter" if INTERPRETED else "compiled"
DEVICE = "cpu" if INTERPRETED else "cuda"


# --8<-- [start:kernel]
@triton.jit
def copy_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    tl.static_assert(BLOCK_SIZE >= 16, "BLOCK_SIZE must be at least 16")  # (1)!
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.static_print("static_print: x is", x)  # (2)!
    tl.store(out_ptr + offsets, x, mask=mask)


# --8<-- [end:kernel]


def launch(x: torch.Tensor, block_size: int) -> list[str]:
    """Launch copy_kernel; return the lines static_print printed meanwhile."""
    out = torch.empty_like(x)
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        copy_kernel[(triton.cdiv(x.numel(), block_size),)](x, out, x.numel(), BLOCK_SIZE=block_size)
    torch.testing.assert_close(out, x, rtol=0, atol=0)
    return captured.getvalue().splitlines()


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(
            "No CUDA GPU here. On a CPU: TRITON_INTERPRET=1 python claim_static_checks.py"
        )
    # --8<-- [start:claim]
    x = torch.arange(40, dtype=torch.float32).to(DEVICE)  # (1)!
    first, second = launch(x, 16), launch(x, 16)
    print(
        f"{MODE}, static_print lines: {len(first)} in the first launch, {len(second)} in the second"
    )
    print(f"{MODE}, the first: {first[0]}")
    try:
        launch(x, 8)  # (2)!
    except triton.errors.TritonError as exc:  # (3)!
        message = str(exc).strip().splitlines()[-1]
        print(f"{MODE}, BLOCK_SIZE=8: {type(exc).__name__}: {message}")
    else:
        raise AssertionError("static_assert let BLOCK_SIZE=8 through")
    # --8<-- [end:claim]
    if INTERPRETED:
        assert (len(first), len(second)) == (3, 3), (first, second)  # one per program, each launch
        assert first[0] == "static_print: x is " + str(x[:16].numpy()), first
    else:
        assert (len(first), len(second)) == (1, 0), (first, second)  # one per compile
        assert first[0] == "static_print: x is fp32[constexpr[16]]", first
    print(f"{MODE}: claim_static_checks passed")
