# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Solution of exercise_find_race.py: tl.atomic_add instead of a load, an add and a store.

The load-add-store let every lane with the same bin read the same old count and write old + 1,
so all but one increment were lost; on a GPU, program instances racing on the same bin lose
more, in an order that changes from run to run. tl.atomic_add(hist_ptr + bins, 1, mask=mask)
makes each increment one indivisible read-modify-write, lane by lane and across instances.
On a CPU:       TRITON_INTERPRET=1 python exercise_find_race_solution.py
On a CUDA GPU:  python exercise_find_race_solution.py"""

import os
from pathlib import Path

import torch
import triton
import triton.language as tl


# --8<-- [start:kernel]
@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    bins = tl.load(x_ptr + offsets, mask=mask, other=0)
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)


# --8<-- [end:kernel]

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"
DTYPES = (torch.int32, torch.int64)


def histogram(x: torch.Tensor, n_bins: int) -> torch.Tensor:
    """How many elements of x fall in each of bins 0 .. n_bins - 1, as int32 (the part you need
    not edit)."""
    if x.dtype not in DTYPES:
        raise TypeError(f"histogram() takes integers of {DTYPES}, got {x.dtype}")
    if x.numel() >= 2**31:  # the offsets and the counts are int32 in the kernel
        raise ValueError(f"{x.numel()} values overflow the kernel's int32 offsets and counts")
    if x.numel() and (int(x.min()) < 0 or int(x.max()) >= n_bins):
        raise ValueError(f"values must lie in 0 .. {n_bins - 1}")
    x = x.contiguous()
    hist = torch.zeros(n_bins, dtype=torch.int32, device=x.device)
    n = x.numel()
    if n:
        histogram_kernel[(triton.cdiv(n, 128),)](x, hist, n, BLOCK_SIZE=128)
    return hist


def case(values=None, n: int = 0, n_bins: int = 16, dtype=torch.int32, strided=False):
    def run():
        g = torch.Generator().manual_seed(n)
        x = torch.randint(0, n_bins, (2 * n if strided else n,), generator=g)
        if values is not None:
            x = torch.tensor(values)
        x = x.to(dtype).to(DEVICE)
        x = x[::2] if strided else x
        want = torch.bincount(x.long(), minlength=n_bins).to(torch.int32)
        return differs(histogram(x, n_bins), want)

    return run


LOST_EN = (
    "counts are lost where lanes share a bin: each lane read the same old count and wrote old + 1. "
    "A read-modify-write that lanes or programs share must be one atomic operation."
)
LOST_ZH = (
    "多条 lane 落在同一个 bin 时计数丢了：每条 lane 读到同一个旧值，都写回旧值 + 1。"
    "多条 lane 或多个程序共享的读-改-写必须是一次原子操作。"
)
# fmt: off
CASES = [
    ("empty", "空输入", LOST_EN, LOST_ZH, case([])),
    ("one value", "只有一个值", LOST_EN, LOST_ZH, case([3])),
    ("1000 values, all in one bin", "1000 个值，全在同一个 bin", LOST_EN, LOST_ZH,
     case([5] * 1000)),
    ("2000 random values in 16 bins", "2000 个随机值，16 个 bin", LOST_EN, LOST_ZH, case(n=2000)),
    ("non-contiguous input, 300 values", "非连续输入，300 个值", LOST_EN, LOST_ZH,
     case(n=300, strided=True)),
    ("int64 values, 777 of them in 7 bins", "int64 的 777 个值，7 个 bin", LOST_EN, LOST_ZH,
     case(n=777, n_bins=7, dtype=torch.int64)),
    ("float32 values are refused with TypeError", "float32 的值被拒绝并抛出 TypeError",
     "histogram() checks the dtype before the launch (you need not change it).",
     "histogram() 在启动前检查 dtype（这部分不用改）。",
     lambda: refuses(TypeError, lambda: histogram(torch.ones(3, device=DEVICE), 4))),
    ("2**31 values are refused with ValueError", "2**31 个值被拒绝并抛出 ValueError",
     "the kernel's offsets and counts are int32: histogram() refuses 2**31 values or more before the launch (you need not change it).",
     "内核的偏移量和计数都是 int32：histogram() 在启动前拒绝 2**31 个及以上的值（这部分不用改）。",
     lambda: refuses(ValueError, lambda: histogram(torch.empty(2**31, dtype=torch.int32, device="meta"), 4))),
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
    raise SystemExit(check("find_race", CASES))
