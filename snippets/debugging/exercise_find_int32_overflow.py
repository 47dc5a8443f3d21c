# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# exercise = { expect = "fail", message = "not solved yet", message-zh = "还没有做对" }
# ///
"""Exercise (find and fix a planted bug): offsets that are right on small tables and negative on
large ones.

flat_index_kernel computes, for (row, col) pairs, where element (row, col) of a row-major table
with n_cols columns lies: row * n_cols + col, the offset a gather would load from. It has one
planted bug, which shows only on tables past 2**31 elements. The checker needs no such table:
it checks the offsets, not loads. Find the bug with the debugging chapter's tools (print()
inside the kernel under TRITON_INTERPRET=1 on the failing pair; the types of the values you
multiply) and fix the line.

On a CPU:       TRITON_INTERPRET=1 python exercise_find_int32_overflow.py
On a CUDA GPU:  python exercise_find_int32_overflow.py
The checker runs the kernel on empty, one-pair, small and 2.4e9-element tables with int32,
int64 and non-contiguous indices, and says what is wrong with a hint. It exits non-zero until
every case is right."""

import os
from pathlib import Path

import torch
import triton
import triton.language as tl


# TODO: one line of the kernel below has a planted bug: find it with the chapter's tools, fix it
# --8<-- [start:kernel]
@triton.jit
def flat_index_kernel(rows_ptr, cols_ptr, out_ptr, n, stride_row, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    rows = tl.load(rows_ptr + offsets, mask=mask)
    cols = tl.load(cols_ptr + offsets, mask=mask)
    flat = rows * stride_row + cols
    tl.store(out_ptr + offsets, flat, mask=mask)


# --8<-- [end:kernel]

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"
DTYPES = (torch.int32, torch.int64)


def flat_index(rows: torch.Tensor, cols: torch.Tensor, n_cols: int) -> torch.Tensor:
    """rows * n_cols + cols (int64): where element (row, col) of a row-major table with n_cols
    columns lies, as a gather would address it (the part you need not edit)."""
    if rows.shape != cols.shape or rows.dtype not in DTYPES or cols.dtype != rows.dtype:
        raise TypeError(f"flat_index() takes rows and cols of one shape and one of {DTYPES}")
    if rows.numel() >= 2**31:  # the offsets into rows, cols and out are int32 in the kernel
        raise ValueError(f"{rows.numel()} pairs overflow the kernel's int32 offsets")
    rows, cols = rows.contiguous(), cols.contiguous()
    out = torch.empty(rows.shape, dtype=torch.int64, device=rows.device)
    n = rows.numel()
    if n:
        flat_index_kernel[(triton.cdiv(n, 64),)](rows, cols, out, n, n_cols, BLOCK_SIZE=64)
    return out


def case(pairs, n_cols: int, dtype=torch.int32, strided=False):
    """The flat index of each (row, col) pair; no table is allocated, so a large one is cheap."""

    def run():
        rows = torch.tensor([r for r, _ in pairs], dtype=dtype, device=DEVICE)
        cols = torch.tensor([c for _, c in pairs], dtype=dtype, device=DEVICE)
        if strided:
            rows, cols = rows.repeat_interleave(2)[::2], cols.repeat_interleave(2)[::2]
        return differs(flat_index(rows, cols, n_cols), rows.long() * n_cols + cols.long())

    return run


BIG = [(0, 0), (1, 7), (53_686, 39_999), (53_688, 0), (59_999, 39_999)]  # a 60000 x 40000 table
WIDE_EN = (
    "print(rows * stride_row) in the kernel under TRITON_INTERPRET=1 for the failing pair: "
    "int32 times int32 is int32, and 53688 * 40000 > 2**31 - 1. Widen before you multiply."
)
WIDE_ZH = (
    "在 TRITON_INTERPRET=1 下对出错的那一对在内核里 print(rows * stride_row)：int32 乘 int32 "
    "还是 int32，而 53688 * 40000 > 2**31 - 1。先转成更宽的类型再乘。"
)
SMALL_EN = "small tables fit int32: this case cannot show the bug."
SMALL_ZH = "小表的下标放得进 int32：这个用例暴露不了 bug。"
# fmt: off
CASES = [
    ("empty", "空输入", SMALL_EN, SMALL_ZH, case([], 10)),
    ("one pair in a 1 x 1 table", "1 x 1 的表中的一对下标", SMALL_EN, SMALL_ZH, case([(0, 0)], 1)),
    ("100 pairs in a 1000 x 777 table", "1000 x 777 的表中的 100 对下标", SMALL_EN, SMALL_ZH,
     case([(i * 9, i * 7) for i in range(100)], 777)),
    ("a 60000 x 40000 table (2.4e9 elements), int32 indices",
     "60000 x 40000 的表（2.4e9 个元素），int32 下标", WIDE_EN, WIDE_ZH, case(BIG, 40_000)),
    ("the same, int64 indices", "同上，int64 下标", WIDE_EN, WIDE_ZH,
     case(BIG, 40_000, dtype=torch.int64)),
    ("the same, non-contiguous int32 indices", "同上，非连续的 int32 下标", WIDE_EN, WIDE_ZH,
     case(BIG, 40_000, strided=True)),
    ("float32 indices are refused with TypeError", "float32 下标被拒绝并抛出 TypeError",
     "flat_index() checks the dtype before the launch (you need not change it).",
     "flat_index() 在启动前检查 dtype（这部分不用改）。",
     lambda: refuses(TypeError, lambda: flat_index(*[torch.ones(3, device=DEVICE)] * 2, 5))),
    ("2**31 pairs are refused with ValueError", "2**31 对下标被拒绝并抛出 ValueError",
     "flat_index() refuses 2**31 pairs or more before the launch (you need not change it).",
     "flat_index() 在启动前拒绝 2**31 对及以上的下标（这部分不用改）。",
     lambda: refuses(ValueError, lambda: flat_index(*[torch.empty(2**31, dtype=torch.int32, device="meta")] * 2, 5))),
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
    raise SystemExit(check("find_int32_overflow", CASES))
