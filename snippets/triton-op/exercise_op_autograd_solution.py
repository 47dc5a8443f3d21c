# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Solution of exercise_op_autograd.py: save the input; the gradient is the backward operator.

setup_context saves x (the backward needs relu(x), which the input gives; the output would too,
as sqrt(out), less exactly). backward calls torch.ops.exercises.squared_relu_backward, itself an
operator with CPU and CUDA kernels, so the gradient is traced and compiled like the forward.
On a CPU:       python exercise_op_autograd_solution.py
On a CUDA GPU:  python exercise_op_autograd_solution.py"""

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def squared_relu_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    if x.dtype != tl.float64:  # float64 stays float64 (gradcheck); the rest computes in float32
        x = x.to(tl.float32)
    x = tl.maximum(x, 0.0, propagate_nan=tl.PropagateNan.ALL)  # NaN stays NaN, as in torch.relu
    tl.store(out_ptr + offsets, (x * x).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def squared_relu_backward_kernel(grad_ptr, x_ptr, dx_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    g = tl.load(grad_ptr + offsets, mask=mask)
    x = tl.load(x_ptr + offsets, mask=mask)
    if x.dtype != tl.float64:
        g, x = g.to(tl.float32), x.to(tl.float32)
    x = tl.maximum(x, 0.0, propagate_nan=tl.PropagateNan.ALL)
    tl.store(dx_ptr + offsets, (2.0 * x * g).to(dx_ptr.dtype.element_ty), mask=mask)


DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
BLOCK_SIZE = 1024


def check_input(*tensors: torch.Tensor) -> None:
    first = tensors[0]
    for t in tensors:
        if t.dtype not in DTYPES or t.dtype != first.dtype or t.shape != first.shape:
            raise TypeError(f"squared_relu takes tensors of one shape and one of {DTYPES}")


def launch(kernel, *tensors: torch.Tensor) -> torch.Tensor:
    if tensors[0].device.type != "cuda":
        raise ValueError(f"the Triton kernel needs CUDA tensors, got {tensors[0].device}")
    out = torch.empty_like(tensors[-1], memory_format=torch.contiguous_format)
    n = out.numel()
    with torch.cuda.device(out.device):
        wrap_triton(kernel)[(triton.cdiv(n, BLOCK_SIZE),)](*tensors, out, n, BLOCK_SIZE=BLOCK_SIZE)
    return out


@triton_op("exercises::squared_relu", mutates_args=())
def squared_relu(x: torch.Tensor) -> torch.Tensor:
    check_input(x)
    return launch(squared_relu_kernel, x.contiguous())


@triton_op("exercises::squared_relu_backward", mutates_args=())
def squared_relu_backward(grad: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    check_input(grad, x)
    return launch(squared_relu_backward_kernel, grad.contiguous(), x.contiguous())


def compute(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


@squared_relu.register_kernel("cpu")
def squared_relu_cpu(x: torch.Tensor) -> torch.Tensor:
    check_input(x)
    return (torch.relu(x.to(compute(x.dtype))) ** 2).to(x.dtype).contiguous()


@squared_relu_backward.register_kernel("cpu")
def squared_relu_backward_cpu(grad: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    check_input(grad, x)
    c = compute(x.dtype)
    return (2 * torch.relu(x.to(c)) * grad.to(c)).to(x.dtype).contiguous()


@squared_relu.register_fake
def squared_relu_fake(x: torch.Tensor) -> torch.Tensor:
    check_input(x)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@squared_relu_backward.register_fake
def squared_relu_backward_fake(grad: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    check_input(grad, x)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


# --8<-- [start:autograd]
def setup_context(ctx, inputs, output) -> None:
    (x,) = inputs
    ctx.save_for_backward(x)


def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
    (x,) = ctx.saved_tensors
    return torch.ops.exercises.squared_relu_backward(grad, x)


squared_relu.register_autograd(backward, setup_context=setup_context)
# --8<-- [end:autograd]

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def tolerance(dtype: torch.dtype) -> dict:
    return {
        torch.float16: dict(rtol=1e-3, atol=1e-5),
        torch.bfloat16: dict(rtol=8e-3, atol=1e-5),
        torch.float32: dict(rtol=1e-5, atol=1e-6),
        torch.float64: dict(rtol=1e-12, atol=1e-14),
    }[dtype]


WHICH = {"en": "{what} ({part} on {device})", "zh": "{what}（{device} 上的{part}）"}
PARTS = {"en": ("forward", "gradient"), "zh": ("前向", "梯度")}


def case(n: int, dtype=torch.float32, values=None, strided=False):
    """The operator and its gradient against relu(x) ** 2 and autograd, on each device."""

    def run():
        for device in DEVICES:
            g = torch.Generator().manual_seed(n)
            x = torch.randn(2 * n if strided else n, generator=g)
            x = x[::2] if strided else x
            if values is not None:
                x = torch.tensor(values)
            grad = torch.randn(x.shape, generator=g).to(dtype).to(device)
            x = x.to(dtype).to(device)
            mine = x.detach().clone().requires_grad_()
            out = torch.ops.exercises.squared_relu(mine)
            out.backward(grad)
            ref = x.detach().double().requires_grad_()
            want = torch.relu(ref) ** 2
            want.backward(grad.double())
            for part, got, expected in zip(
                PARTS[LANGUAGE], (out, mine.grad), (want, ref.grad), strict=True
            ):
                what = differs(got, expected.to(dtype), **tolerance(dtype))
                if what:
                    return WHICH[LANGUAGE].format(what=what, part=part, device=device)
        return None

    return run


def gradcheck() -> str | None:
    for device in DEVICES:
        g = torch.Generator().manual_seed(33)
        x = (torch.randn(33, dtype=torch.float64, generator=g) + 0.5).to(device).requires_grad_()
        torch.autograd.gradcheck(torch.ops.exercises.squared_relu, (x,))
    return None


def opcheck() -> str | None:
    for device in DEVICES:
        tests = ["test_schema", "test_autograd_registration", "test_faketensor"]
        if device == "cuda":
            tests.append("test_aot_dispatch_dynamic")
        g = torch.Generator().manual_seed(57)
        x = torch.randn(5, 7, generator=g).to(device).requires_grad_()
        for args in ((x,), (x.t(),)):
            torch.library.opcheck(torch.ops.exercises.squared_relu.default, args, test_utils=tests)
    return None


GRAD_EN = "setup_context saves what backward needs (the input x); backward returns 2 * relu(x) * grad, one gradient per input."
GRAD_ZH = "setup_context 保存 backward 需要的东西（输入 x）；backward 返回 2 * relu(x) * grad，每个输入一个梯度。"
# fmt: off
CASES = [
    ("empty", "空张量", GRAD_EN, GRAD_ZH, case(0)),
    ("one element", "只有一个元素", GRAD_EN, GRAD_ZH, case(1, values=[1.5])),
    ("n = 1000", "n = 1000", GRAD_EN, GRAD_ZH, case(1000)),
    ("non-contiguous input", "非连续输入", GRAD_EN, GRAD_ZH, case(300, strided=True)),
    ("NaN and Inf, as relu(x) ** 2 gives them", "NaN 和 Inf，与 relu(x) ** 2 一致", GRAD_EN, GRAD_ZH,
     case(4, values=[float("nan"), float("inf"), -float("inf"), 2.0])),
    ("float16", "float16", GRAD_EN, GRAD_ZH, case(257, dtype=torch.float16)),
    ("bfloat16", "bfloat16", GRAD_EN, GRAD_ZH, case(257, dtype=torch.bfloat16)),
    ("float64", "float64", GRAD_EN, GRAD_ZH, case(257, dtype=torch.float64)),
    ("torch.autograd.gradcheck in float64", "float64 下的 torch.autograd.gradcheck", GRAD_EN, GRAD_ZH,
     gradcheck),
    ("torch.library.opcheck", "torch.library.opcheck",
     "opcheck checks registrations, not math: autograd, fake and CPU kernels must all be registered.",
     "opcheck 检查的是注册而不是数学：autograd、fake 实现和 CPU 内核都要注册。", opcheck),
    ("int32 is refused with TypeError", "int32 被拒绝并抛出 TypeError",
     "check_input() refuses it before any kernel runs (you need not change it).",
     "check_input() 在任何内核运行之前就拒绝它（这部分不用改）。",
     lambda: refuses(TypeError, lambda: torch.ops.exercises.squared_relu(torch.ones(3, dtype=torch.int32)))),
]
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
    raise SystemExit(check("op_autograd", CASES))
