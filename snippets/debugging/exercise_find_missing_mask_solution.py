# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Solution of exercise_find_missing_mask.py: the store had no mask.

The load was masked, so the values were right; the store wrote every lane, and on the last
program instance the lanes past n_elements wrote x * scale of whatever the masked load left
there into the memory after the output. n = 1024 is a multiple of BLOCK_SIZE = 128 and has no
such lane, which is why the author's test passed.
On a CPU:       TRITON_INTERPRET=1 python exercise_find_missing_mask_solution.py
On a CUDA GPU:  python exercise_find_missing_mask_solution.py"""

import os
from pathlib import Path

import torch
import triton
import triton.language as tl


# --8<-- [start:kernel]
@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, scale, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * scale, mask=mask)


# --8<-- [end:kernel]

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"
DTYPES = (torch.float16, torch.float32)
BLOCK_SIZE = 128


def scale(x: torch.Tensor, factor: float, out: torch.Tensor) -> None:
    """out = x * factor for a tensor of DTYPES (the part you need not edit)."""
    if x.dtype not in DTYPES or out.dtype != x.dtype or out.shape != x.shape:
        raise TypeError(f"scale() takes x and out of one shape and one of {DTYPES}")
    if x.numel() >= 2**31:  # pid * BLOCK_SIZE and the offsets are int32 in the kernel
        raise ValueError(f"{x.numel()} elements: scale() takes at most 2**31 - 1 (int32 offsets)")
    if not out.is_contiguous():  # the kernel writes element i at out_ptr + i
        raise ValueError("out must be contiguous: the kernel writes element i at out_ptr + i")
    x = x.contiguous()
    n = x.numel()
    scale_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, out, n, factor, BLOCK_SIZE=BLOCK_SIZE)


SENTINEL = 12345.0
OUTSIDE = {
    "en": "changed {k} elements past the end of its output (the first at n + {first})",
    "zh": "改动了输出末尾之后的 {k} 个元素（第一个在 n + {first}）",
}


def case(n: int, dtype=torch.float32, values=None, strided=False):
    """scale() into a view cut from a larger buffer: anything written outside it shows."""

    def run():
        g = torch.Generator().manual_seed(n)
        x = torch.randn(2 * n if strided else n, generator=g).to(dtype).to(DEVICE)
        x = x[::2] if strided else x
        if values is not None:
            x = torch.tensor(values, dtype=dtype, device=DEVICE)
        buffer = torch.full((n + 2 * BLOCK_SIZE,), SENTINEL, dtype=dtype, device=DEVICE)
        out = buffer[BLOCK_SIZE : BLOCK_SIZE + n]
        scale(x, 3.0, out)
        after = buffer[BLOCK_SIZE + n :]
        changed = (after != SENTINEL).nonzero().flatten().tolist()
        if changed or bool((buffer[:BLOCK_SIZE] != SENTINEL).any()):
            return OUTSIDE[LANGUAGE].format(k=len(changed), first=(changed or [0])[0])
        return differs(out, x * 3.0)

    return run


PAST_EN = (
    "shrink it: n = 5 under TRITON_INTERPRET=1, print(offsets, mask) in the kernel; "
    "a store whose lanes past n_elements are on writes there. Every access needs the mask."
)
PAST_ZH = (
    "把用例缩小：在 TRITON_INTERPRET=1 下取 n = 5，在内核里 print(offsets, mask)；"
    "store 的 lane 越过 n_elements 还开着，就会写到那里。每次访存都要带掩码。"
)
# fmt: off
CASES = [
    ("n = 1024, the author's own test", "n = 1024，作者自己测过的长度",
     "a multiple of BLOCK_SIZE has no lane past the end: this case cannot find the bug.",
     "BLOCK_SIZE 的整数倍没有越界的 lane：这个用例找不到 bug。", case(1024)),
    ("empty: n = 0", "空张量：n = 0", PAST_EN, PAST_ZH, case(0)),
    ("one element", "只有一个元素", PAST_EN, PAST_ZH, case(1)),
    ("n = 1000", "n = 1000", PAST_EN, PAST_ZH, case(1000)),
    ("non-contiguous input, n = 300", "非连续输入，n = 300", PAST_EN, PAST_ZH,
     case(300, strided=True)),
    ("NaN and Inf scale like x * 3", "NaN 和 Inf 的缩放与 x * 3 一致", PAST_EN, PAST_ZH,
     case(3, values=[float("nan"), float("inf"), -float("inf")])),
    ("float16, n = 77", "float16，n = 77", PAST_EN, PAST_ZH, case(77, dtype=torch.float16)),
    ("int32 is refused with TypeError", "int32 被拒绝并抛出 TypeError",
     "scale() checks the dtype before the launch (you need not change it).",
     "scale() 在启动前检查 dtype（这部分不用改）。",
     lambda: refuses(TypeError, lambda: scale(*[torch.ones(3, dtype=torch.int32, device=DEVICE)] * 2))),
    ("2**31 elements are refused with ValueError", "2**31 个元素被拒绝并抛出 ValueError",
     "the kernel's offsets are int32: scale() refuses 2**31 elements or more before the launch (you need not change it).",
     "内核的偏移量是 int32：scale() 在启动前拒绝 2**31 个及以上的元素（这部分不用改）。",
     lambda: refuses(ValueError, lambda: scale(torch.empty(2**31, device="meta"), 3.0, torch.empty(2**31, device="meta")))),
    ("a non-contiguous out is refused with ValueError", "不连续的 out 被拒绝并抛出 ValueError",
     "the kernel writes element i at out_ptr + i: scale() refuses an out whose elements are not one apart (you need not change it).",
     "内核把第 i 个元素写到 out_ptr + i：scale() 拒绝元素在内存中不相邻的 out（这部分不用改）。",
     lambda: refuses(ValueError, lambda: scale(torch.ones(4, device=DEVICE), 3.0, torch.zeros(8, device=DEVICE)[::2]))),
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
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(say("no_gpu", file=Path(__file__).name))
    raise SystemExit(check("find_missing_mask", CASES))
