# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = true }
# timeout = 300
# ///
"""GeGLU with the tanh GELU, fused: out = gelu_tanh(gate) * up, forward and backward.

On a CUDA GPU:  python geglu.py
On a CPU:       TRITON_INTERPRET=1 python geglu.py
An operator (torch.library.triton_op) with a CPU kernel, autograd, a fake implementation; its
kernels checked against PyTorch on an input matrix (dtypes, empty, one element, odd sizes,
strided views, NaN/Inf, a guard around the output). On a GPU, a benchmark over LLM-like shapes
against PyTorch eager, torch.compile and the HBM limit, printed as rows a test can recompute.
"""

import math
import os
import statistics

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
BLOCK_N = 1024


# --8<-- [start:kernels]
@triton.jit
def _sigmoid_2z(z):
    """sigmoid(2 z) without overflow: exp of a non-positive number only."""
    e = tl.exp(-2.0 * tl.abs(z))
    return tl.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e)), e


@triton.jit
def geglu_fwd_kernel(
    gate_ptr, up_ptr, out_ptr, N, stride_g, stride_u, stride_o, BLOCK_N: tl.constexpr
):  # fmt: skip
    row = tl.program_id(0).to(tl.int64)  # (1)!
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    g = tl.load(gate_ptr + row * stride_g + cols, mask=mask)
    u = tl.load(up_ptr + row * stride_u + cols, mask=mask)
    if g.dtype != tl.float64:  # (2)!
        g, u = g.to(tl.float32), u.to(tl.float32)
    z = 0.7978845608028654 * (g + 0.044715 * g * g * g)  # sqrt(2/pi) * (x + 0.044715 x^3)
    s, _ = _sigmoid_2z(z)
    out = g * s * u  # (3)!
    tl.store(out_ptr + row * stride_o + cols, out.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def geglu_bwd_kernel(
    grad_ptr, gate_ptr, up_ptr, dgate_ptr, dup_ptr, N,
    stride_d, stride_g, stride_u, stride_dg, stride_du, BLOCK_N: tl.constexpr,
):  # fmt: skip
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    d = tl.load(grad_ptr + row * stride_d + cols, mask=mask)
    g = tl.load(gate_ptr + row * stride_g + cols, mask=mask)
    u = tl.load(up_ptr + row * stride_u + cols, mask=mask)
    if g.dtype != tl.float64:
        d, g, u = d.to(tl.float32), g.to(tl.float32), u.to(tl.float32)
    z = 0.7978845608028654 * (g + 0.044715 * g * g * g)
    s, e = _sigmoid_2z(z)
    dz = 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * g * g)
    dgelu = s + g * (2.0 * e / ((1.0 + e) * (1.0 + e))) * dz  # (4)!
    tl.store(dgate_ptr + row * stride_dg + cols, (d * u * dgelu).to(dgate_ptr.dtype.element_ty),
             mask=mask)  # fmt: skip
    tl.store(dup_ptr + row * stride_du + cols, (d * g * s).to(dup_ptr.dtype.element_ty), mask=mask)


# --8<-- [end:kernels]


# --8<-- [start:launch]
def check_inputs(*tensors: torch.Tensor) -> None:
    """One shape, one floating dtype of DTYPES, one device; anything else is refused."""
    first = tensors[0]
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"expected tensors, got {type(t).__name__}")
        if t.shape != first.shape:
            raise ValueError(f"shapes differ: {tuple(first.shape)} vs {tuple(t.shape)}")
        if t.dtype != first.dtype:
            raise TypeError(f"dtypes differ: {first.dtype} vs {t.dtype}; cast one first")
        if t.device != first.device:
            raise ValueError(f"tensors are on different devices: {first.device}, {t.device}")
    if first.dtype not in DTYPES:
        raise TypeError(f"{first.dtype} is not supported; supported: {DTYPES}")


