# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = true }
# timeout = 400
# ///
"""Matrix multiplication with autotuning and a fused epilogue: gelu_tanh(x @ w + bias).

On a CUDA GPU:  python matmul.py
On a CPU:       TRITON_INTERPRET=1 python matmul.py   (float16, one small config)
tl.dot on blocks, grouped program order for L2 reuse, a config set chosen for Hopper, and on
CC 9.0+ a variant that loads through tensor descriptors (TMA). An operator (triton_op) with a
CPU kernel and autograd; checked against PyTorch. On a GPU, a benchmark over square and
LLM-like shapes against cuBLAS (torch.matmul), eager and torch.compile, printed as rows.
"""

import math
import os
import statistics

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton
from triton.tools.tensor_descriptor import TensorDescriptor

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
CUDA_DTYPES = (torch.float16, torch.bfloat16)
CPU_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


# --8<-- [start:configs]
def config(m: int, n: int, k: int, stages: int, warps: int) -> triton.Config:
    return triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8},
                         num_stages=stages, num_warps=warps)  # fmt: skip


HOPPER_CONFIGS = [  # (1)!
    config(128, 256, 64, stages=3, warps=8),
    config(128, 128, 64, stages=4, warps=8),
    config(64, 128, 64, stages=4, warps=4),
]
INTERPRETER_CONFIGS = [config(16, 32, 16, stages=1, warps=1)]  # (2)!
CONFIGS = INTERPRETER_CONFIGS if INTERPRETED else HOPPER_CONFIGS
# --8<-- [end:configs]


# --8<-- [start:kernel]
@triton.jit
def grouped_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """Program `pid` -> (tile row, tile column), GROUP_M tile rows at a time."""
    tiles_m, tiles_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_m = tl.minimum(tiles_m - first_m, GROUP_M)
    return first_m + (pid % per_group) % group_m, (pid % per_group) // group_m  # (1)!


@triton.jit
def epilogue(acc, bias_ptr, offs_n, N, HAS_BIAS: tl.constexpr, GELU: tl.constexpr):
    if HAS_BIAS:
        acc += tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
    if GELU:  # gelu_tanh(v) = v * sigmoid(2 z), z = sqrt(2/pi) (v + 0.044715 v^3)
        z = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
        e = tl.exp(-2.0 * tl.abs(z))
        acc = acc * tl.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return acc


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])  # (2)!
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    HAS_BIAS: tl.constexpr, GELU: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None] % M) * stride_am + offs_k[None, :] * stride_ak  # (3)!
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + (offs_n[None, :] % N) * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)  # (4)!
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    acc = epilogue(acc, bias_ptr, offs_n, N, HAS_BIAS, GELU)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


# --8<-- [end:kernel]


# --8<-- [start:tma]
@triton.jit
def matmul_tma_kernel(
    a_desc, b_desc, c_desc, bias_ptr, M, N, K, HAS_BIAS: tl.constexpr, GELU: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])  # (1)!
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = epilogue(acc, bias_ptr, offs_n, N, HAS_BIAS, GELU)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))  # (2)!


TMA_CONFIG = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_stages=3, num_warps=8)


