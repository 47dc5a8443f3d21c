# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# exercise = { expect = "fail", message = "not solved yet", message-zh = "还没有做对" }
# ///
"""Exercise (complete one line): an autotune key that retunes when it should, and only then.

row_sum_kernel sums each row of a 2-D tensor in blocks of BLOCK_N, and @triton.autotune picks
BLOCK_N from CONFIGS. Autotune times the configs again for each new value of its key (and each
new dtype); between two new keys it reuses the config it chose. The best block depends on the
row length, not on how many rows there are. Complete the line marked TODO: the key.

On a CPU:       TRITON_INTERPRET=1 python exercise_autotune_key.py
On a CUDA GPU:  python exercise_autotune_key.py
Under TRITON_INTERPRET=1 there is no GPU to time: bench() runs each config once and calls them
equally fast, so autotune keeps the first; the number of tunings is the same as on a GPU. The
checker counts tunings over four shapes, compares the sums with x.sum(dim=1) on empty,
one-element, ragged, NaN/Inf, row-slice, transposed and float16 inputs, and says what is wrong with a
hint. It exits non-zero until every case is right."""

import os
from pathlib import Path

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"


def bench(fn, quantiles=None, **kwargs):
    """The timer autotune uses: Triton's on a GPU; under the interpreter, which has no GPU to
    time, a stand-in that runs the config once and calls every config equally fast."""
    if not INTERPRETED:
        return triton.testing.do_bench(fn, quantiles=quantiles, **kwargs)
    fn()
    return [1.0, 1.0, 1.0] if quantiles else 1.0


CONFIGS = [
    triton.Config({"BLOCK_N": 32}, num_warps=1),
    triton.Config({"BLOCK_N": 128}, num_warps=4),
]


# --8<-- [start:kernel]
@triton.autotune(configs=CONFIGS, key=[], do_bench=bench)  # TODO: key=[...] which arguments?
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_row, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row.to(tl.int64) * stride_row + cols, mask=cols < n_cols, other=0.0)
        acc += x.to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


# --8<-- [end:kernel]

DTYPES = (torch.float16, torch.float32)


def row_sum(x: torch.Tensor) -> torch.Tensor:
    """x.sum(dim=1) for a 2-D x of DTYPES, accumulated in float32 (the part you need not edit)."""
    if x.dim() != 2 or x.dtype not in DTYPES:
        raise TypeError(f"row_sum() takes a 2-D tensor of {DTYPES}, got {x.dim()}-D {x.dtype}")
    if x.stride(1) != 1:
        x = x.contiguous()
    rows, cols = x.shape
    out = torch.empty(rows, dtype=x.dtype, device=x.device)
    if rows:
        row_sum_kernel[(rows,)](x, out, rows, cols, x.stride(0))
    return out


def case(rows: int, cols: int, dtype=torch.float32, values=None, view=False, wider: int = 0):
    """row_sum() against x.sum(dim=1); with ``wider``, x is x[:, :cols] of a wider tensor."""

    def run():
        g = torch.Generator().manual_seed(rows * 1000 + cols)
        x = torch.randn(rows, cols + wider, generator=g) if values is None else torch.tensor(values)
        x = x.to(dtype).to(DEVICE)
        if view:
            x = x.t().contiguous().t()
        x = x[:, :cols]  # with wider: rows cols + wider apart, columns one apart
        tolerance = (
            dict(rtol=1e-5, atol=1e-4) if dtype == torch.float32 else dict(rtol=2e-3, atol=2e-2)
        )
        return differs(row_sum(x), x.float().sum(dim=1).to(dtype), **tolerance)

    return run


TUNED = {
    "en": "tuned {got} times for shapes {shapes}; expected {want}: one tuning per row length",
    "zh": "对形状 {shapes} 调优了 {got} 次；应为 {want} 次：每种行长度调优一次",
}


def tunings() -> str | None:
    """Count the configs autotune chose, a new one for each new key, over four shapes with 2
    row lengths (n_cols) and 3 row counts (n_rows), so that no other key gives 2 tunings."""
    row_sum_kernel.cache.clear()
    shapes = [(2, 100), (3, 100), (5, 100), (2, 700)]
    for shape in shapes:
        row_sum(torch.randn(shape, device=DEVICE))
    got, want = len(row_sum_kernel.cache), len({cols for _, cols in shapes})
    return None if got == want else TUNED[LANGUAGE].format(got=got, want=want, shapes=shapes)


NAN, INF = float("nan"), float("inf")
# fmt: off
CASES = [
    ("retunes for a new row length, not for a new row count",
     "行长度变了才重新调优，行数变了不调优",
     "key names the arguments whose values pick the best config: here the row length, n_cols.",
     "key 列出的参数决定哪个配置最好：这里是行长度 n_cols。", tunings),
    ("empty: 0 rows", "空张量：0 行",
     "no row, no launch: row_sum() returns before the kernel.",
     "没有行就不启动内核：row_sum() 在启动前就返回。", case(0, 8)),
    ("one element: 1 x 1", "只有一个元素：1 x 1",
     "one lane on in the first block of the loop.",
     "循环第一个分块里只有一条 lane 打开。", case(1, 1)),
    ("5 x 300, not a multiple of any block", "5 x 300，不是任何分块大小的整数倍",
     "the loop's last block is partly masked, with other=0.0 for a sum.",
     "循环的最后一个分块部分被掩码关掉，求和时 other=0.0。", case(5, 300)),
    ("NaN and Inf, as x.sum(dim=1)", "NaN 和 Inf，与 x.sum(dim=1) 一致",
     "a sum with a NaN is NaN, with an Inf is Inf: nothing to special-case.",
     "含 NaN 的和是 NaN，含 Inf 的和是 Inf：不需要特殊处理。",
     case(3, 2, values=[[NAN, 1.0], [INF, 1.0], [-INF, 2.0]])),
    ("a row slice: x[:, :40] of a 4 x 64 tensor", "行切片：4 x 64 张量的 x[:, :40]",
     "row_sum() passes a row slice as it is: its rows are stride_row = 64 elements apart, not n_cols = 40.",
     "row_sum() 原样传入行切片：它的行与行相隔 stride_row = 64 个元素，不是 n_cols = 40。",
     case(4, 40, wider=24)),
    ("transposed twice, made contiguous by row_sum()", "转置两次，由 row_sum() 转成连续的",
     "columns 4 elements apart: row_sum() copies x contiguous first, and the kernel reads the copy.",
     "列与列相隔 4 个元素：row_sum() 先把 x 复制成连续的，内核读的是这份副本。",
     case(4, 40, view=True)),
    ("float16, accumulated in float32", "float16，以 float32 累加",
     "load float16, add into a float32 accumulator, store: the store converts to float16.",
     "读入 float16，累加到 float32，store 时再转回 float16。",
     case(3, 200, dtype=torch.float16)),
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
    raise SystemExit(check("autotune_key", CASES))
