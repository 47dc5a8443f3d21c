# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "measures the GPU's arithmetic (fast exp, tf32, tensor cores); the interpreter computes with NumPy", skip-zh = "测的是 GPU 的算术（快速 exp、tf32、Tensor Core）；解释器用 NumPy 计算" }
# ///
"""How far from exact is a correct kernel, per dtype? Error reports for silu_mul and a matmul.

On a CUDA GPU:  python tolerance_report.py
For each dtype: the largest error, the distribution of errors, and where the worst elements are;
each error checked against a bound derived from the arithmetic, and against PyTorch's defaults.
"""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

ULPS = {torch.float16: 2, torch.bfloat16: 2, torch.float32: 128}  # the contract of silu_mul.py


@triton.jit
def silu_mul_kernel(
    a_ptr, b_ptr, out_ptr, M, N,
    stride_am, stride_an, stride_bm, stride_bn, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FP64: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(axis=0)
    blocks_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // blocks_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % blocks_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    r, c = rows[:, None].to(tl.int64), cols[None, :].to(tl.int64)
    a = tl.load(a_ptr + r * stride_am + c * stride_an, mask=mask)
    b = tl.load(b_ptr + r * stride_bm + c * stride_bn, mask=mask)
    if not FP64:
        a, b = a.to(tl.float32), b.to(tl.float32)
    e = tl.exp(-tl.abs(a))
    out = a * tl.where(a >= 0, 1.0, e) / (1 + e) * b
    tl.store(out_ptr + r * stride_om + c * stride_on, out.to(out_ptr.dtype.element_ty), mask=mask)


def silu_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """For two contiguous CUDA tensors of one shape (see silu_mul.py for the checked version)."""
    out = torch.empty_like(a)
    n = a.numel()
    silu_mul_kernel[(triton.cdiv(n, 1024),)](
        a, b, out, 1, n, 0, 1, 0, 1, 0, 1, BLOCK_M=1, BLOCK_N=1024, FP64=False
    )
    return out


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PRECISION: tl.constexpr,
):  # fmt: skip
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a_mask = (rm[:, None] < M) & (k + rk[None, :] < K)
        b_mask = (k + rk[:, None] < K) & (rn[None, :] < N)
        a = tl.load(a_ptr + rm[:, None] * sam + (k + rk[None, :]) * sak, mask=a_mask, other=0.0)
        b = tl.load(b_ptr + (k + rk[:, None]) * sbk + rn[None, :] * sbn, mask=b_mask, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(
        c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty), mask=c_mask
    )


def matmul(a: torch.Tensor, b: torch.Tensor, precision: str | None) -> torch.Tensor:
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    matmul_kernel[grid](
        a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(),
        BM=64, BN=64, BK=32, PRECISION=precision,
    )  # fmt: skip
    return c


# --8<-- [start:ulps]
def ulps(got: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    """|got - ref| in units in the last place of got's dtype at ref (ref is float64)."""
    info = torch.finfo(got.dtype)
    _, exponent = torch.frexp(ref.abs().clamp(min=info.tiny))  # (1)!
    spacing = torch.ldexp(torch.full_like(ref, info.eps), exponent - 1)
    return (got.double() - ref).abs() / spacing


def silu_report(dtype: torch.dtype) -> None:
    a64 = torch.linspace(-90, 12, 2**20, dtype=torch.float64)
    a = a64.to(dtype)  # (2)!
    got = silu_mul(a.cuda(), torch.ones_like(a).cuda()).cpu()
    rounded = F.silu(a.double()).to(dtype).double()  # the contract's reference
    normal = rounded.abs() >= torch.finfo(dtype).tiny  # (3)!
    u = ulps(got, rounded)[normal]
    worst = int(u.argmax())
    share = [float((u == k).double().mean()) for k in (0, 1)]
    print(
        f"silu {str(dtype):14}: 0 ulp {share[0]:6.2%}, 1 ulp {share[1]:6.2%}, "
        f"max {u.max():3.0f} ulp at a = {a[normal][worst].item():7.2f} "
        f"(tolerance {ULPS[dtype]}); {int((~normal).sum())} results below the smallest "
        f"normal number, checked against atol"
    )
    assert u.max() <= ULPS[dtype]
    if dtype == torch.float32:  # the error of ex2.approx(x * log2(e)) grows with |x|
        assert a[normal][worst] < -40, "the worst float32 error is not where exp predicts it"


# --8<-- [end:ulps]


# --8<-- [start:matmul]
def matmul_report(name: str, got: torch.Tensor, a: torch.Tensor, b: torch.Tensor, c: float):
    ref = a.double() @ b.double()  # (1)!
    bound = c * (a.double().abs() @ b.double().abs())  # (2)!
    err = (got.double() - ref).abs()
    rel = (err / ref.abs()).flatten()
    p50, p99 = torch.quantile(rel, torch.tensor([0.5, 0.99], dtype=torch.float64)).tolist()
    row, col = divmod(int(rel.argmax()), ref.shape[1])
    where = ref[row, col].abs() / ref.abs().median()  # (3)!
    try:
        torch.testing.assert_close(got, ref.to(got.dtype))  # PyTorch's defaults for the dtype
        defaults = "pass"
    except AssertionError:
        defaults = "fail"
    print(
        f"{name:16} max|err| {err.max():8.2e}  rel p50 {p50:7.1e} p99 {p99:7.1e} "
        f"max {rel.max():7.1e} at ({row:3}, {col:3}) where |ref| = {where:.0e} x median  "
        f"err/bound {(err / bound).max():.1e}  torch defaults: {defaults}"
    )
    assert bool((err <= bound).all()), f"{name}: error above the bound"


# --8<-- [end:matmul]


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it measures the GPU's arithmetic.")
    x = torch.zeros(1024, device="cuda")
    compiled = silu_mul_kernel[(1,)](
        x, x, x, 1, 1024, 0, 1, 0, 1, 0, 1, BLOCK_M=1, BLOCK_N=1024, FP64=False
    )
    ptx = compiled.asm["ptx"]
    ops = [
        op
        for op in ("ex2.approx.f32", "ex2.approx.ftz.f32", "div.full.f32", "div.rn.f32")
        if op in ptx
    ]
    print(f"float32 silu_mul, instructions in its PTX: {ops}")
    assert "ex2.approx" in ptx, "exp is no longer ex2.approx: re-derive the float32 tolerance"
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        silu_report(dtype)
    # --8<-- [start:run]
    g = torch.Generator().manual_seed(0)
    a32, b32 = torch.randn(512, 4096, generator=g), torch.randn(4096, 512, generator=g)
    K, u32 = 4096, 2.0**-24
    accumulate = 4 * K * u32  # (1)!
    cases = [  # name, inputs, tl.dot input_precision, bound coefficient
        ("float32 ieee", torch.float32, "ieee", accumulate),
        ("float32 default", torch.float32, None, 2 * 2.0**-10 + accumulate),  # (2)!
        ("float16", torch.float16, None, accumulate + 2.0**-11),  # (3)!
        ("bfloat16", torch.bfloat16, None, accumulate + 2.0**-8),
    ]
    for name, dtype, precision, c in cases:
        a, b = a32.to(dtype), b32.to(dtype)
        got = matmul(a.cuda(), b.cuda(), precision).cpu()
        matmul_report(name, got, a, b, c)
    matmul_report("torch.matmul f32", (a32.cuda() @ b32.cuda()).cpu(), a32, b32, accumulate)
    # --8<-- [end:run]
    print("tolerance_report: all checks passed")
