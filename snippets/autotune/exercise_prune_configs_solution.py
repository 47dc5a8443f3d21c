# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Solution of exercise_prune_configs.py: keep the configs of the smallest block that holds a row.

The block sizes are read from the configs themselves, so adding a config needs no other edit;
every config with the smallest BLOCK_N >= n_cols is kept (one per num_warps), and autotune
times only those. row_sum() refuses rows longer than the largest block before the launch.
On a CPU:       TRITON_INTERPRET=1 python exercise_prune_configs_solution.py
On a CUDA GPU:  python exercise_prune_configs_solution.py"""

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
    triton.Config({"BLOCK_N": block}, num_warps=warps)
    for block in (64, 256, 1024, 4096)
    for warps in (2, 8)
]


# --8<-- [start:prune]
def keep_fitting_blocks(configs, named_args, **kwargs):
    """The configs worth timing for this call: each must hold a whole row in one block."""
    blocks = sorted({c.kwargs["BLOCK_N"] for c in configs})
    fits = next((b for b in blocks if b >= named_args["n_cols"]), blocks[-1])
    return [c for c in configs if c.kwargs["BLOCK_N"] == fits]


# --8<-- [end:prune]


# --8<-- [start:kernel]
@triton.autotune(
    configs=CONFIGS,
    key=["n_cols"],
    prune_configs_by={"early_config_prune": keep_fitting_blocks},
    do_bench=bench,
)
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_N)  # one block holds the whole row
    x = tl.load(x_ptr + row.to(tl.int64) * stride_row + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x.to(tl.float32), axis=0))


# --8<-- [end:kernel]

DTYPES = (torch.float16, torch.float32)


def row_sum(x: torch.Tensor) -> torch.Tensor:
    """x.sum(dim=1) for a 2-D x of DTYPES with 1 to 4096 columns (the part you need not edit)."""
    if x.dim() != 2 or x.dtype not in DTYPES:
        raise TypeError(f"row_sum() takes a 2-D tensor of {DTYPES}, got {x.dim()}-D {x.dtype}")
    rows, cols = x.shape
    if not 1 <= cols <= 4096:
        raise ValueError(f"row_sum() takes 1 to 4096 columns (one block a row), got {cols}")
    if x.stride(1) != 1:
        x = x.contiguous()
    out = torch.empty(rows, dtype=x.dtype, device=x.device)
    if rows:
        row_sum_kernel[(rows,)](x, out, cols, x.stride(0))
    return out


PRUNED = {
    "en": {
        "none": "kept no config for n_cols = {n}",
        "short": "kept BLOCK_N = {b} for n_cols = {n}: it reads only the first {b} columns",
        "waste": "kept BLOCK_N = {b} for n_cols = {n}: {b2} lanes would do, the rest idle",
        "warps": "kept BLOCK_N = {b} with num_warps {got} for n_cols = {n}; CONFIGS has {want}",
    },
    "zh": {
        "none": "n_cols = {n} 时一个配置都没留下",
        "short": "n_cols = {n} 时留下了 BLOCK_N = {b}：它只读到前 {b} 列",
        "waste": "n_cols = {n} 时留下了 BLOCK_N = {b}：{b2} 条 lane 就够了，其余都闲着",
        "warps": "n_cols = {n} 时留下的 BLOCK_N = {b} 的 num_warps 是 {got}；CONFIGS 里是 {want}",
    },
}


def pruning() -> str | None:
    """Call the prune function as autotune does, for row lengths from 1 to 4096: it must keep
    the configs of the one block size that fits, each with its own num_warps."""
    for n in (1, 64, 65, 1000, 4096):
        kept = keep_fitting_blocks(CONFIGS, {"n_cols": n})
        enough = min(b for b in (64, 256, 1024, 4096) if b >= n)
        said = PRUNED[LANGUAGE]
        if not kept:
            return said["none"].format(n=n)
        for c in kept:
            b = c.kwargs["BLOCK_N"]
            if b < n:
                return said["short"].format(b=b, n=n)
            if b > enough:
                return said["waste"].format(b=b, n=n, b2=enough)
        got = sorted(c.num_warps for c in kept)
        want = sorted(c.num_warps for c in CONFIGS if c.kwargs["BLOCK_N"] == enough)
        if got != want:
            return said["warps"].format(b=enough, n=n, got=got, want=want)
    return None


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


NAN, INF = float("nan"), float("inf")
ROW_EN = "with every config kept, autotune may choose a block shorter than the row: prune those."
ROW_ZH = "所有配置都留下时，autotune 可能选中比一行还短的分块：把它们剪掉。"
# fmt: off
CASES = [
    ("the prune keeps the one block size that fits each row length",
     "剪枝只留下恰好装下一行的分块大小",
     "return the configs of the smallest BLOCK_N >= n_cols as they are, with every num_warps: smaller misses columns, larger idles lanes.",
     "原样返回 BLOCK_N >= n_cols 中最小那一档的配置，每种 num_warps 都留：更小会漏列，更大会让 lane 空转。",
     pruning),
    ("empty: 0 rows", "空张量：0 行",
     "no row, no launch: row_sum() returns before the kernel.",
     "没有行就不启动内核：row_sum() 在启动前就返回。", case(0, 8)),
    ("one element: 1 x 1", "只有一个元素：1 x 1", ROW_EN, ROW_ZH, case(1, 1)),
    ("3 x 1000, a row longer than the smallest block", "3 x 1000，一行比最小的分块长",
     ROW_EN, ROW_ZH, case(3, 1000)),
    ("NaN and Inf, as x.sum(dim=1)", "NaN 和 Inf，与 x.sum(dim=1) 一致", ROW_EN, ROW_ZH,
     case(2, 100, values=[[NAN] + [1.0] * 99, [INF] + [2.0] * 99])),
    ("a row slice: x[:, :50] of a 4 x 64 tensor", "行切片：4 x 64 张量的 x[:, :50]",
     "row_sum() passes a row slice as it is: its rows are stride_row = 64 elements apart, not n_cols = 50.",
     "row_sum() 原样传入行切片：它的行与行相隔 stride_row = 64 个元素，不是 n_cols = 50。",
     case(4, 50, wider=14)),
    ("transposed twice, 4 x 300, made contiguous by row_sum()", "转置两次的 4 x 300，由 row_sum() 转成连续的",
     ROW_EN, ROW_ZH, case(4, 300, view=True)),
    ("float16, 2 x 257", "float16，2 x 257", ROW_EN, ROW_ZH, case(2, 257, dtype=torch.float16)),
    ("4097 columns are refused with ValueError", "4097 列被拒绝并抛出 ValueError",
     "row_sum() checks the row length before the launch (you need not change it).",
     "row_sum() 在启动前检查行长度（这部分不用改）。",
     lambda: refuses(ValueError, lambda: row_sum(torch.ones(1, 4097, device=DEVICE)))),
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
    raise SystemExit(check("prune_configs", CASES))
