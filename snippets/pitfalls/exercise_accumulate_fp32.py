# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# exercise = { expect = "fail", message = "not solved yet", message-zh = "还没有做对" }
# ///
"""Exercise (complete one line): the dtype a running sum is kept in.

row_sum_kernel sums each row in blocks of BLOCK_N, keeping one running sum per lane. As given,
the accumulator has the input's dtype: right for float32, and for float16 a sum that drops
small terms once it is large and overflows to inf past 65504, even when the true sum is small.
Complete the line marked TODO: the accumulator's dtype (what is added to it follows it).

On a CPU:       TRITON_INTERPRET=1 python exercise_accumulate_fp32.py
On a CUDA GPU:  python exercise_accumulate_fp32.py
The checker compares with the float64 sum rounded once to the input's dtype, on empty,
one-element, float32, float16, one-large-many-small, cancelling, row-slice, transposed and
NaN/Inf rows (bfloat16 on a GPU; the interpreter gets bfloat16 wrong without an error, so row_sum()
refuses it there), and says what is wrong with a hint. It exits non-zero until every case is
right."""

import os
from pathlib import Path

import torch
import triton
import triton.language as tl


# --8<-- [start:kernel]
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0)
    acc = tl.zeros([BLOCK_N], dtype=x_ptr.dtype.element_ty)  # TODO: which dtype for a running sum?
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row.to(tl.int64) * stride_row + cols, mask=cols < n_cols, other=0.0)
        acc += x
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


# --8<-- [end:kernel]

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"
# bfloat16 on a GPU only: the interpreter computes it wrong without an error (Triton 3.6 to 3.9)
DTYPES = (torch.float16, torch.float32) + (() if INTERPRETED else (torch.bfloat16,))
BLOCK_N = 128


def row_sum(x: torch.Tensor) -> torch.Tensor:
    """x.sum(dim=1) in x's dtype for a 2-D x of DTYPES (the part you need not edit)."""
    if x.dim() != 2 or x.dtype not in DTYPES:
        raise TypeError(f"row_sum() takes a 2-D tensor of {DTYPES}, got {x.dim()}-D {x.dtype}")
    if x.stride(1) != 1:
        x = x.contiguous()
    rows, cols = x.shape
    out = torch.empty(rows, dtype=x.dtype, device=x.device)
    if rows:
        row_sum_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK_N=BLOCK_N)
    return out


def tolerance(dtype: torch.dtype) -> dict:
    return {
        torch.float32: dict(rtol=1e-5, atol=1e-4),
        torch.float16: dict(rtol=1e-3, atol=1e-3),
        torch.bfloat16: dict(rtol=8e-3, atol=1e-2),
    }[dtype]


def case(rows: int, cols: int, dtype=torch.float32, make=None, view=False, wider: int = 0):
    """row_sum() against the float64 sum rounded to the dtype once, as PyTorch's sum gives it;
    with ``wider``, x is x[:, :cols] of a tensor ``wider`` columns wider."""

    def run():
        g = torch.Generator().manual_seed(rows * 1000 + cols)
        x = torch.randn(rows, cols + wider, generator=g) if make is None else make()
        x = x.to(dtype).to(DEVICE)
        if view:
            x = x.t().contiguous().t()
        x = x[:, :cols]  # with wider: rows cols + wider apart, columns one apart
        return differs(row_sum(x), x.double().sum(dim=1).to(dtype), **tolerance(dtype))

    return run


def one_big_many_small() -> torch.Tensor:
    x = torch.ones(2, 4096)
    x[:, 0] = 2048.0  # float16 holds 2048 + 1 as 2048: its step there is 2
    return x


def cancelling() -> torch.Tensor:
    x = torch.zeros(1, 512)
    x[0, ::128] = torch.tensor([60000.0, 60000.0, -60000.0, -60000.0])  # one lane's four values
    return x


ACC_EN = (
    "a float16 running sum loses what is smaller than its step (2 at 2048) and overflows past "
    "65504: keep the accumulator in float32, convert once at the store."
)
ACC_ZH = (
    "float16 的累加和会丢掉比它的步长小的部分（2048 处步长是 2），超过 65504 还会溢出："
    "累加器用 float32，只在 store 时转换一次。"
)
# fmt: off
CASES = [
    ("empty: 0 rows", "空张量：0 行", ACC_EN, ACC_ZH, case(0, 8)),
    ("one element: 1 x 1", "只有一个元素：1 x 1", ACC_EN, ACC_ZH, case(1, 1)),
    ("float32, 5 x 1000", "float32，5 x 1000", ACC_EN, ACC_ZH, case(5, 1000)),
    ("float16, 3 x 1000", "float16，3 x 1000", ACC_EN, ACC_ZH, case(3, 1000, dtype=torch.float16)),
    ("float16, 2048 then 4095 ones", "float16，2048 之后跟 4095 个 1", ACC_EN, ACC_ZH,
     case(2, 4096, dtype=torch.float16, make=one_big_many_small)),
    ("float16, 60000 + 60000 - 60000 - 60000", "float16，60000 + 60000 - 60000 - 60000",
     ACC_EN, ACC_ZH, case(1, 512, dtype=torch.float16, make=cancelling)),
    ("float32 row slice: x[:, :300] of a 4 x 333 tensor", "float32 行切片：4 x 333 张量的 x[:, :300]",
     "row_sum() passes a row slice as it is: its rows are stride_row = 333 elements apart, not n_cols = 300.",
     "row_sum() 原样传入行切片：它的行与行相隔 stride_row = 333 个元素，不是 n_cols = 300。",
     case(4, 300, wider=33)),
    ("float16 transposed twice, made contiguous by row_sum()", "转置两次的 float16，由 row_sum() 转成连续的",
     ACC_EN, ACC_ZH, case(4, 300, dtype=torch.float16, view=True)),
    ("NaN and Inf, as x.sum(dim=1)", "NaN 和 Inf，与 x.sum(dim=1) 一致", ACC_EN, ACC_ZH,
     case(2, 3, make=lambda: torch.tensor([[float("nan"), 1.0, 2.0], [float("inf"), 1.0, 2.0]]))),
]
if INTERPRETED:
    CASES.append(("bfloat16 is refused under TRITON_INTERPRET=1", "TRITON_INTERPRET=1 下拒绝 bfloat16",
                  "row_sum() refuses what the interpreter would get wrong (you need not change it).",
                  "row_sum() 拒绝解释器会算错的 dtype（这部分不用改）。",
                  lambda: refuses(TypeError, lambda: row_sum(torch.ones(1, 3, dtype=torch.bfloat16)))))
else:
    CASES.append(("bfloat16, 3 x 1000 (on a GPU)", "bfloat16，3 x 1000（在 GPU 上）", ACC_EN, ACC_ZH,
                  case(3, 1000, dtype=torch.bfloat16)))
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
    raise SystemExit(check("accumulate_fp32", CASES))
