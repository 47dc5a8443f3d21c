# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# exercise = { expect = "fail", message = "not solved yet", message-zh = "还没有做对" }
# ///
"""Exercise (write two registrations): give a triton_op a CPU kernel and a fake implementation.

exercises::scaled_add computes x + alpha * y with a Triton kernel; its body launches that kernel
and so needs CUDA tensors. Called with CPU tensors it raises, and opcheck fails. Below the
TODOs, register a kernel for CPU tensors (PyTorch code, checked inputs first) and a fake
implementation (the output's shape, dtype and device, nothing computed), so that
torch.ops.exercises.scaled_add works on CPU and CUDA tensors, on meta tensors and under opcheck.

On a CPU:       python exercise_op_register.py   (no TRITON_INTERPRET: CPU tensors use your CPU kernel)
On a CUDA GPU:  python exercise_op_register.py   (CPU and CUDA tensors)
The checker runs the operator on empty, one-element, ragged, non-contiguous, NaN/Inf, float16
and bfloat16 inputs and on meta tensors, runs opcheck, and says what is wrong with a hint. It
exits non-zero until every case is right."""

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x + alpha * y).to(out_ptr.dtype.element_ty), mask=mask)


DTYPES = (torch.float16, torch.bfloat16, torch.float32)
BLOCK_SIZE = 1024


def check_inputs(x: torch.Tensor, y: torch.Tensor) -> None:
    if x.shape != y.shape or x.dtype != y.dtype or x.device != y.device:
        raise ValueError("scaled_add takes x and y of one shape, dtype and device")
    if x.dtype not in DTYPES:
        raise TypeError(f"scaled_add takes one of {DTYPES}, got {x.dtype}")


@triton_op("exercises::scaled_add", mutates_args=())
def scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    """x + alpha * y; this body runs for CUDA tensors, and launches the Triton kernel."""
    check_inputs(x, y)
    if x.device.type != "cuda":
        raise ValueError(f"the Triton kernel needs CUDA tensors, got {x.device}")
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    with torch.cuda.device(x.device):
        grid = (triton.cdiv(n, BLOCK_SIZE),)
        wrap_triton(scaled_add_kernel)[grid](x, y, out, alpha, n, BLOCK_SIZE=BLOCK_SIZE)
    return out


# --8<-- [start:register]
# TODO: register a kernel for CPU tensors: @scaled_add.register_kernel("cpu") on a function
# that checks its inputs and computes x + alpha * y with PyTorch (in float32, then x's dtype)
# TODO: register a fake implementation: @scaled_add.register_fake on a function that checks
# its inputs and returns an empty tensor of the output's shape, dtype and device, contiguous


# --8<-- [end:register]

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def tolerance(dtype: torch.dtype) -> dict:
    return {
        torch.float16: dict(rtol=1e-3, atol=1e-3),
        torch.bfloat16: dict(rtol=8e-3, atol=1e-2),
        torch.float32: dict(rtol=1e-6, atol=1e-6),
    }[dtype]


ON = {"en": "{what} (on {device})", "zh": "{what}（在 {device} 上）"}


def case(n: int, dtype=torch.float32, values=None, strided=False):
    """The operator against x + 0.5 * y in float32, on each device."""

    def run():
        for device in DEVICES:
            g = torch.Generator().manual_seed(n)
            x = torch.randn(2 * n if strided else n, generator=g)
            x = x[::2] if strided else x
            if values is not None:
                x = torch.tensor(values)
            y = torch.randn(x.shape, generator=g).to(dtype).to(device)
            x = x.to(dtype).to(device)
            got = torch.ops.exercises.scaled_add(x, y, 0.5)
            what = differs(got, (x.float() + 0.5 * y.float()).to(dtype), **tolerance(dtype))
            if what:
                return ON[LANGUAGE].format(what=what, device=device)
        return None

    return run


def opcheck() -> str | None:
    for device in DEVICES:
        tests = ["test_schema", "test_autograd_registration", "test_faketensor"]
        if device == "cuda":
            tests.append("test_aot_dispatch_dynamic")
        g = torch.Generator().manual_seed(57)
        x, y = (torch.randn(5, 7, generator=g).to(device) for _ in range(2))
        for args in ((x, y, 2.0), (x.t(), y.t(), -1.0)):
            torch.library.opcheck(torch.ops.exercises.scaled_add.default, args, test_utils=tests)
    return None


CPU_EN = 'a triton_op\'s body runs for every device unless a kernel is registered for it: register_kernel("cpu") gives CPU tensors a PyTorch kernel.'
CPU_ZH = '没有为某种设备注册内核时，triton_op 的函数体对所有设备都会运行：用 register_kernel("cpu") 给 CPU 张量一个 PyTorch 内核。'
FAKE_EN = "tracing (torch.compile, opcheck's test_faketensor) runs the operator on fake tensors: register_fake says the output's shape, dtype, device and strides (the kernel returns a contiguous tensor) without computing it."
FAKE_ZH = "追踪（torch.compile、opcheck 的 test_faketensor）会用 fake 张量运行算子：register_fake 只给出输出的形状、dtype、设备和步长（内核返回连续张量），不做计算。"
# fmt: off
CASES = [
    ("empty", "空张量", CPU_EN, CPU_ZH, case(0)),
    ("one element", "只有一个元素", CPU_EN, CPU_ZH, case(1)),
    ("n = 1000", "n = 1000", CPU_EN, CPU_ZH, case(1000)),
    ("non-contiguous input", "非连续输入", CPU_EN, CPU_ZH, case(300, strided=True)),
    ("NaN and Inf, as x + 0.5 * y", "NaN 和 Inf，与 x + 0.5 * y 一致", CPU_EN, CPU_ZH,
     case(4, values=[float("nan"), float("inf"), -float("inf"), 2.0])),
    ("float16", "float16", CPU_EN, CPU_ZH, case(257, dtype=torch.float16)),
    ("bfloat16", "bfloat16", CPU_EN, CPU_ZH, case(257, dtype=torch.bfloat16)),
    ("a fake tensor gives a fake output of the right shape", "fake 张量得到形状正确的 fake 输出",
     FAKE_EN, FAKE_ZH,
     lambda: differs(torch.tensor(torch.ops.exercises.scaled_add(
         torch.empty(3, 4, device="meta"), torch.empty(3, 4, device="meta"), 1.0).shape),
         torch.tensor([3, 4]))),
    ("torch.library.opcheck", "torch.library.opcheck", FAKE_EN, FAKE_ZH, opcheck),
    ("int32 is refused with TypeError", "int32 被拒绝并抛出 TypeError",
     "check_inputs() refuses it before any kernel runs (keep it first in every kernel you register).",
     "check_inputs() 在任何内核运行之前就拒绝它（注册的每个内核都要先调用它）。",
     lambda: refuses(TypeError, lambda: torch.ops.exercises.scaled_add(
         *[torch.ones(3, dtype=torch.int32)] * 2, 1.0))),
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
    raise SystemExit(check("op_register", CASES))