def matmul_tma(a: torch.Tensor, b: torch.Tensor, bias=None, gelu: bool = False) -> torch.Tensor:
    """The same product through TMA: one fixed Hopper config (no autotune); CC 9.0+."""
    check_operands(a, b, bias)
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    bm, bn, bk = (TMA_CONFIG[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
    descs = (
        TensorDescriptor.from_tensor(a.contiguous(), [bm, bk]),
        TensorDescriptor.from_tensor(b.contiguous(), [bk, bn]),
        TensorDescriptor.from_tensor(c, [bm, bn]),
    )  # (3)!
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    matmul_tma_kernel[grid](*descs, bias if bias is not None else c, M, N, K,
                            HAS_BIAS=bias is not None, GELU=gelu, **TMA_CONFIG)  # fmt: skip
    return c


# --8<-- [end:tma]


# --8<-- [start:launch]
def check_operands(a: torch.Tensor, b: torch.Tensor, bias) -> None:
    for t in (a, b) + ((bias,) if bias is not None else ()):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"expected tensors, got {type(t).__name__}")
        if t.dtype != a.dtype or t.device != a.device:
            raise ValueError(f"all operands must be {a.dtype} on {a.device}, got {t.dtype} on "
                             f"{t.device}")  # fmt: skip
    allowed = CUDA_DTYPES if a.is_cuda else CPU_DTYPES
    if a.dtype not in allowed:
        raise TypeError(f"{a.dtype} is not supported on {a.device.type}; supported: {allowed}")
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"expected x (M, K) and w (K, N), got {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")  # fmt: skip
    if bias is not None and bias.shape != (b.shape[1],):
        raise ValueError(f"bias must have shape ({b.shape[1]},), got {tuple(bias.shape)}")
    if max(a.numel(), b.numel(), a.shape[0] * b.shape[1]) >= 2**31:
        raise ValueError("operands of 2**31 elements or more: the kernel's offsets are int32")


def matmul_launch(a, b, bias=None, gelu: bool = False, raw: bool = False) -> torch.Tensor:
    check_operands(a, b, bias)
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if c.numel() == 0:
        return c
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    (matmul_kernel if raw else wrap_triton(matmul_kernel))[grid](
        a, b, bias if bias is not None else c, c, M, N, K, *a.stride(), *b.stride(), *c.stride(),
        HAS_BIAS=bias is not None, GELU=gelu,
    )  # fmt: skip
    return c


# --8<-- [end:launch]