def rows(t: torch.Tensor) -> torch.Tensor:
    """A (rows, N) view whose last dimension is contiguous; a copy only when it must be."""
    t2 = t.reshape(-1, t.shape[-1]) if t.dim() else t.reshape(1, 1)  # (1)!
    return t2 if t2.stride(-1) == 1 else t2.contiguous()


def launch(kernel, grid, *args, raw: bool = False, **meta) -> None:
    """In an operator, kernels go through wrap_triton (traceable by torch.compile); `raw` calls
    them directly, as the interpreter needs on this lock."""
    (kernel if raw else wrap_triton(kernel))[grid](*args, **meta)


def geglu_forward(gate, up, out=None, raw: bool = False) -> torch.Tensor:
    check_inputs(gate, up)
    out = torch.empty(gate.shape, dtype=gate.dtype, device=gate.device) if out is None else out
    if out.numel() == 0:  # (2)!
        return out
    g, u, o = rows(gate), rows(up), out.view(-1, out.shape[-1]) if out.dim() else out.view(1, 1)
    grid = (g.shape[0], triton.cdiv(g.shape[1], BLOCK_N))
    launch(geglu_fwd_kernel, grid, g, u, o, g.shape[1], g.stride(0), u.stride(0), o.stride(0),
           BLOCK_N=BLOCK_N, raw=raw)  # fmt: skip
    return out


def geglu_backward_launch(grad, gate, up, raw: bool = False):
    check_inputs(grad, gate, up)
    dgate = torch.empty(gate.shape, dtype=gate.dtype, device=gate.device)
    dup = torch.empty(gate.shape, dtype=gate.dtype, device=gate.device)
    if dgate.numel() == 0:
        return dgate, dup
    d, g, u = rows(grad), rows(gate), rows(up)
    dg, du = dgate.view(d.shape), dup.view(d.shape)
    grid = (g.shape[0], triton.cdiv(g.shape[1], BLOCK_N))
    launch(geglu_bwd_kernel, grid, d, g, u, dg, du, g.shape[1], d.stride(0), g.stride(0),
           u.stride(0), dg.stride(0), du.stride(0), BLOCK_N=BLOCK_N, raw=raw)  # fmt: skip
    return dgate, dup


# --8<-- [end:launch]


# --8<-- [start:op]
def check_cuda(t: torch.Tensor) -> None:
    if t.device.type != "cuda":
        raise ValueError(f"the Triton kernels need CUDA tensors, got {t.device}")


@triton_op("cookbook::geglu", mutates_args=())
def geglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    check_inputs(gate, up)
    check_cuda(gate)
    with torch.cuda.device(gate.device):
        return geglu_forward(gate, up)


@triton_op("cookbook::geglu_backward", mutates_args=())
def geglu_backward(
    grad: torch.Tensor, gate: torch.Tensor, up: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    check_inputs(grad, gate, up)
    check_cuda(gate)
    with torch.cuda.device(gate.device):
        return geglu_backward_launch(grad, gate, up)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


@geglu.register_kernel("cpu")  # (1)!
def geglu_cpu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    check_inputs(gate, up)
    c = compute_dtype(gate.dtype)
    return (F.gelu(gate.to(c), approximate="tanh") * up.to(c)).to(gate.dtype).contiguous()


@geglu_backward.register_kernel("cpu")
def geglu_backward_cpu(grad, gate, up):
    check_inputs(grad, gate, up)
    c = compute_dtype(gate.dtype)
    d, g, u = grad.to(c), gate.to(c), up.to(c)
    z = 0.7978845608028654 * (g + 0.044715 * g**3)
    e = torch.exp(-2.0 * z.abs())
    s = torch.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))  # (2)!
    dgelu = s + g * (2.0 * e / (1.0 + e) ** 2) * 0.7978845608028654 * (1.0 + 0.134145 * g**2)
    return (d * u * dgelu).to(gate.dtype), (d * g * s).to(gate.dtype)


@geglu.register_fake
def _(gate, up):
    check_inputs(gate, up)
    return torch.empty(gate.shape, dtype=gate.dtype, device=gate.device)


