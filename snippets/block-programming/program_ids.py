# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Which program instance handles which element? Each program writes its own id.

On a CUDA GPU:  python program_ids.py
On a CPU:       TRITON_INTERPRET=1 python program_ids.py
"""

import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


# --8<-- [start:kernel]
@triton.jit
def write_program_id(out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offsets, pid, mask=offsets < n_elements)  # (1)!


def program_map(n: int, block_size: int, device: str) -> torch.Tensor:
    out = torch.full((n,), -1, dtype=torch.int32, device=device)
    grid = (triton.cdiv(n, block_size),)  # (2)!
    write_program_id[grid](out, n, BLOCK_SIZE=block_size)
    return out


# --8<-- [end:kernel]


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(
            "No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python program_ids.py"
        )
    device = "cpu" if INTERPRETED else "cuda"
    # --8<-- [start:run]
    ids = program_map(10, 4, device)
    print(f"n=10, BLOCK_SIZE=4: {ids.tolist()}")  # (1)!
    # --8<-- [end:run]
    for n, block_size in [(10, 4), (1, 4), (0, 4), (1000, 128), (4096, 1024)]:
        got = program_map(n, block_size, device).cpu()
        expected = torch.arange(n, dtype=torch.int32) // block_size
        assert torch.equal(got, expected), f"n={n}, BLOCK_SIZE={block_size}: {got} != {expected}"
        # the same launch into a view of a larger buffer: nothing past the n elements changes
        buffer = torch.full((block_size + n + block_size,), -7, dtype=torch.int32, device=device)
        view = buffer[block_size : block_size + n]
        write_program_id[(triton.cdiv(n, block_size),)](view, n, BLOCK_SIZE=block_size)
        outside = torch.cat([buffer[:block_size], buffer[block_size + n :]])
        assert bool((outside == -7).all()), f"n={n}: the kernel wrote outside its output"
        programs = triton.cdiv(n, block_size)
        print(f"n={n:5} BLOCK_SIZE={block_size:5}: {programs} programs, every element written once")
    print("program_ids: all checks passed")
