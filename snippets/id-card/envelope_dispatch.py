# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Dispatch to the Triton kernel only inside the measured envelope; PyTorch everywhere else.

On a CUDA GPU:  python envelope_dispatch.py
On a CPU:       TRITON_INTERPRET=1 python envelope_dispatch.py
The envelope is an allow-list of what was measured and accepted (acceptance/benchmark.py and
acceptance/test_silu_mul.py on an H200): the row counts where the kernel beat PyTorch there, and
no autograd: the kernel has no backward, so a call that needs gradients goes to PyTorch. Tests:
the route of every probe, both paths against the float64 reference, gradients through the
dispatcher, and on a CPU the Triton path through the interpreter with a test envelope.
"""

import contextlib
import os
from dataclasses import dataclass

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


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


def triton_silu_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The kernel for two 2-D tensors of one shape (the dispatcher has checked the rest)."""
    m, n = a.shape
    out = torch.empty((m, n), dtype=a.dtype, device=a.device)
    block_n = min(triton.next_power_of_2(n), 1024)
    block_m = min(4096 // block_n, triton.next_power_of_2(m))
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    with torch.cuda.device(a.device) if a.is_cuda else contextlib.nullcontext():
        silu_mul_kernel[grid](
            a, b, out, m, n, *a.stride(), *b.stride(), *out.stride(),
            BLOCK_M=block_m, BLOCK_N=block_n, FP64=a.dtype == torch.float64,
        )  # fmt: skip
    return out


# --8<-- [start:envelope]
@dataclass(frozen=True)
class Envelope:
    devices: tuple[str, ...]
    dtypes: tuple[torch.dtype, ...]
    widths: tuple[int, ...]  # the last dimension
    rows: tuple[int, int]  # smallest and largest number of rows, both measured


MEASURED = Envelope(  # (1)!
    devices=("NVIDIA H200",), dtypes=(torch.bfloat16,), widths=(14336,), rows=(4096, 16384)
)


@dataclass(frozen=True)
class Call:
    device: str
    dtype: torch.dtype
    a_shape: tuple[int, ...]
    b_shape: tuple[int, ...]
    unit_stride: bool  # both inputs step by one element along the last dimension
    needs_grad: bool  # autograd would record this call


def describe(a: torch.Tensor, b: torch.Tensor) -> Call:
    device = torch.cuda.get_device_name(a.device) if a.is_cuda else a.device.type  # (2)!
    unit = all(t.dim() > 0 and t.stride(-1) == 1 for t in (a, b))
    needs_grad = torch.is_grad_enabled() and (a.requires_grad or b.requires_grad)  # (3)!
    return Call(device, a.dtype, tuple(a.shape), tuple(b.shape), unit, needs_grad)


def outside(call: Call, envelope: Envelope) -> str | None:
    """Why a call is outside the envelope, or None when it is inside."""
    if call.needs_grad:
        return "autograd was not measured: the kernel has no backward"
    if call.device not in envelope.devices:
        return f"device {call.device!r} was not measured"
    if call.dtype not in envelope.dtypes:
        return f"{call.dtype} was not measured"
    if call.a_shape != call.b_shape:
        return "broadcasting was not measured"
    if len(call.a_shape) != 2:
        return "only 2-D (rows, width) inputs were measured"
    rows, width = call.a_shape
    if width not in envelope.widths:
        return f"width {width} was not measured"
    if not envelope.rows[0] <= rows <= envelope.rows[1]:
        return f"{rows} rows is outside the measured {envelope.rows[0]} to {envelope.rows[1]}"
    if not call.unit_stride:
        return "only inputs with unit stride along the last dimension were measured"
    return None  # (4)!


def silu_mul(a: torch.Tensor, b: torch.Tensor, envelope: Envelope = MEASURED) -> torch.Tensor:
    if a.dtype != b.dtype or a.device != b.device:
        raise TypeError("silu_mul: inputs must share a dtype and a device")
    reason = outside(describe(a, b), envelope)
    ROUTES.append(reason or "triton")
    if reason is None:
        return triton_silu_mul(a, b)
    return F.silu(a) * b  # (5)!


# --8<-- [end:envelope]
ROUTES: list[str] = []


def assert_matches(got: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """The contract of acceptance/silu_mul.py: float64 reference, rounded once."""
    ref = (F.silu(a.double()) * b.double()).to(a.dtype)
    ulps = 2 if a.dtype in (torch.float16, torch.bfloat16) else 128
    info = torch.finfo(a.dtype)
    torch.testing.assert_close(got, ref, rtol=ulps * info.eps, atol=info.tiny)


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit("No CUDA GPU. On a CPU: TRITON_INTERPRET=1 python envelope_dispatch.py")
    # --8<-- [start:probes]
    H200, W = "NVIDIA H200", 14336
    probes = {  # (1)!
        (H200, torch.bfloat16, (4096, W), (4096, W), True, False): None,
        (H200, torch.bfloat16, (16384, W), (16384, W), True, False): None,
        (H200, torch.bfloat16, (1024, W), (1024, W), True, False): "1024 rows is outside",
        (H200, torch.bfloat16, (16385, W), (16385, W), True, False): "16385 rows is outside",
        (H200, torch.bfloat16, (4096, 11008), (4096, 11008), True, False): "width 11008",
        (H200, torch.float32, (4096, W), (4096, W), True, False): "torch.float32 was not",
        (H200, torch.bfloat16, (4096, W), (W,), True, False): "broadcasting",
        (H200, torch.bfloat16, (4096, W), (4096, W), False, False): "unit stride",
        (H200, torch.bfloat16, (4096, W), (4096, W), True, True): "autograd",  # (2)!
        ("NVIDIA A100-SXM4-80GB", torch.bfloat16, (4096, W), (4096, W), True, False): "device",
        ("cpu", torch.bfloat16, (4096, W), (4096, W), True, False): "device 'cpu'",
    }
    for fields, expected in probes.items():
        call = Call(*fields)
        reason = outside(call, MEASURED)
        assert (reason is None) if expected is None else (expected in (reason or "")), reason
        layout = "" if call.unit_stride else ", transposed"
        grad = ", needs grad" if call.needs_grad else ""
        print(
            f"route {call.a_shape} x {call.b_shape} {call.dtype} on {call.device}{layout}{grad}: "
            f"{'triton' if reason is None else 'torch, ' + reason}"
        )
    # --8<-- [end:probes]

    # --8<-- [start:paths]
    device = "cpu" if INTERPRETED else "cuda"
    g = torch.Generator().manual_seed(0)
    for rows in (1, 37) if INTERPRETED else (1, 37, 4096):
        gate_up = torch.randn(rows, 2 * W, generator=g).to(torch.bfloat16).to(device)
        gate, up = gate_up.chunk(2, dim=-1)  # (1)!
        assert_matches(silu_mul(gate, up), gate, up)
        assert_matches(silu_mul(gate.float(), up.float()), gate.float(), up.float())
    here = describe(gate, up).device
    print(f"on this machine ({here}): routes taken {sorted(set(ROUTES))}")
    if here == H200:
        assert "triton" in ROUTES, "an H200 inside the envelope must take the Triton path"
    else:
        assert "triton" not in ROUTES, "outside the measured devices, only PyTorch may run"

    if INTERPRETED:  # (2)!
        test_envelope = Envelope((here,), (torch.float32,), (W,), (1, 16384))
        ROUTES.clear()
        a, b = gate[:37].float(), up[:37].float()
        assert_matches(silu_mul(a, b, envelope=test_envelope), a, b)
        assert ROUTES == ["triton"], ROUTES
        print("the Triton path under the interpreter, with a test envelope: matches the reference")
    # --8<-- [end:paths]

    # --8<-- [start:grad]
    dtype = torch.float32 if INTERPRETED else torch.bfloat16
    envelope = Envelope((here,), (dtype,), (W,), (1, 16384))  # this machine, inside
    rows = 37 if INTERPRETED else 4096
    gate_up = torch.randn(rows, 2 * W, generator=g).to(dtype).to(device)
    a, b = (t.detach().requires_grad_() for t in gate_up.chunk(2, dim=-1))
    ROUTES.clear()
    out = silu_mul(a, b, envelope=envelope)  # (1)!
    assert ROUTES[-1].startswith("autograd was not measured"), ROUTES
    assert out.requires_grad, "an output that needs gradients lost its graph"
    (out.float() * 2).sum().backward()  # (2)!
    a64, b64 = (t.detach().double().requires_grad_() for t in (a, b))
    (F.silu(a64) * b64 * 2).sum().backward()
    torch.testing.assert_close(a.grad, a64.grad.to(dtype))
    torch.testing.assert_close(b.grad, b64.grad.to(dtype))
    with torch.no_grad():
        assert_matches(silu_mul(a, b, envelope=envelope), a.detach(), b.detach())  # (3)!
    assert ROUTES[-1] == "triton", ROUTES
    print(
        "inputs that require grad, grad mode on: PyTorch path, gradients match; under no_grad: triton"
    )
    # --8<-- [end:grad]
    print("envelope_dispatch: all checks passed")
