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
CPU kernel and autograd whose forward saves the pre-activation for a backward without a second
product; checked against PyTorch. On a GPU, a benchmark over square and LLM-like shapes against
cuBLAS (torch.matmul), eager and torch.compile, in kernel time and in call time, printed as rows.
"""

import math
import os
import statistics
import time

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
TMA_CONFIG = dict(
    BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_stages=3, num_warps=8
)  # (3)!


def quick_bench(fn, quantiles):
    return triton.testing.do_bench(fn, warmup=5, rep=20, quantiles=quantiles)  # (4)!


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
    """(pre-activation, output): x @ w + bias, and gelu_tanh of it."""
    if HAS_BIAS:
        acc += tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
    out = acc
    if GELU:  # gelu_tanh(v) = v * sigmoid(2 z), z = sqrt(2/pi) (v + 0.044715 v^3)
        z = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
        e = tl.exp(-2.0 * tl.abs(z))
        r = 1.0 / (1.0 + e)
        out = acc * tl.where(z >= 0, r, e * r)
    return acc, out


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"], do_bench=quick_bench)  # (2)!
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, bias_ptr, c_ptr, pre_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    HAS_BIAS: tl.constexpr, GELU: tl.constexpr, SAVE_PRE: tl.constexpr,
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
    pre, out = epilogue(acc, bias_ptr, offs_n, N, HAS_BIAS, GELU)
    offs = offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if SAVE_PRE:  # (5)!
        tl.store(pre_ptr + offs, pre.to(pre_ptr.dtype.element_ty), mask=mask)
    tl.store(c_ptr + offs, out.to(c_ptr.dtype.element_ty), mask=mask)


# --8<-- [end:kernel]


# --8<-- [start:tma]
@triton.jit
def matmul_tma_kernel(
    a_desc, b_desc, c_desc, pre_desc, bias_ptr, M, N, K,
    HAS_BIAS: tl.constexpr, GELU: tl.constexpr, SAVE_PRE: tl.constexpr, B_KN: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    PROGRAMS: tl.constexpr,
):  # fmt: skip
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tiles, PROGRAMS, flatten=True):  # (1)!
        pid_m, pid_n = grouped_tile(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])  # (2)!
            if B_KN:
                b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
            else:  # (3)!
                b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K]).T
            acc = tl.dot(a, b, acc)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        pre, out = epilogue(acc, bias_ptr, offs_n, N, HAS_BIAS, GELU)
        if SAVE_PRE:
            pre_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], pre.to(pre_desc.dtype))
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], out.to(c_desc.dtype))  # (4)!


def tma_usable(a: torch.Tensor, b: torch.Tensor) -> bool:
    """TMA needs CC 9.0+, a unit stride on the last dimension and 16-byte aligned rows."""
    if a.is_cuda and torch.cuda.get_device_capability(a.device) < (9, 0):
        return False
    (M, K), N, size = a.shape, b.shape[1], a.element_size()
    b_rows = b if b.stride(1) == 1 else b.t()
    start = lambda t: t.storage_offset() * size if traced(t) else t.data_ptr()
    aligned = lambda t: all(n % 16 == 0 for n in (start(t), *(s * size for s in t.stride()[:-1])))
    return (
        min(M, N, K) > 0
        and a.stride(1) == b_rows.stride(1) == 1
        and N * size % 16 == 0
        and (aligned(a) and aligned(b_rows))
    )  # (5)!


def matmul_tma(a, b, bias=None, gelu: bool = False, pre=None, raw: bool = False):
    """The same product through TMA with one fixed config, on a persistent grid; the caller
    checks tma_usable."""
    check_operands(a, b, bias)
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    bm, bn, bk = (TMA_CONFIG[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
    b_kn = b.stride(1) == 1
    b_desc = (
        TensorDescriptor.from_tensor(b, [bk, bn])
        if b_kn
        else TensorDescriptor.from_tensor(b.t(), [bn, bk])
    )  # (6)!
    c_desc = TensorDescriptor.from_tensor(c, [bm, bn])
    pre_desc = TensorDescriptor.from_tensor(pre, [bm, bn]) if pre is not None else c_desc
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count if a.is_cuda else 2
    programs = min(sms, triton.cdiv(M, bm) * triton.cdiv(N, bn))
    (matmul_tma_kernel if raw else wrap_triton(matmul_tma_kernel))[(programs,)](
        TensorDescriptor.from_tensor(a, [bm, bk]), b_desc, c_desc, pre_desc,
        bias if bias is not None else c, M, N, K, HAS_BIAS=bias is not None, GELU=gelu,
        SAVE_PRE=pre is not None, B_KN=b_kn, PROGRAMS=programs, **TMA_CONFIG,
    )  # fmt: skip
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


def matmul_launch(a, b, bias=None, gelu: bool = False, pre=None, raw: bool = False):
    check_operands(a, b, bias)
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if c.numel() == 0:
        return c
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    (matmul_kernel if raw else wrap_triton(matmul_kernel))[grid](
        a, b, bias if bias is not None else c, c, pre if pre is not None else c, M, N, K,
        *a.stride(), *b.stride(), *c.stride(), HAS_BIAS=bias is not None, GELU=gelu,
        SAVE_PRE=pre is not None,
    )  # fmt: skip
    return c


def traced(t: torch.Tensor) -> bool:
    """True while torch.compile or export traces the operator: its tensors hold no data."""
    return torch._subclasses.fake_tensor.is_fake(t)


def fused_forward(x, w, bias, raw: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """(gelu_tanh(x @ w + bias), x @ w + bias): TMA where it can, the pointer kernel otherwise."""
    pre = torch.empty((x.shape[0], w.shape[1]), dtype=x.dtype, device=x.device)
    use_tma = not traced(x) and tma_usable(x, w)  # (1)!
    product = matmul_tma if use_tma else matmul_launch
    return product(x, w, bias, gelu=True, pre=pre, raw=raw), pre


@triton.jit
def gelu_grad_kernel(grad_ptr, pre_ptr, dpre_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(grad_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    v = tl.load(pre_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    z = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    e = tl.exp(-2.0 * tl.abs(z))
    r = 1.0 / (1.0 + e)
    dz = 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * v * v)
    dgelu = tl.where(z >= 0, r, e * r) + v * 2.0 * e * r * r * dz
    tl.store(dpre_ptr + offs, (g * dgelu).to(dpre_ptr.dtype.element_ty), mask=mask)


def fused_backward(grad, x, w, pre, raw: bool = False):
    """dx, dw, dbias from the saved pre-activation: one pass for gelu's derivative, then two
    products in the input dtype (cuBLAS)."""
    grad, dpre = grad.contiguous(), torch.empty_like(pre)
    if pre.numel():
        grid = (triton.cdiv(pre.numel(), 4096),)
        (gelu_grad_kernel if raw else wrap_triton(gelu_grad_kernel))[grid](
            grad, pre, dpre, pre.numel(), BLOCK=4096, num_warps=8
        )
    return dpre @ w.t(), x.t() @ dpre, dpre.sum(0)  # (2)!


# --8<-- [end:launch]


# --8<-- [start:op]
@triton_op("cookbook::linear_gelu", mutates_args=())
def linear_gelu_op(
    x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    check_operands(x, w, bias)
    if not x.is_cuda:
        raise ValueError(f"the Triton kernel needs CUDA tensors, got {x.device}")
    with torch.cuda.device(x.device):
        return fused_forward(x, w, bias)  # (1)!


@triton_op("cookbook::linear_gelu_backward", mutates_args=())
def linear_gelu_backward(
    grad: torch.Tensor, x: torch.Tensor, w: torch.Tensor, pre: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    check_operands(x, w, None)
    with torch.cuda.device(x.device):
        return fused_backward(grad, x, w, pre)


def linear_gelu(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """What a model calls: gelu_tanh(x @ w + bias) only."""
    return torch.ops.cookbook.linear_gelu(x, w, bias)[0]


def gelu_tanh_and_grad(pre: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    z = 0.7978845608028654 * (pre + 0.044715 * pre**3)
    e = torch.exp(-2.0 * z.abs())
    s = torch.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    dz = 0.7978845608028654 * (1.0 + 0.134145 * pre**2)
    return pre * s, s + pre * (2.0 * e / (1.0 + e) ** 2) * dz


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


@linear_gelu_op.register_kernel("cpu")
def linear_gelu_cpu(x, w, bias):
    check_operands(x, w, bias)
    c = compute_dtype(x.dtype)
    pre = torch.addmm(bias.to(c), x.to(c), w.to(c))
    return gelu_tanh_and_grad(pre)[0].to(x.dtype), pre.to(x.dtype)


@linear_gelu_backward.register_kernel("cpu")
def linear_gelu_backward_cpu(grad, x, w, pre):
    check_operands(x, w, None)
    c = compute_dtype(x.dtype)
    dpre = (grad.to(c) * gelu_tanh_and_grad(pre.to(c))[1]).to(x.dtype)
    return dpre @ w.t(), x.t() @ dpre, dpre.sum(0)


@linear_gelu_op.register_fake
def _(x, w, bias):
    check_operands(x, w, bias)
    return (x.new_empty((x.shape[0], w.shape[1])), x.new_empty((x.shape[0], w.shape[1])))


@linear_gelu_backward.register_fake
def _(grad, x, w, pre):
    check_operands(x, w, None)
    return torch.empty_like(x), torch.empty_like(w), w.new_empty((w.shape[1],))


def setup_context(ctx, inputs, output) -> None:
    x, w, _ = inputs
    ctx.mark_non_differentiable(output[1])
    ctx.save_for_backward(x, w, output[1])  # (2)!


def backward(ctx, grad, _):
    x, w, pre = ctx.saved_tensors
    return torch.ops.cookbook.linear_gelu_backward(grad, x, w, pre)  # (3)!


linear_gelu_op.register_autograd(backward, setup_context=setup_context)
# --8<-- [end:op]


class LinearGeluFunction(torch.autograd.Function):
    """The same kernels without an operator: raw launches in an autograd.Function. Only the
    host cost per call is measured with it."""

    @staticmethod
    def forward(ctx, x, w, bias):
        out, pre = fused_forward(x, w, bias, raw=True)
        ctx.save_for_backward(x, w, pre)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, w, pre = ctx.saved_tensors
        return fused_backward(grad, x, w, pre, raw=True)


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
    """The pointer kernel into (M, N) views of larger sentinel-filled buffers, row stride N + 3:
    the output and, with the epilogue, the saved pre-activation."""
    (M, K), N = a.shape, b.shape[1]
    buffers = [torch.full((M + 2, N + 3), 1234.0, dtype=a.dtype, device=a.device) for _ in "cp"]
    c, pre = (buf[1 : M + 1, 1 : N + 1] for buf in buffers)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    (matmul_kernel if raw else wrap_triton(matmul_kernel))[grid](
        a, b, bias if bias is not None else c, c, pre, M, N, K, *a.stride(), *b.stride(),
        *c.stride(), HAS_BIAS=bias is not None, GELU=gelu, SAVE_PRE=gelu,
    )  # fmt: skip
    for buf in buffers if gelu else buffers[:1]:
        outside = buf.clone()
        outside[1 : M + 1, 1 : N + 1] = 1234.0
        if not bool((outside == 1234.0).all()):
            raise AssertionError(f"the kernel wrote outside its ({M}, {N}) output")
    return c, pre


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
                got, pre = guarded_product(a, b, bias if use_bias else None, gelu, raw)
                want = reference(a, b, bias if use_bias else None, gelu)
                torch.testing.assert_close(got, want, **tolerance(dtype, K))
                if gelu:
                    want_pre = reference(a, b, bias if use_bias else None)
                    torch.testing.assert_close(pre, want_pre, **tolerance(dtype, K))
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


def check_tma(device: str, raw: bool) -> None:
    torch.manual_seed(0)
    dtypes = CUDA_DTYPES if device == "cuda" else (torch.float16,)
    for dtype in dtypes:
        for M, K, N in ((256, 128, 512), (200, 72, 264)):
            a = torch.randn(M, K, device=device).to(dtype)
            w_kn = torch.randn(K, N, device=device).to(dtype)
            w_nk = torch.randn(N, K, device=device).to(dtype).t()  # an nn.Linear weight, as used
            bias = torch.randn(N, device=device).to(dtype)
            for w in (w_kn, w_nk):
                assert tma_usable(a, w)
                pre = torch.empty(M, N, device=device, dtype=dtype)
                got = matmul_tma(a, w, bias, gelu=True, pre=pre, raw=raw)
                torch.testing.assert_close(got, reference(a, w, bias, True), **tolerance(dtype, K))
                torch.testing.assert_close(pre, reference(a, w, bias), **tolerance(dtype, K))
    print(f"  {device}: the TMA variant matches on (256, 128, 512) and (200, 72, 264), w as (K, N) "
          "and as the transpose of an (N, K) weight")  # fmt: skip
    odd = torch.randn(8, 7, device=device).half(), torch.randn(7, 16, device=device).half()
    print(f"  {device}: K = 7 in float16 (14-byte rows), tma_usable: {tma_usable(*odd)}")


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
        ok = torch.autograd.gradcheck(linear_gelu, (x, w, b))
        print(f"gradcheck float64 on cpu: {ok}")
    dtype = torch.float16
    for K in (32, 7):  # TMA where the GPU has it, then the pointer kernel's fallback
        x = torch.randn(16, K, device=device).to(dtype).requires_grad_()
        w = torch.randn(K, 24, device=device).to(dtype).requires_grad_()
        b = torch.randn(24, device=device).to(dtype).requires_grad_()
        tests = ["test_schema", "test_autograd_registration", "test_faketensor"]
        if device == "cuda":
            tests.append("test_aot_dispatch_dynamic")
        result = torch.library.opcheck(torch.ops.cookbook.linear_gelu.default, (x, w, b),
                                       test_utils=tests)  # fmt: skip
        print(f"opcheck linear_gelu on {device}, K = {K}: {result}")
        got = torch.autograd.grad(linear_gelu(x, w, b).sum(), (x, w, b))
        xr, wr, br = (t.detach().double().requires_grad_() for t in (x, w, b))
        want = torch.autograd.grad(F.gelu(xr @ wr + br, approximate="tanh").sum(), (xr, wr, br))
        for g, r, k in zip(got, want, (24, 16, 16), strict=True):
            torch.testing.assert_close(g, r.to(dtype), **tolerance(dtype, k * 4))
    print(f"  {device}: gradients of x, w and bias in float16 match PyTorch's autograd")
    ok = torch.ones(4, 4, device=device, dtype=dtype)
    expect_error(ValueError, lambda: linear_gelu(ok, ok[:3], ok[0]))
    expect_error(ValueError, lambda: linear_gelu(ok, ok, ok[0].float()))
    if device == "cuda":
        f32 = ok.float()
        expect_error(TypeError, lambda: linear_gelu(f32, f32, f32[0]))


# ----------------------------------------------------------------------------- timing
# --8<-- [start:harness]
FLUSH_BYTES = 256 * 2**20  # more than the H200's 60 MB of L2
KERNEL_REPEATS = 10
CALL_REPEATS = 100


@triton.jit
def flush_l2_kernel(buf_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(buf_ptr + offs, 0, mask=offs < n)


def l2_flusher():
    buf = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    grid = (triton.cdiv(buf.numel(), 8192),)
    return lambda: flush_l2_kernel[grid](buf, buf.numel(), BLOCK=8192)


def kernel_times(fns: list, repeats: int = KERNEL_REPEATS) -> list[list[float]]:
    """Kernel time in ms, `repeats` calls of each fn: the device time of every kernel, copy and
    fill a call launched, read by the profiler (CUPTI), the L2 cache flushed before each call."""
    flush = l2_flusher()  # (1)!
    for fn in fns:  # a first call compiles what it has not yet (a compiled peer's new graph)
        fn()
    flush()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for fn in fns:
            for _ in range(repeats):
                flush()
                fn()
        flush()
        torch.cuda.synchronize()
    device_events = [
        e for e in prof.profiler.kineto_results.events()
        if e.device_type() == torch.autograd.DeviceType.CUDA
    ]  # fmt: skip
    times, current = [], None
    for e in sorted(device_events, key=lambda e: e.start_ns()):
        if e.name() == "flush_l2_kernel":  # (2)!
            if current is not None:
                times.append(current / 1e6)
            current = 0
        elif current is not None:
            current += e.duration_ns()
    if len(times) != len(fns) * repeats:
        raise RuntimeError(f"the profiler saw {len(times)} calls, not {len(fns) * repeats}")
    return [times[i * repeats : (i + 1) * repeats] for i in range(len(fns))]


def call_times(fns: list, repeats: int = CALL_REPEATS) -> list[list[float]]:
    """Call time in ms, host launch included, `repeats` calls of each fn: CUDA events around
    each call, each started on an idle GPU with the L2 cache flushed, so that all the host work
    before the launch counts. The fns take turns, one call each per round: whatever drifts
    while they are timed (clocks, the host's load) moves them all alike."""
    flush, times = l2_flusher(), [[] for _ in fns]
    for fn in fns:
        for _ in range(3):
            fn()
    for _ in range(repeats):
        for fn, out in zip(fns, times, strict=True):
            flush()
            torch.cuda.synchronize()  # (3)!
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            out.append(start.elapsed_time(end))
    return times


RATES = {"bytes": ("gbps", 1e6), "flops": ("tflops", 1e9)}  # amount / ms / scale


def timed_row(impl, pass_, shape, dtype, clock, times, amount_key, amount) -> dict:
    p20, _, _, p80 = statistics.quantiles(times, n=5)
    median = round(statistics.median(times), 5)
    rate, scale = RATES[amount_key]
    return {
        "impl": impl, "pass": pass_, "shape": list(shape), "dtype": str(dtype).split(".")[-1],
        "clock": clock, "ms_median": median, "ms_p20": round(p20, 5), "ms_p80": round(p80, 5),
        "repeats": len(times), amount_key: amount, rate: round(amount / median / scale, 1),
    }  # fmt: skip


def measure(calls: dict, shape, dtype) -> list[dict]:
    """calls: {(impl, pass): (fn, amount_key, amount)}. Kernel time in one profiler session,
    then call time, for each."""
    keys = list(calls)
    kernel = kernel_times([calls[k][0] for k in keys])
    call = call_times([calls[k][0] for k in keys])
    rows = []
    for (impl, pass_), k_times, c_times in zip(keys, kernel, call, strict=True):
        _, amount_key, amount = calls[impl, pass_]
        rows.append(timed_row(impl, pass_, shape, dtype, "kernel", k_times, amount_key, amount))
        rows.append(timed_row(impl, pass_, shape, dtype, "call", c_times, amount_key, amount))
    return rows


def host_us(routes: dict, calls: int = 200, repeats: int = 5) -> dict[str, list[float]]:
    """Per route, wall-clock µs per call over `calls` back-to-back calls on inputs small enough
    that the GPU waits for the host: what one call costs the CPU. The routes take turns, one
    batch of calls each per repeat, so that a host that slows down or speeds up mid-run moves
    them all alike."""
    for fn in routes.values():
        for _ in range(20):
            fn()
    torch.cuda.synchronize()
    out = {route: [] for route in routes}
    for _ in range(repeats):
        for route, fn in routes.items():  # (4)!
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
            out[route].append((time.perf_counter() - start) / calls * 1e6)
    return out


def captured(fn) -> torch.cuda.CUDAGraph:
    """fn captured in a CUDA graph, after warm-up calls on a side stream (PyTorch's recipe)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph


# --8<-- [end:harness]
# ----------------------------------------------------------------------------- figures
def floor3(x: float) -> float:
    """Three decimals, rounded down: a ratio is never rounded up into a met target."""
    return math.floor(x * 1000) / 1000


def ratio_figure(num: dict, den: dict, op: str, shape: str, dtype: str) -> dict:
    """num's kernel time over den's, with the spread its 20/80 % quantiles allow."""
    return {
        "value": floor3(num["ms_median"] / den["ms_median"]),
        "low": floor3(num["ms_p20"] / den["ms_p80"]), "high": floor3(num["ms_p80"] / den["ms_p20"]),
        "spread": "p20-p80", "statistic": "ratio", "clock": "kernel", "op": op, "shape": shape,
        "dtype": dtype,
    }  # fmt: skip


def host_figures(host: dict, shape: str, dtype: str) -> dict:
    """route -> µs per call; each a median of repeats with its range."""
    return {
        f"host_us_{route}": {
            "value": round(statistics.median(us), 1),
            "unit": "us",
            "statistic": "median",
            "repeats": len(us),
            "low": round(min(us), 1),
            "high": round(max(us), 1),
            "spread": "min-max",
            "compile": "excluded",
            "clock": "wall",
            "op": f"host time of one forward call through {route}",
            "shape": shape,
            "dtype": dtype,
        }  # fmt: skip
        for route, us in host.items()
    }


# ----------------------------------------------------------------------------- benchmark
SQUARE = [1024, 2048, 4096, 8192]
LLM = [(4096, 4096, 14336), (4096, 14336, 4096)]  # (tokens, K, N): an MLP's up and down
HOST_SHAPE = (64, 256, 256)  # a small product: the GPU waits for the host


def agree(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    """A result against a float32 reference: within a few units of the dtype's rounding,
    measured against the largest value."""
    eps = torch.finfo(got.dtype).eps
    err = (got.float() - want.float()).abs().max().item() / want.abs().max().item()
    if not err <= 8 * eps:
        raise AssertionError(f"{what}: error {err:.2e} of the largest value, more than 8 eps")


# --8<-- [start:bench]
def benchmark(shapes, dtypes, fused_shapes) -> list[dict]:
    eager = lambda x, w, b: F.gelu(torch.addmm(b, x, w), approximate="tanh")
    out = []
    for dtype in dtypes:
        for M, K, N in shapes:
            gen = torch.Generator("cuda").manual_seed(M + K + N)
            x = torch.randn(M, K, generator=gen, device="cuda", dtype=dtype)
            w = torch.randn(N, K, generator=gen, device="cuda", dtype=dtype).t()  # (1)!
            flops = 2 * M * N * K
            want = x.float() @ w.float()
            plain = {"triton": lambda: matmul_launch(x, w, raw=True),  # (2)!
                     "triton_tma": lambda: matmul_tma(x, w, raw=True),
                     "cublas": lambda: torch.matmul(x, w)}  # fmt: skip
            if not tma_usable(x, w):
                del plain["triton_tma"]
            for impl, fn in plain.items():
                agree(fn(), want, f"{impl} {dtype} {(M, K, N)}")
            calls = {(impl, "matmul"): (fn, "flops", flops) for impl, fn in plain.items()}
            if (M, K, N) in fused_shapes:
                torch._dynamo.reset()  # (3)!
                bias = torch.randn(N, generator=gen, device="cuda", dtype=dtype)
                grad = torch.randn(M, N, generator=gen, device="cuda", dtype=dtype)
                pre = torch.addmm(bias, x, w)
                fused = {
                    "triton": linear_gelu,
                    "eager": eager,
                    "compile": torch.compile(eager, dynamic=False),
                    "compile_max": torch.compile(
                        eager, dynamic=False, mode="max-autotune-no-cudagraphs"
                    ),
                }  # (4)!
                ref = [t.detach().float().requires_grad_() for t in (x, w, bias)]
                want = eager(*ref)
                want_grads = torch.autograd.grad(want, ref, grad.float())
                for impl, fn in fused.items():
                    leaves = [t.detach().requires_grad_() for t in (x, w, bias)]
                    result = fn(*leaves)
                    agree(result, want, f"{impl} gelu_tanh(x @ w + b)")
                    got = torch.autograd.grad(result, leaves, grad, retain_graph=True)
                    for name, g, r in zip(("dx", "dw", "dbias"), got, want_grads, strict=True):
                        agree(g, r, f"{impl} {name}")
                    calls[impl, "linear_gelu"] = (lambda fn=fn: fn(x, w, bias), "flops", flops)
                    backward = lambda r=result, ts=leaves: torch.autograd.grad(
                        r, ts, grad, retain_graph=True
                    )
                    calls[impl, "linear_gelu_backward"] = (backward, "flops", 2 * flops)  # (5)!
                calls["cublas", "linear_gelu"] = (lambda: torch.addmm(bias, x, w), "flops", flops)
                calls["cublas", "linear_gelu_backward"] = (
                    lambda: (pre @ w.t(), x.t() @ pre),
                    "flops",
                    2 * flops,
                )  # (6)!
            out += measure(calls, (M, K, N), dtype)
    return out


# --8<-- [end:bench]


def host_costs(dtype=torch.float16) -> dict:
    """µs of host time per forward call, by route, on a small input that requires grad."""
    torch._dynamo.reset()
    M, K, N = HOST_SHAPE
    x, w, b = (torch.randn(*s, device="cuda", dtype=dtype).requires_grad_()
               for s in ((M, K), (K, N), (N,)))  # fmt: skip
    op = lambda x, w, b: linear_gelu(x, w, b)
    eager = lambda x, w, b: F.gelu(torch.addmm(b, x, w), approximate="tanh")
    compiled_op = torch.compile(op, dynamic=False)
    graphed_op = torch.compile(op, dynamic=False, mode="reduce-overhead")
    x_inference, w_inference, b_inference = (
        x.detach(),
        w.detach(),
        b.detach(),
    )  # CUDA graphs replay a forward: inputs that do not require grad
    compiled_eager = torch.compile(eager, dynamic=False)
    pre = torch.empty(M, N, device="cuda", dtype=dtype)
    xd, wd, bd = x.detach(), w.detach(), b.detach()  # plain tensors: a launch records no autograd
    routes = {
        "raw_launch": lambda: fused_forward(x, w, b, raw=True),
        "raw_launch_pointer": lambda: matmul_launch(xd, wd, bd, gelu=True, pre=pre, raw=True),
        "wrap_triton_outside_op": lambda: matmul_launch(xd, wd, bd, gelu=True, pre=pre),
        "triton_op": lambda: linear_gelu(x, w, b),
        "triton_op_in_compile": lambda: compiled_op(x, w, b),
        "triton_op_cuda_graph": lambda: graphed_op(x_inference, w_inference, b_inference),
        "autograd_function": lambda: LinearGeluFunction.apply(x, w, b),
        "autograd_function_cuda_graph": captured(
            lambda: LinearGeluFunction.apply(x_inference, w_inference, b_inference)
        ).replay,
        "eager": lambda: eager(x, w, b),
        "compile": lambda: compiled_eager(x, w, b),
    }
    return host_us(routes)


def matmul_figures(rows: list[dict]) -> dict:
    """From kernel times: each Triton product over cuBLAS at each shape; the fused operator
    against eager, torch.compile and the cuBLAS products alone, per pass, shape and dtype, and
    the lowest over the fused shapes."""
    at = {(r["impl"], r["pass"], tuple(r["shape"]), r["dtype"]): r
          for r in rows if r["clock"] == "kernel"}  # fmt: skip
    figures, lowest = {}, {}
    for (impl, pass_, shape, dtype), r in at.items():
        where = "M, K, N = " + ", ".join(map(str, shape))
        tag = f"{dtype}_{'x'.join(map(str, shape))}"
        if pass_ == "matmul" and impl != "cublas":
            cublas = at["cublas", pass_, shape, dtype]
            figures[f"{impl}_of_cublas_{tag}"] = ratio_figure(
                cublas, r, f"cuBLAS kernel time over {impl}'s", where, dtype)  # fmt: skip
        if pass_ != "matmul" and impl == "triton":
            for other in ("eager", "compile", "compile_max", "cublas"):
                o = at[other, pass_, shape, dtype]
                kind = f"{other}_over_triton"
                figure = ratio_figure(o, r, f"{pass_}: {other}'s kernel time over Triton's",
                                      where, dtype)  # fmt: skip
                figures[f"{pass_}_{tag}_{kind}"] = figure
                lowest.setdefault((pass_, dtype, kind), []).append(figure)
            e, c = at["eager", pass_, shape, dtype], at["cublas", pass_, shape, dtype]
            figure = ratio_figure(e, c, f"{pass_}: eager's kernel time over the cuBLAS "
                                  "products' alone", where, dtype)  # fmt: skip
            figures[f"{pass_}_{tag}_eager_over_cublas"] = figure
            lowest.setdefault((pass_, dtype, "eager_over_cublas"), []).append(figure)
    for (pass_, dtype, kind), found in lowest.items():
        figure = min(found, key=lambda f: f["value"])
        figures[f"{pass_}_{dtype}_{kind}"] = {
            **figure,
            "op": f"{figure['op']}, the lowest of {len(found)} shapes",
        }
    return figures


if __name__ == "__main__":
    import json

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    # --8<-- [start:call]
    x, w, b = torch.randn(2, 3), torch.randn(3, 4), torch.zeros(4)
    out = linear_gelu(x, w, b)
    print(f"linear_gelu on CPU tensors: {tuple(out.shape)} {out.dtype}")
    # --8<-- [end:call]
    if INTERPRETED:
        check_kernels("cpu", raw=True)
        check_tma("cpu", raw=True)
    for device in devices:
        check_operator(device)
    if torch.cuda.is_available():
        check_kernels("cuda", raw=False)
        if torch.cuda.get_device_capability() >= (9, 0):
            check_tma("cuda", raw=True)  # the kernel itself; the operator's path is checked above
        shapes = [(s, s, s) for s in SQUARE] + LLM
        rows_ = benchmark(shapes, CUDA_DTYPES, LLM)
        for r in rows_:
            print(f"benchmark: {json.dumps(r)}")
        figures = matmul_figures(rows_)
        figures.update(host_figures(host_costs(), f"M, K, N = {HOST_SHAPE}, requires grad",
                                    "float16"))  # fmt: skip
        print("figures: " + json.dumps(figures))
    print("matmul: all checks passed")