@geglu_backward.register_fake
def _(grad, gate, up):
    check_inputs(grad, gate, up)
    return tuple(torch.empty(gate.shape, dtype=gate.dtype, device=gate.device) for _ in "du")


def setup_context(ctx, inputs, output) -> None:
    ctx.save_for_backward(*inputs)  # (3)!


def backward(ctx, grad):
    gate, up = ctx.saved_tensors
    return torch.ops.cookbook.geglu_backward(grad, gate, up)


geglu.register_autograd(backward, setup_context=setup_context)
# --8<-- [end:op]


# ----------------------------------------------------------------------------- checks
SENTINEL = 12345.0


def reference(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return (F.gelu(gate.double(), approximate="tanh") * up.double()).to(gate.dtype)


def reference_grads(grad, gate, up):
    g, u = gate.double().requires_grad_(), up.double().requires_grad_()
    (F.gelu(g, approximate="tanh") * u).backward(grad.double())
    return g.grad.to(gate.dtype), u.grad.to(gate.dtype)


def tolerance(dtype: torch.dtype) -> dict:
    """fp16/bf16: computed in float32, rounded once (one ulp from the float64 reference, at
    most); float32: the GPU's approximate exp and division, a few ulp; float64: PyTorch's
    gelu derivative is another formula, and both cancel near its zero at gate = -0.75."""
    return {
        torch.float16: dict(rtol=1e-3, atol=1e-5),
        torch.bfloat16: dict(rtol=8e-3, atol=1e-5),
        torch.float32: dict(rtol=1e-5, atol=1e-6),
        torch.float64: dict(rtol=1e-10, atol=1e-12),
    }[dtype]


def guarded(shape, dtype, device) -> tuple[torch.Tensor, callable]:
    """An output view cut from a larger sentinel-filled buffer, and its check."""
    n = math.prod(shape)
    buffer = torch.full((BLOCK_N + n + BLOCK_N,), SENTINEL, dtype=dtype, device=device)
    out = buffer[BLOCK_N : BLOCK_N + n].view(shape)

    def untouched() -> None:
        outside = torch.cat([buffer[:BLOCK_N], buffer[BLOCK_N + n :]])
        if not bool((outside == SENTINEL).all()):
            raise AssertionError(f"the kernel wrote outside its output {tuple(shape)}")

    return out, untouched


def check_kernels(device: str, raw: bool) -> None:
    """The Triton kernels themselves, on the input matrix (raw launches in the interpreter)."""
    torch.manual_seed(0)
    shapes = [(0, 8), (3, 0), (1, 1), (7, 13), (4, 1024), (5, 1025), (2, 3, 2500)]
    dtypes = DTYPES if device == "cuda" else (torch.float16, torch.float32, torch.float64)
    for dtype in dtypes:
        for shape in shapes:
            both = (torch.randn(*shape[:-1], 2 * shape[-1]) * 3).to(dtype).to(device)
            gate, up = both.chunk(2, dim=-1)
            out, untouched = guarded(gate.shape, dtype, device)
            geglu_forward(gate, up, out=out, raw=raw)
            untouched()
            torch.testing.assert_close(out, reference(gate, up), **tolerance(dtype))
            grad = torch.randn(gate.shape).to(dtype).to(device)
            dgate, dup = geglu_backward_launch(grad, gate, up, raw=raw)
            for got, want in zip((dgate, dup), reference_grads(grad, gate, up), strict=True):
                torch.testing.assert_close(got, want, **tolerance(dtype))
        print(f"  {device} {str(dtype):14} forward and backward match PyTorch on {shapes}")
    transposed = torch.randn(64, 96).to(device).t()  # a column stride != 1: copied first
    out = geglu_forward(transposed, transposed, raw=raw)
    torch.testing.assert_close(out, reference(transposed, transposed), **tolerance(torch.float32))
    inf, nan = float("inf"), float("nan")
    gate = torch.tensor([[nan, 1.0, inf, -inf, 0.0, 30.0, -30.0, 2.0]]).to(device)
    up = torch.tensor([[1.0, nan, 1.0, 1.0, inf, 1.0, 1.0, -inf]]).to(device)
    want = reference(gate, up)
    torch.testing.assert_close(geglu_forward(gate, up, raw=raw), want, equal_nan=True)
    print(f"  {device}: NaN, Inf and saturated gates give what PyTorch gives: {want.tolist()}")


def expect_error(error: type[Exception], call) -> None:
    try:
        call()
    except error as exc:
        print(f"  rejected as expected: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError(f"expected {error.__name__}, got a result")


def check_operator(device: str) -> None:
    """The operator: its CPU kernel or its CUDA kernels, autograd, opcheck, bad input."""
    torch.manual_seed(0)
    x = torch.randn(6, 10, dtype=torch.float64, device=device).requires_grad_()
    y = torch.randn(6, 10, dtype=torch.float64, device=device).requires_grad_()
    ok = torch.autograd.gradcheck(torch.ops.cookbook.geglu, (x, y))
    print(f"gradcheck float64 on {device}: {ok}")
    tests = ["test_schema", "test_autograd_registration", "test_faketensor"]
    if device == "cuda":
        tests.append("test_aot_dispatch_dynamic")
    a, b = torch.randn(2, 5, 6, device=device).chunk(2, dim=-1)
    result = torch.library.opcheck(torch.ops.cookbook.geglu.default, (a, b), test_utils=tests)
    print(f"opcheck geglu on {device}: {result}")
    ok = torch.ones(3, device=device)
    expect_error(ValueError, lambda: torch.ops.cookbook.geglu(ok, torch.ones(4, device=device)))
    expect_error(TypeError, lambda: torch.ops.cookbook.geglu(ok, ok.double()))
    ints = torch.ones(3, dtype=torch.int32, device=device)
    expect_error(TypeError, lambda: torch.ops.cookbook.geglu(ints, ints))
    other = "meta" if device == "cpu" else "cpu"
    expect_error(ValueError, lambda: torch.ops.cookbook.geglu(ok, ok.to(other)))


# ----------------------------------------------------------------------------- benchmark
HBM_TBPS = 4.8  # NVIDIA H200 datasheet: 4.8 TB/s of HBM3e
SHAPES = [(1024, 4096), (4096, 14336), (16384, 14336)]  # (tokens, hidden): LLM MLP widths


# --8<-- [start:bench]
def timed_row(fn, impl: str, pass_: str, shape, dtype, moved_bytes: int, bench) -> dict:
    """One benchmark row: GPU time (median and 20/80 % quantiles), and what it means in GB/s."""
    times = bench(fn)  # (1)!
    p20, _, _, p80 = statistics.quantiles(times, n=5)
    median = statistics.median(times)
    return {
        "impl": impl, "pass": pass_, "shape": list(shape), "dtype": str(dtype).split(".")[-1],
        "ms_median": round(median, 5), "ms_p20": round(p20, 5), "ms_p80": round(p80, 5),
        "repeats": len(times), "bytes": moved_bytes, "gbps": round(moved_bytes / median / 1e6, 1),
    }  # fmt: skip


def benchmark(device: str, shapes, dtype, bench) -> list[dict]:
    eager = lambda g, u: F.gelu(g, approximate="tanh") * u
    compiled = torch.compile(eager, dynamic=False)  # (2)!
    out = []
    for tokens, hidden in shapes:
        gen = torch.Generator().manual_seed(tokens + hidden)
        gate, up = (torch.randn(tokens, hidden, generator=gen).to(device, dtype) for _ in "gu")
        grad = torch.randn(tokens, hidden, generator=gen).to(device, dtype)
        size = gate.element_size() * gate.numel()
        impls = {"triton": torch.ops.cookbook.geglu, "eager": eager, "compile": compiled}
        for impl, fn in impls.items():
            g, u = gate.detach().requires_grad_(), up.detach().requires_grad_()
            result = fn(g, u)  # (3)!
            if impl == "triton":  # the kernel under test; the others are PyTorch's own
                torch.testing.assert_close(result, reference(gate, up), **tolerance(dtype))
            out.append(timed_row(lambda: fn(gate, up), impl, "forward", (tokens, hidden),
                                 dtype, 3 * size, bench))  # fmt: skip
            backward = lambda: torch.autograd.grad(result, (g, u), grad, retain_graph=True)
            out.append(timed_row(backward, impl, "backward", (tokens, hidden), dtype,
                                 5 * size, bench))  # fmt: skip
        copy_src = torch.empty(3 * size // 2, dtype=torch.uint8, device=device)
        copy_dst = torch.empty_like(copy_src)
        out.append(
            timed_row(
                lambda: copy_dst.copy_(copy_src),
                "copy",
                "forward",
                (tokens, hidden),
                dtype,
                3 * size,
                bench,
            )
        )  # (4)!
    return out


# --8<-- [end:bench]


def do_bench_ms(fn) -> list[float]:
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="all")


def ratio_figures(rows: list[dict], dtype: str) -> dict:
    """What the page quotes, at the largest shape: each a ratio recomputable from the rows."""
    largest = max((r["shape"] for r in rows), key=math.prod)
    at = {(r["impl"], r["pass"]): r for r in rows if r["shape"] == largest}
    shape = f"gate, up: ({largest[0]}, {largest[1]})"
    figures = {}
    for pass_ in ("forward", "backward"):
        t = at["triton", pass_]
        figures[f"{pass_}_compile_over_triton"] = {
            "value": round(at["compile", pass_]["ms_median"] / t["ms_median"], 2),
            "statistic": "ratio", "op": f"torch.compile {pass_} median time over Triton's",
            "shape": shape, "dtype": dtype,
        }  # fmt: skip
        figures[f"{pass_}_eager_over_triton"] = {
            "value": round(at["eager", pass_]["ms_median"] / t["ms_median"], 2),
            "statistic": "ratio", "op": f"eager {pass_} median time over Triton's",
            "shape": shape, "dtype": dtype,
        }  # fmt: skip
        figures[f"{pass_}_triton_of_hbm"] = {
            "value": round(t["gbps"] / (HBM_TBPS * 1e3), 3),
            "statistic": "ratio", "op": f"Triton {pass_} bytes/s over the 4.8 TB/s datasheet HBM",
            "shape": shape, "dtype": dtype,
        }  # fmt: skip
    figures["copy_of_hbm"] = {
        "value": round(at["copy", "forward"]["gbps"] / (HBM_TBPS * 1e3), 3),
        "statistic": "ratio", "op": "a device copy of the forward's bytes over 4.8 TB/s",
        "shape": shape, "dtype": dtype,
    }  # fmt: skip
    return figures


if __name__ == "__main__":
    import json

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    # --8<-- [start:call]
    gate_up = torch.randn(4, 2 * 6)  # a fused gate/up projection's output
    gate, up = gate_up.chunk(2, dim=-1)
    out = torch.ops.cookbook.geglu(gate, up)  # (1)!
    print(
        f"geglu on CPU tensors, {tuple(out.shape)}: max error {(out - reference(gate, up)).abs().max():.1e}"
    )
    # --8<-- [end:call]
    if INTERPRETED:
        check_kernels("cpu", raw=True)
    for device in devices:
        check_operator(device)
    if torch.cuda.is_available():
        check_kernels("cuda", raw=False)
        rows_ = benchmark("cuda", SHAPES, torch.bfloat16, do_bench_ms)
        for r in rows_:
            print(f"benchmark: {json.dumps(r)}")
        print("figures: " + json.dumps(ratio_figures(rows_, "bfloat16")))
    print("geglu: all checks passed")
