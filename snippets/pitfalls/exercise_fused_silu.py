# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# exercise = { expect = "fail", message = "not solved yet", message-zh = "还没有做对" }
# ///
"""Exercise (write the kernel): the backward of a fused activation, SiLU = x * sigmoid(x).

silu_forward_kernel computes x * sigmoid(x) in float32 whatever the input dtype, and SiLU, an
autograd.Function, saves the input for silu_backward_kernel. Write the backward kernel's body
where the TODO is: load the incoming gradient and the saved input, compute
dx = grad * d/dx [x * sigmoid(x)] in float32, and store it in dx's dtype. The pitfalls it
checks: a derivative that forgets a term, half-precision arithmetic, and lanes past the end.

On a CPU:       TRITON_INTERPRET=1 python exercise_fused_silu.py
On a CUDA GPU:  python exercise_fused_silu.py
The checker compares the forward and the gradient with torch.nn.functional.silu and autograd
on empty, one-element, ragged, non-contiguous, large, NaN/Inf and float16 inputs (bfloat16 on
a GPU; the interpreter gets bfloat16 wrong without an error), and says what is wrong with a
hint. It exits non-zero until every case is right."""

import os
import warnings
from pathlib import Path

import torch
import triton
import triton.language as tl


# --8<-- [start:kernels]
@triton.jit
def silu_forward_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)  # float32 inside, any input dtype
    tl.store(out_ptr + offsets, (x * tl.sigmoid(x)).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def silu_backward_kernel(grad_ptr, x_ptr, dx_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    # TODO: load grad and x (compute in float32), dx = grad * d/dx [x * sigmoid(x)], store dx
    # in dx's dtype, with the mask; as given, it stores zeros
    dx = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    tl.store(dx_ptr + offsets, dx.to(dx_ptr.dtype.element_ty), mask=mask)


# --8<-- [end:kernels]

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
# sigmoid(-100) computes exp(100) = inf on purpose (1 / inf = 0): numpy, under the
# interpreter, warns about it; the GPU does not
warnings.filterwarnings("ignore", "overflow encountered in exp", RuntimeWarning)
warnings.filterwarnings("ignore", "invalid value encountered in multiply", RuntimeWarning)
DEVICE = "cpu" if INTERPRETED else "cuda"
# bfloat16 on a GPU only: the interpreter computes it wrong without an error (Triton 3.6 to 3.9)
DTYPES = (torch.float16, torch.float32) + (() if INTERPRETED else (torch.bfloat16,))
BLOCK_SIZE = 256


def launch(kernel, *tensors: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(tensors[-1])
    n = out.numel()
    if n:
        kernel[(triton.cdiv(n, BLOCK_SIZE),)](*tensors, out, n, BLOCK_SIZE=BLOCK_SIZE)
    return out


class SiLU(torch.autograd.Function):
    """x * sigmoid(x) with a Triton forward and backward (the part you need not edit)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        if x.dtype not in DTYPES:
            raise TypeError(f"silu() takes one of {DTYPES}, got {x.dtype}")
        x = x.contiguous()
        ctx.save_for_backward(x)  # the input, not the output: the backward needs sigmoid(x)
        return launch(silu_forward_kernel, x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return launch(silu_backward_kernel, grad.contiguous(), x)


def tolerance(dtype: torch.dtype) -> dict:
    return {
        torch.float32: dict(rtol=1e-5, atol=1e-6),
        torch.float16: dict(rtol=1e-3, atol=1e-5),
        torch.bfloat16: dict(rtol=8e-3, atol=1e-5),
    }[dtype]


WHICH = {"en": "{what} ({part})", "zh": "{what}（{part}）"}
PARTS = {"en": ("forward", "backward"), "zh": ("前向", "反向")}


def case(n: int, dtype=torch.float32, values=None, strided=False):
    """silu() forward and backward against torch.nn.functional.silu, computed in float32."""

    def run():
        g = torch.Generator().manual_seed(n)
        x = 4 * torch.randn(2 * n if strided else n, generator=g)
        x = x[::2] if strided else x
        if values is not None:
            x = torch.tensor(values)
        grad = torch.randn(x.shape, generator=g)
        x, grad = x.to(dtype).to(DEVICE), grad.to(dtype).to(DEVICE)
        mine = x.detach().clone().requires_grad_()
        out = SiLU.apply(mine)
        out.backward(grad)
        ref = x.detach().float().requires_grad_()
        want = torch.nn.functional.silu(ref)
        want.backward(grad.float())
        for part, got, expected in zip(
            PARTS[LANGUAGE], (out, mine.grad), (want, ref.grad), strict=True
        ):
            what = differs(got, expected.to(dtype), **tolerance(dtype))
            if what:
                return WHICH[LANGUAGE].format(what=what, part=part)
        return None

    return run


GRAD_EN = (
    "the derivative of x * sigmoid(x) has two terms (product rule): sigmoid'(x) = s * (1 - s)."
)
GRAD_ZH = "x * sigmoid(x) 的导数有两项（乘积法则）：sigmoid'(x) = s * (1 - s)。"
INF, NAN = float("inf"), float("nan")
# fmt: off
CASES = [
    ("empty", "空张量", "no element, no launch.", "没有元素就不启动内核。", case(0)),
    ("one element", "只有一个元素", GRAD_EN, GRAD_ZH, case(1)),
    ("n = 1000, not a multiple of the block", "n = 1000，不是分块大小的整数倍", GRAD_EN, GRAD_ZH,
     case(1000)),
    ("non-contiguous input", "非连续输入", GRAD_EN, GRAD_ZH, case(300, strided=True)),
    ("large |x|, NaN and Inf, as torch gives them", "很大的 |x|、NaN 和 Inf，与 torch 一致",
     GRAD_EN, GRAD_ZH, case(7, values=[-100.0, 100.0, -20.0, 20.0, NAN, INF, -INF])),
    ("float16 (computed in float32 inside)", "float16（内核里用 float32 计算）",
     "load with .to(tl.float32): tl.sigmoid and tl.exp take float32 or float64 only.",
     "加载后先 .to(tl.float32)：tl.sigmoid 和 tl.exp 只接受 float32 或 float64。",
     case(500, dtype=torch.float16)),
    ("int32 is refused with TypeError", "int32 被拒绝并抛出 TypeError",
     "silu() checks the dtype before the launch (you need not change it).",
     "silu() 在启动前检查 dtype（这部分不用改）。",
     lambda: refuses(TypeError, lambda: SiLU.apply(torch.ones(3, dtype=torch.int32, device=DEVICE)))),
]
if not INTERPRETED:
    CASES.append(("bfloat16 (on a GPU)", "bfloat16（在 GPU 上）", GRAD_EN, GRAD_ZH,
                  case(500, dtype=torch.bfloat16)))
# fmt: on

# --8<-- [start:checker]
# ----------------------------------------------------------------------------- the checker
# The same in every exercise file: runs the cases, says what is wrong and what to try, in the
# language of the page the file was copied from, and exits non-zero until every case is right.
LANGUAGE = "en"  # the copy on the Chinese page says "zh"
SAID = {
    "en": {
        "right": "  ok     {case}",
        "wrong": "  WRONG  {case}: {what}",
        "hint": "         hint: {hint}",
        "raised": "raised {error}",
        "accepted": "returned a result; expected {error}",
        "shape": "shape {got}, expected {want}",
        "dtype": "dtype {got}, expected {want}",
        "values": "{bad} of {n} values differ; first at index {at}: got {got}, expected {want}",
        "passed": "exercise {name}: all {n} cases right",
        "failed": "exercise {name}: {bad} of {n} cases wrong, not solved yet",
        "no_gpu": "No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python {file}",
        "drawn": "  drawing of your kernel's loads and stores: {path}",
        "not_drawn": "  no drawing: your kernel raised {error}",
    },
    "zh": {
        "right": "  通过   {case}",
        "wrong": "  错误   {case}：{what}",
        "hint": "         提示：{hint}",
        "raised": "抛出了 {error}",
        "accepted": "返回了结果；应当抛出 {error}",
        "shape": "形状是 {got}，应为 {want}",
        "dtype": "dtype 是 {got}，应为 {want}",
        "values": "{n} 个值中有 {bad} 个不对；第一个在下标 {at}：得到 {got}，应为 {want}",
        "passed": "练习 {name}：{n} 个用例全部正确",
        "failed": "练习 {name}：{n} 个用例中有 {bad} 个不对，还没有做对",
        "no_gpu": "这台机器没有 CUDA GPU。在 CPU 上请运行：TRITON_INTERPRET=1 python {file}",
        "drawn": "  你的内核读写了哪些元素，画在这里：{path}",
        "not_drawn": "  没有画图：你的内核抛出了 {error}",
    },
}


def say(key: str, **values) -> str:
    return SAID[LANGUAGE][key].format(**values)


def differs(got: torch.Tensor, want: torch.Tensor, rtol: float = 0.0, atol: float = 0.0):
    """None when ``got`` matches ``want`` (NaN where it has NaN), else what differs, in words."""
    if tuple(got.shape) != tuple(want.shape):
        return say("shape", got=tuple(got.shape), want=tuple(want.shape))
    if got.dtype != want.dtype:
        return say("dtype", got=got.dtype, want=want.dtype)
    g, w = got.detach().cpu().double(), want.detach().cpu().double()
    close = torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if bool(close.all()):
        return None
    at = tuple(int(i) for i in (~close).nonzero()[0])
    show = (lambda v: f"{v:.6g}") if got.is_floating_point() else (lambda v: str(int(v)))
    first = dict(
        got=show(g[at].item()), want=show(w[at].item()), at=list(at) if len(at) > 1 else at[0]
    )
    return say("values", bad=int((~close).sum()), n=close.numel(), **first)


def refuses(error: type[Exception], call) -> str | None:
    """None when ``call()`` raises ``error``, else what happened instead."""
    try:
        call()
    except error:
        return None
    return say("accepted", error=error.__name__)


def check(name: str, cases: list) -> int:
    """Run each case (English name, Chinese name, English hint, Chinese hint, function that
    returns None when right, else what is wrong); print a line per case and a verdict."""
    bad = 0
    for case_en, case_zh, hint_en, hint_zh, run in cases:
        case = case_zh if LANGUAGE == "zh" else case_en
        try:
            what = run()
        except Exception as exc:  # the reader's kernel raised: say so in words, not a traceback
            words = (str(exc).strip().splitlines() or [""])[0][:240]
            what = say("raised", error=f"{type(exc).__name__}: {words}")
        if what is None:
            print(say("right", case=case))
            continue
        bad += 1
        print(say("wrong", case=case, what=what))
        print(say("hint", hint=hint_zh if LANGUAGE == "zh" else hint_en))
    print(say("passed" if bad == 0 else "failed", name=name, n=len(cases), bad=bad))
    return 0 if bad == 0 else 1


# --8<-- [end:checker]

if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(say("no_gpu", file=Path(__file__).name))
    raise SystemExit(check("fused_silu", CASES))
