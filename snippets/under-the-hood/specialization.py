# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "reads the PTX the compiler generates; the interpreter compiles nothing", skip-zh = "读的是编译器生成的 PTX；解释器不做编译" }
# ///
"""What Triton specializes a plain integer argument on, and what that buys in the PTX.

On a CUDA GPU:  python specialization.py
Asserts: n % 16 == 0 gives 128-bit vector loads (ld.global.v4), other n scalar loads; n >= 2**31
is passed as a 64-bit integer; do_not_specialize / do_not_specialize_on_alignment switch it off.
"""

import re

import torch
import triton
import triton.language as tl


def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


# --8<-- [start:variants]
default = triton.jit(add_kernel)
no_alignment = triton.jit(add_kernel, do_not_specialize_on_alignment=["n_elements"])  # (1)!
no_specialization = triton.jit(add_kernel, do_not_specialize=["n_elements"])  # (2)!

seen: list[dict] = []
triton.knobs.runtime.jit_post_compile_hook = lambda **kw: seen.append(kw["compile"])


def compile_for(kernel, n: int) -> dict:
    """Launch on 1024 elements with n_elements = n; describe the variant it compiled or reused."""
    x = torch.rand(1024, device="cuda")
    out = torch.empty_like(x)
    before = len(seen)
    compiled = kernel[(1,)](x, x, out, n, BLOCK_SIZE=1024)  # (3)!
    ptx = compiled.asm["ptx"]
    return {
        "new variant": len(seen) > before,
        "n_elements": compiled.src.signature["n_elements"],  # (4)!
        "vector loads": len(re.findall(r"ld\.global\.v4\.b32\b", ptx)),  # (5)!
        "scalar loads": len(re.findall(r"ld\.global\.b32\b", ptx)),
    }


# --8<-- [end:variants]


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it reads the compiled PTX.")
    rows = []
    # --8<-- [start:run]
    for kernel, name in (
        (default, "default"),
        (no_alignment, "no_alignment"),
        (no_specialization, "no_specialization"),
    ):
        for n in (4096, 4100, 1, 2**31):
            info = compile_for(kernel, n)
            rows.append((name, n, info))
            print(f"{name:17} n={n:<10} {info}")
    # --8<-- [end:run]
    get = {(name, n): info for name, n, info in rows}
    # divisible by 16: vector loads; not divisible: scalar loads
    assert get["default", 4096]["vector loads"] > 0 and get["default", 4096]["scalar loads"] == 0
    assert get["default", 4100]["vector loads"] == 0 and get["default", 4100]["scalar loads"] > 0
    # 5000 would reuse the 4100 variant; 2**31 no longer fits 32 bits: a 64-bit variant
    assert get["default", 4096]["n_elements"] == "i32"
    assert get["default", 2**31]["n_elements"] == "i64" and get["default", 2**31]["new variant"]
    # == 1 is a constant of the variant, not an argument
    assert get["default", 1]["n_elements"] == "constexpr"
    # switched off: 4096 compiles like 4100
    assert get["no_alignment", 4096]["vector loads"] == 0
    assert not get["no_alignment", 4100]["new variant"]
    assert get["no_specialization", 1]["n_elements"] == "i32"
    assert not get["no_specialization", 1]["new variant"]
    print("4096 -> ld.global.v4 (128-bit), 4100 -> 32-bit loads; 2**31 -> i64; 1 -> constexpr")
    print("specialization: all checks passed")
