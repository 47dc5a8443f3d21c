# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = true }
# ///
"""A plain Triton matmul with one fixed configuration against torch.matmul, which calls cuBLAS.

On a CUDA GPU:  python matmul_cublas.py   (checks, then times 4096 x 4096 x 4096 in float16)
On a CPU:       TRITON_INTERPRET=1 python matmul_cublas.py   (checks small shapes only)
"""

import json
import os
import statistics

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


# --8<-- [start:kernel]
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(axis=0)
    programs_m, programs_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * programs_n)  # (1)!
    first_m = group * GROUP_M
    group_m = min(programs_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * programs_n)) % group_m
    pid_n = (pid % (GROUP_M * programs_n)) // group_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # (2)!
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)  # (3)!
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


def matmul(
    a: torch.Tensor, b: torch.Tensor, config: dict, out: torch.Tensor | None = None
) -> torch.Tensor:
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"cannot multiply {tuple(a.shape)} by {tuple(b.shape)}")
    if a.dtype != torch.float16 or b.dtype != torch.float16:
        raise TypeError(f"takes two float16 matrices, not {a.dtype} and {b.dtype}")
    (M, K), N = a.shape, b.shape[1]
    if out is not None and (out.shape != (M, N) or out.dtype != a.dtype):
        raise ValueError(f"out must be a {(M, N)} float16 tensor")
    c = torch.empty((M, N), dtype=a.dtype, device=a.device) if out is None else out
    for t in (a, b, c):  # (4)!
        last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride(), strict=True))
        if last >= 2**31:
            raise ValueError(f"a {tuple(t.shape)} operand reaches past the kernel's int32 offsets")
    grid = (triton.cdiv(M, config["BLOCK_M"]) * triton.cdiv(N, config["BLOCK_N"]),)
    matmul_kernel[grid](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        c.stride(0), c.stride(1), **config,
    )  # fmt: skip
    return c


# --8<-- [end:kernel]

SMALL = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2}
# --8<-- [start:config]
CONFIG = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}  # (1)!
LAUNCH = {"num_warps": 8, "num_stages": 3}
# --8<-- [end:config]


def check(device: str) -> None:
    """Compare with float64 torch, writing into a view of a guarded buffer; GPU: fewer shapes."""
    torch.manual_seed(0)
    config = SMALL if INTERPRETED else {**CONFIG, **LAUNCH}
    shapes = [(0, 5, 7), (4, 0, 6), (1, 1, 1), (33, 70, 65), (100, 31, 129)]
    if not INTERPRETED:
        shapes = [(33, 70, 65), (512, 384, 640)]  # each new shape class compiles a variant
    for m, k, n in shapes:
        a = torch.randn(m, k).to(device, torch.float16)
        b = torch.randn(k, n).to(device, torch.float16)
        ref = (a.double() @ b.double()).half()
        pad, sentinel = 3, -7.0
        buffer = torch.full((m + 2 * pad, n + 2 * pad), sentinel, device=device).half()
        out = buffer[pad : pad + m, pad : pad + n]  # a view with a longer row stride
        matmul(a, b, config, out=out)
        torch.testing.assert_close(out, ref, atol=1e-2, rtol=1e-2)
        out.fill_(sentinel)
        assert bool((buffer == sentinel).all()), "matmul wrote outside its output"
    a_t = torch.randn(70, 33).to(device, torch.float16).t()  # a non-contiguous view
    b = torch.randn(70, 20).to(device, torch.float16)
    expected = (a_t.double() @ b.double()).half()
    torch.testing.assert_close(matmul(a_t, b, config), expected, atol=1e-2, rtol=1e-2)
    far = torch.empty(2**31 + 2**20, dtype=torch.float16, device=device)  # untouched: no memory
    rows_far_apart = far.as_strided((3, 8), (2**30, 1))
    for bad, error in (
        ((torch.ones(2, 3).half(), torch.ones(4, 2).half()), ValueError),
        ((torch.ones(2, 3), torch.ones(3, 2)), TypeError),
        ((rows_far_apart, torch.ones(8, 2, device=device).half()), ValueError),
    ):
        try:
            matmul(*bad, config)
        except error as exc:
            print(f"  rejected as expected: {type(exc).__name__}: {exc}")
        else:
            raise AssertionError(f"expected {error.__name__}, got a result")
    print("matmul: odd shapes, a transposed view and a strided output match float64 torch")


def tflops(fn, size: int, op: str) -> dict:
    """The rate from the median call time (do_bench, host launch included), with its spread."""
    flop = 2 * size**3
    times_ms = sorted(triton.testing.do_bench(fn, rep=50, return_mode="all"))
    median, q = statistics.median(times_ms), statistics.quantiles(times_ms, n=5)
    rate = lambda ms: flop / ms / 1e9
    return {
        "value": round(rate(median)),
        "unit": "TFLOP/s",
        "statistic": "median",
        "spread": "p20-p80",
        "low": round(rate(q[3])),
        "high": round(rate(q[0])),
        "repeats": len(times_ms),
        "op": op,
        "reference": "torch.matmul (cuBLAS)",
        "shape": f"{size} x {size} x {size}",
        "dtype": "float16",
        "compile": "excluded",
        "clock": "call",
        "flops": flop,
        "ms_median": round(median, 5),
    }


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(
            "No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python matmul_cublas.py"
        )
    check("cpu" if INTERPRETED else "cuda")
    if not INTERPRETED:
        size = 4096
        a, b = (torch.randn(size, size).to("cuda", torch.float16) for _ in range(2))
        # --8<-- [start:bench]
        figures = {
            "cublas_tflops": tflops(lambda: torch.matmul(a, b), size, "torch.matmul"),  # (1)!
            "triton_tflops": tflops(
                lambda: matmul(a, b, {**CONFIG, **LAUNCH}), size, "Triton matmul_kernel, one config"
            ),
        }
        # --8<-- [end:bench]
        figures["triton_over_cublas"] = {
            "value": round(
                figures["triton_tflops"]["value"] / figures["cublas_tflops"]["value"], 2
            ),
            "statistic": "ratio",
            "op": "TFLOP/s from the median call time, Triton over torch.matmul",
        }
        print("figures: " + json.dumps(figures))
    print("matmul_cublas: all checks passed")