# --8<-- [start:op]
@triton_op("cookbook::linear_gelu", mutates_args=())
def linear_gelu(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    check_operands(x, w, bias)
    if not x.is_cuda:
        raise ValueError(f"the Triton kernel needs CUDA tensors, got {x.device}")
    with torch.cuda.device(x.device):
        return matmul_launch(x, w, bias, gelu=True)


def gelu_tanh_and_grad(pre: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    z = 0.7978845608028654 * (pre + 0.044715 * pre**3)
    e = torch.exp(-2.0 * z.abs())
    s = torch.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    dz = 0.7978845608028654 * (1.0 + 0.134145 * pre**2)
    return pre * s, s + pre * (2.0 * e / (1.0 + e) ** 2) * dz


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


@linear_gelu.register_kernel("cpu")
def linear_gelu_cpu(x, w, bias):
    check_operands(x, w, bias)
    c = compute_dtype(x.dtype)
    return gelu_tanh_and_grad(torch.addmm(bias.to(c), x.to(c), w.to(c)))[0].to(x.dtype)


@linear_gelu.register_fake
def _(x, w, bias):
    check_operands(x, w, bias)
    return x.new_empty((x.shape[0], w.shape[1]))


def setup_context(ctx, inputs, output) -> None:
    ctx.save_for_backward(*inputs)  # (1)!


def backward(ctx, grad):
    x, w, bias = ctx.saved_tensors
    c = compute_dtype(x.dtype)
    _, dgelu = gelu_tanh_and_grad(torch.addmm(bias.to(c), x.to(c), w.to(c)))  # (2)!
    dpre = (grad.to(c) * dgelu).to(x.dtype)
    return dpre @ w.t(), x.t() @ dpre, dpre.sum(0)  # (3)!


linear_gelu.register_autograd(backward, setup_context=setup_context)
# --8<-- [end:op]


# ----------------------------------------------------------------------------- checks
def reference(x, w, bias=None, gelu=False):
    pre = x.double() @ w.double() + (bias.double() if bias is not None else 0.0)
    return (F.gelu(pre, approximate="tanh") if gelu else pre).to(x.dtype)


def tolerance(dtype: torch.dtype, k: int) -> dict:
    """Products exact in float32, sums of k of them in float32, one rounding to the output
    dtype: one or two ulp of the result, and an absolute floor that grows with sqrt(k)."""
    eps = torch.finfo(dtype).eps
    return dict(rtol=2 * eps, atol=2 * eps * math.sqrt(max(k, 1)))


def guarded_product(a, b, bias, gelu, raw):
    """The launch into a (M, N) view of a larger sentinel-filled buffer, row stride N + 3."""
    (M, K), N = a.shape, b.shape[1]
    buffer = torch.full((M + 2, N + 3), 1234.0, dtype=a.dtype, device=a.device)
    c = buffer[1 : M + 1, 1 : N + 1]
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    (matmul_kernel if raw else wrap_triton(matmul_kernel))[grid](
        a, b, bias if bias is not None else c, c, M, N, K, *a.stride(), *b.stride(), *c.stride(),
        HAS_BIAS=bias is not None, GELU=gelu,
    )  # fmt: skip
    outside = buffer.clone()
    outside[1 : M + 1, 1 : N + 1] = 1234.0
    if not bool((outside == 1234.0).all()):
        raise AssertionError(f"the kernel wrote outside its ({M}, {N}) output")
    return c


def check_kernels(device: str, raw: bool) -> None:
    torch.manual_seed(0)
    shapes = [(1, 1, 1), (3, 5, 7), (64, 64, 64), (100, 130, 70), (17, 300, 33), (5, 0, 9)]
    dtypes = CUDA_DTYPES if device == "cuda" else (torch.float16,)
    for dtype in dtypes:
        for M, K, N in shapes:
            a = torch.randn(M, K).to(dtype).to(device)
            b = torch.randn(N, K).to(dtype).to(device).t()
            bias = torch.randn(N).to(dtype).to(device)
            for use_bias, gelu in ((False, False), (True, True)):
                got = guarded_product(a, b, bias if use_bias else None, gelu, raw)
                want = reference(a, b, bias if use_bias else None, gelu)
                torch.testing.assert_close(got, want, **tolerance(dtype, K))
        print(f"  {device} {str(dtype):14} x @ w and gelu_tanh(x @ w + b) match on {shapes}")
    empty = matmul_launch(torch.ones(0, 4, dtype=dtypes[0], device=device),
                          torch.ones(4, 3, dtype=dtypes[0], device=device), raw=raw)  # fmt: skip
    assert empty.shape == (0, 3)
    inf, nan = float("inf"), float("nan")
    a = torch.tensor([[1.0, nan], [inf, 1.0], [1.0, 1.0], [60000.0, 60000.0]]).to(dtypes[0])
    b = torch.tensor([[1.0, 0.0], [1.0, 1.0]]).to(dtypes[0])
    got = matmul_launch(a.to(device), b.to(device), raw=raw)
    want = (a.double() @ b.double()).to(dtypes[0])  # fp16: 120000 overflows to inf
    torch.testing.assert_close(got.cpu(), want, equal_nan=True)
    print(f"  {device}: NaN, Inf and an overflowing sum give what PyTorch gives: {want.tolist()}")


def check_tma(device: str) -> None:
    torch.manual_seed(0)
    for M, K, N in ((256, 128, 512), (200, 72, 264)):
        a, b = torch.randn(M, K, device=device).half(), torch.randn(K, N, device=device).half()
        bias = torch.randn(N, device=device).half()
        got = matmul_tma(a, b, bias, gelu=True)
        torch.testing.assert_close(got, reference(a, b, bias, True), **tolerance(a.dtype, K))
    print(f"  {device}: the TMA variant matches on (256, 128, 512) and (200, 72, 264)")


def expect_error(error: type[Exception], call) -> None:
    try:
        call()
    except error as exc:
        print(f"  rejected as expected: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError(f"expected {error.__name__}, got a result")


def check_operator(device: str) -> None:
    torch.manual_seed(0)
    if device == "cpu":
        x = torch.randn(4, 5, dtype=torch.float64).requires_grad_()
        w = torch.randn(5, 3, dtype=torch.float64).requires_grad_()
        b = torch.randn(3, dtype=torch.float64).requires_grad_()
        ok = torch.autograd.gradcheck(torch.ops.cookbook.linear_gelu, (x, w, b))
        print(f"gradcheck float64 on cpu: {ok}")
    dtype = torch.float16
    x = torch.randn(16, 32, device=device).to(dtype).requires_grad_()
    w = torch.randn(32, 24, device=device).to(dtype).requires_grad_()
    b = torch.randn(24, device=device).to(dtype).requires_grad_()
    tests = ["test_schema", "test_autograd_registration", "test_faketensor"]
    if device == "cuda":
        tests.append("test_aot_dispatch_dynamic")
    result = torch.library.opcheck(torch.ops.cookbook.linear_gelu.default, (x, w, b),
                                   test_utils=tests)  # fmt: skip
    print(f"opcheck linear_gelu on {device}: {result}")
    got = torch.autograd.grad(torch.ops.cookbook.linear_gelu(x, w, b).sum(), (x, w, b))
    xr, wr, br = (t.detach().double().requires_grad_() for t in (x, w, b))
    want = torch.autograd.grad(F.gelu(xr @ wr + br, approximate="tanh").sum(), (xr, wr, br))
    for g, r, k in zip(got, want, (24, 16, 16), strict=True):
        torch.testing.assert_close(g, r.to(dtype), **tolerance(dtype, k * 4))
    print(f"  {device}: gradients of x, w and bias in float16 match PyTorch's autograd")
    ok = torch.ones(4, 4, device=device, dtype=dtype)
    expect_error(ValueError, lambda: torch.ops.cookbook.linear_gelu(ok, ok[:3], ok[0]))
    expect_error(ValueError, lambda: torch.ops.cookbook.linear_gelu(ok, ok, ok[0].float()))
    if device == "cuda":
        f32 = ok.float()
        expect_error(TypeError, lambda: torch.ops.cookbook.linear_gelu(f32, f32, f32[0]))


# ----------------------------------------------------------------------------- benchmark
SQUARE = [1024, 2048, 4096, 8192]
LLM = [(4096, 4096, 14336), (4096, 14336, 4096)]  # (tokens, K, N): an MLP's up and down


# --8<-- [start:bench]
def timed_row(fn, impl: str, pass_: str, shape, dtype, flops: int, bench) -> dict:
    times = bench(fn)
    p20, _, _, p80 = statistics.quantiles(times, n=5)
    median = statistics.median(times)
    return {
        "impl": impl, "pass": pass_, "shape": list(shape), "dtype": str(dtype).split(".")[-1],
        "ms_median": round(median, 5), "ms_p20": round(p20, 5), "ms_p80": round(p80, 5),
        "repeats": len(times), "flops": flops, "tflops": round(flops / median / 1e9, 1),
    }  # fmt: skip


def benchmark(device: str, shapes, dtypes, fused_shapes, bench, tma: bool) -> list[dict]:
    eager = lambda x, w, b: F.gelu(torch.addmm(b, x, w), approximate="tanh")
    compiled = torch.compile(eager, dynamic=False)  # (1)!
    out = []
    for dtype in dtypes:
        for M, K, N in shapes:
            gen = torch.Generator().manual_seed(M + K + N)
            x = torch.randn(M, K, generator=gen).to(device, dtype)
            w = torch.randn(K, N, generator=gen).to(device, dtype)
            bias = torch.randn(N, generator=gen).to(device, dtype)
            flops = 2 * M * N * K
            plain = {"triton": lambda: matmul_launch(x, w), "cublas": lambda: torch.matmul(x, w)}
            if tma and dtype == torch.float16:
                plain["triton_tma"] = lambda: matmul_tma(x, w)
            want = torch.matmul(x.float(), w.float())  # (2)!
            for impl, fn in plain.items():
                if impl != "cublas":  # the kernels under test
                    torch.testing.assert_close(fn().float(), want, **tolerance(dtype, K))
                out.append(timed_row(fn, impl, "matmul", (M, K, N), dtype, flops, bench))
            if (M, K, N) not in fused_shapes or dtype != dtypes[0]:
                continue
            fused = {
                "triton": lambda: torch.ops.cookbook.linear_gelu(x, w, bias),
                "eager": lambda: eager(x, w, bias),
                "compile": lambda: compiled(x, w, bias),
            }
            want = F.gelu(want + bias.float(), approximate="tanh")
            for impl, fn in fused.items():
                if impl == "triton":
                    torch.testing.assert_close(fn().float(), want, **tolerance(dtype, K))
                out.append(timed_row(fn, impl, "linear_gelu", (M, K, N), dtype, flops, bench))
    return out


# --8<-- [end:bench]


def do_bench_ms(fn) -> list[float]:
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="all")


def ratio_figures(rows: list[dict]) -> dict:
    """At each square size and dtype, Triton over cuBLAS (TFLOP/s); the fused epilogue at the
    largest fused shape; each recomputable from the rows."""
    at = {(r["impl"], r["pass"], tuple(r["shape"]), r["dtype"]): r for r in rows}
    figures = {}
    for (impl, pass_, shape, dtype), r in at.items():
        if impl in ("triton", "triton_tma") and pass_ == "matmul":
            cublas = at["cublas", "matmul", shape, dtype]
            figures[f"{impl}_of_cublas_{dtype}_{'x'.join(map(str, shape))}"] = {
                "value": round(cublas["ms_median"] / r["ms_median"], 3), "statistic": "ratio",
                "op": f"{impl} over cuBLAS (torch.matmul): cuBLAS median time over {impl}'s",
                "shape": "M, K, N = " + ", ".join(map(str, shape)), "dtype": dtype,
            }  # fmt: skip
    fused = [r for r in rows if r["pass"] == "linear_gelu"]
    if fused:
        largest = max((tuple(r["shape"]) for r in fused), key=math.prod)
        dtype = fused[0]["dtype"]
        t = at["triton", "linear_gelu", largest, dtype]
        for other in ("compile", "eager"):
            figures[f"fused_{other}_over_triton"] = {
                "value": round(at[other, "linear_gelu", largest, dtype]["ms_median"]
                               / t["ms_median"], 2),
                "statistic": "ratio", "op": f"{other} gelu_tanh(x @ w + b) over Triton's, median",
                "shape": "M, K, N = " + ", ".join(map(str, largest)), "dtype": dtype,
            }  # fmt: skip
    return figures


if __name__ == "__main__":
    import json

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    # --8<-- [start:call]
    x, w, b = torch.randn(2, 3), torch.randn(3, 4), torch.zeros(4)
    out = torch.ops.cookbook.linear_gelu(x, w, b)
    print(f"linear_gelu on CPU tensors: {tuple(out.shape)} {out.dtype}")
    # --8<-- [end:call]
    if INTERPRETED:
        check_kernels("cpu", raw=True)
        check_tma("cpu")
    for device in devices:
        check_operator(device)
    if torch.cuda.is_available():
        check_kernels("cuda", raw=False)
        tma = torch.cuda.get_device_capability() >= (9, 0)
        if tma:
            check_tma("cuda")
        shapes = [(s, s, s) for s in SQUARE] + LLM
        rows_ = benchmark("cuda", shapes, CUDA_DTYPES, [(4096, 4096, 4096), *LLM],
                          do_bench_ms, tma)  # fmt: skip
        for r in rows_:
            print(f"benchmark: {json.dumps(r)}")
        print("figures: " + json.dumps(ratio_figures(rows_)))
    print("matmul: all checks passed")
