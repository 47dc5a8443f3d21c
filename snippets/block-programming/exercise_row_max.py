# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# exercise = { expect = "fail", message = "not solved yet", message-zh = "还没有做对" }
# ///
"""Exercise (complete three lines): a row-wise max with masked lanes and NaN, like torch.amax.

row_max_kernel gives each row to one program instance, which loads the whole row as one block of
BLOCK_N = next_power_of_2(n_cols) lanes and reduces it with tl.max. Two places are marked TODO:
what a lane the mask turns off loads (it still takes part in tl.max; one line to complete), and
the result for a row that holds a NaN (torch.amax gives NaN; tl.max's answer differs between the
GPU and the interpreter, so test for NaN yourself: two lines, the test and the result).

On a CPU:       TRITON_INTERPRET=1 python exercise_row_max.py
On a CUDA GPU:  python exercise_row_max.py
The checker compares your kernel with x.amax(dim=1) on empty, one-element, negative,
non-power-of-two, NaN/Inf, row-slice, transposed and float16 inputs and says what is wrong with a
hint. Under TRITON_INTERPRET=1 it also draws which program instance loaded which element and
which lanes the mask turned off. It exits non-zero until every case is right."""

import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np
import torch
import triton
import triton.language as tl


# --8<-- [start:kernel]
@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_N: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row.to(tl.int64) * stride_row + cols, mask=mask, other=0.0)  # TODO: other=?
    row_max = tl.max(x, axis=0)
    # TODO: a row that holds a NaN must give NaN, as torch.amax does
    result = row_max
    tl.store(out_ptr + row, result)


# --8<-- [end:kernel]

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"
DTYPES = (torch.float16, torch.float32)


def row_max(x: torch.Tensor) -> torch.Tensor:
    """x.amax(dim=1) for a 2-D x of DTYPES, one program instance per row (the part you need
    not edit)."""
    if x.dim() != 2:
        raise ValueError(f"row_max() takes a 2-D tensor, got {x.dim()}-D")
    if x.dtype not in DTYPES:
        raise TypeError(f"row_max() takes one of {DTYPES}, got {x.dtype}")
    rows, cols = x.shape
    if cols == 0 or cols > 8192:
        raise ValueError(f"row_max() takes 1 to 8192 columns (one block a row), got {cols}")
    if x.stride(1) != 1:
        x = x.contiguous()  # the kernel reads a row's columns one element apart
    out = torch.empty(rows, dtype=x.dtype, device=x.device)
    if rows:
        row_max_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK_N=triton.next_power_of_2(cols))
    return out


def case(
    rows: int,
    cols: int,
    dtype=torch.float32,
    shift: float = 0.0,
    rows_of=None,
    view=False,
    wider: int = 0,
):
    """row_max() of random rows (moved by ``shift``), or of the given rows, against amax; with
    ``wider``, the rows are x[:, :cols] of a tensor ``wider`` columns wider."""

    def run():
        g = torch.Generator().manual_seed(rows * 1000 + cols)
        x = torch.randn(rows, cols + wider, generator=g) + shift
        if rows_of is not None:
            x = torch.tensor(rows_of)
        x = x.to(dtype).to(DEVICE)
        if view:
            x = x.t().contiguous().t()  # the same values, columns rows apart: not contiguous
        x = x[:, :cols]  # with wider: rows cols + wider apart, columns one apart
        return differs(row_max(x), x.amax(dim=1))

    return run


INF, NAN = float("inf"), float("nan")
# fmt: off
CASES = [
    ("empty: 0 rows", "空张量：0 行",
     "no row, no launch: row_max() returns an empty tensor before the kernel.",
     "没有行就不启动内核：row_max() 在启动前就返回空张量。", case(0, 5)),
    ("one element: 1 x 1", "只有一个元素：1 x 1",
     "BLOCK_N = 1: the one lane is on; the max of one value is that value.",
     "BLOCK_N = 1：唯一的 lane 是打开的；一个值的最大值就是它自己。", case(1, 1, shift=-3.0)),
    ("rows all below zero, 3 x 100", "每行都小于零，3 x 100",
     "a lane the mask turns off still takes part in tl.max: load it as a value that never wins.",
     "被掩码关掉的 lane 仍然参与 tl.max：读入一个永远不会胜出的值。",
     case(3, 100, shift=-10.0)),
    ("7 x 1000, not a power of two", "7 x 1000，列数不是 2 的幂",
     "BLOCK_N = 1024 lanes, 1000 on: the 24 off lanes must not win the max.",
     "BLOCK_N = 1024 条 lane，打开 1000 条：关掉的 24 条不能成为最大值。",
     case(7, 1000, shift=-1.0)),
    ("rows with NaN, Inf and -Inf", "含 NaN、Inf、-Inf 的行",
     "torch.amax gives NaN for a row holding a NaN; tl.max need not (it differs by platform): test x != x.",
     "torch.amax 对含 NaN 的行返回 NaN；tl.max 不一定（不同平台结果不同）：用 x != x 检测。",
     case(4, 3, rows_of=[[1.0, NAN, 2.0], [NAN, INF, 0.0], [-INF, -INF, -INF], [INF, -1.0, NAN]])),
    ("a row slice: x[:, :33] of a 5 x 50 tensor", "行切片：5 x 50 张量的 x[:, :33]",
     "row_max() passes a row slice as it is: its rows are stride_row = 50 elements apart, not n_cols = 33.",
     "row_max() 原样传入行切片：它的行与行相隔 stride_row = 50 个元素，不是 n_cols = 33。",
     case(5, 33, wider=17)),
    ("transposed twice, made contiguous by row_max()", "转置两次，由 row_max() 转成连续的",
     "columns 5 elements apart: row_max() copies x contiguous first, and the kernel reads the copy.",
     "列与列相隔 5 个元素：row_max() 先把 x 复制成连续的，内核读的是这份副本。",
     case(5, 33, view=True)),
    ("float16, 6 x 70", "float16，6 x 70",
     "the max is exact in any dtype; other= must be a value of the tensor's dtype range.",
     "最大值在任何 dtype 下都是精确的；other= 的值要在该 dtype 的范围内。",
     case(6, 70, dtype=torch.float16, shift=-8.0)),
    ("int32 is refused with TypeError", "int32 被拒绝并抛出 TypeError",
     "row_max() checks the dtype before the launch (you need not change it).",
     "row_max() 在启动前检查 dtype（这部分不用改）。",
     lambda: refuses(TypeError, lambda: row_max(torch.ones(2, 3, dtype=torch.int32, device=DEVICE)))),
    ("0 columns are refused with ValueError, like torch.amax", "0 列被拒绝并抛出 ValueError，与 torch.amax 一致",
     "the max of nothing is undefined; row_max() refuses it before the launch.",
     "空集合没有最大值；row_max() 在启动前就拒绝。",
     lambda: refuses(ValueError, lambda: row_max(torch.ones(2, 0, device=DEVICE)))),
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
# --8<-- [start:drawing]
# ----------------------------------------------------------------------------- the drawing
# The same in every block-programming exercise: under TRITON_INTERPRET=1 it records, from the
# interpreter's own loads and stores, which program instance touched which element of each
# tensor and which lanes its mask turned off, and draws that as an SVG.
class Trace:
    """Wraps the interpreter's masked load and store (Triton 3.6 to 3.9 pass the pointers,
    then the mask for a load, the value then the mask for a store) while it is open."""

    def __init__(self, **tensors: torch.Tensor):
        self.tensors = tensors  # name -> the CPU tensor whose elements are drawn
        self.accesses = []  # (kind, tensor name, program id, element offsets, mask lanes)

    def __enter__(self):
        from triton.runtime.interpreter import InterpreterBuilder as builder

        self.saved = load, store = builder.create_masked_load, builder.create_masked_store
        trace = self

        def traced_load(self, ptrs, mask, *rest):
            trace.add("load", ptrs.data, mask.data, self.grid_idx)
            return load(self, ptrs, mask, *rest)

        def traced_store(self, ptrs, value, mask, *rest):
            trace.add("store", ptrs.data, mask.data, self.grid_idx)
            return store(self, ptrs, value, mask, *rest)

        builder.create_masked_load, builder.create_masked_store = traced_load, traced_store
        return self

    def __exit__(self, *exc):
        from triton.runtime.interpreter import InterpreterBuilder as builder

        builder.create_masked_load, builder.create_masked_store = self.saved

    def add(self, kind, addresses, lanes, pid) -> None:
        addresses = addresses.astype(np.int64)
        lanes = np.broadcast_to(lanes.astype(bool), addresses.shape)
        start = int(addresses.min())  # the tensor starting at or nearest below the pointers
        owners = [
            (start - t.data_ptr(), n) for n, t in self.tensors.items() if t.data_ptr() <= start
        ]
        if owners:
            name = min(owners)[1]
            t = self.tensors[name]
            offsets = (addresses - t.data_ptr()) // t.element_size()
            self.accesses.append((kind, name, tuple(pid), *cells_of(t, offsets, lanes)))


def cell_of(t: torch.Tensor, offset: int) -> tuple[int, int]:
    """(row, column) of the element ``offset`` elements from ``t``'s first one (between two
    elements: the one before): a 1-D tensor is one row; a 2-D one is split by its strides."""
    return split(t, offset)[0]


def step_of(t: torch.Tensor, offset: int) -> tuple[int, int] | None:
    """The (rows, columns) that ``offset`` elements move by in ``t``, or None if not whole."""
    move, rest = split(t, offset)
    return None if rest else move


def split(t: torch.Tensor, offset: int) -> tuple[tuple[int, int], int]:
    if t.dim() == 1:
        dims = [(1, max(t.stride(0), 1))]
    else:  # the larger stride first, whichever dimension has it: any layout
        dims = sorted(((d, max(s, 1)) for d, s in enumerate(t.stride())), key=lambda d: -d[1])
    move = [0, 0]
    for dim, stride in dims:
        move[dim], offset = divmod(offset, stride)
    return (move[0], move[1]), offset


def cells_of(t: torch.Tensor, offsets: np.ndarray, lanes: np.ndarray):
    """(row, column) of each lane and whether it is on. An off lane's address may point
    anywhere (past the end of a row is the start of the next), so where the block's addresses
    step by whole rows and columns from lane to lane (pointers built from aranges and strides
    do), each lane's cell is its step from an on lane's cell."""
    cells, on = [cell_of(t, int(o)) for o in offsets.ravel()], lanes.ravel()
    if on.any() and not on.all():
        lane = np.indices(offsets.shape).reshape(offsets.ndim, -1).T
        rule = np.hstack([np.ones((len(lane), 1)), lane])
        fit = np.rint(np.linalg.lstsq(rule, offsets.ravel().astype(float), rcond=None)[0])
        moves = [step_of(t, int(step)) for step in fit[1:]]
        if (rule @ fit == offsets.ravel()).all() and None not in moves:
            first = int(np.argmax(on))
            (r0, c0), back = cells[first], lane[first]
            cells = [
                (
                    r0 + sum(int(d) * m[0] for d, m in zip(at - back, moves, strict=True)),
                    c0 + sum(int(d) * m[1] for d, m in zip(at - back, moves, strict=True)),
                )
                for at in lane
            ]
    return cells, [bool(v) for v in on]


def label(pid: tuple[int, int, int]) -> str:
    return ",".join(str(p) for p in (pid[:2] if pid[1] or pid[2] else pid[:1]))


def draw(trace: Trace, title: str) -> str:
    """One panel per tensor and kind of access: a cell per element, shaded and numbered by the
    program instance that touched it; a lane the mask turned off is a dashed cell marked x."""
    size, panels, y = 26, [], 24
    parts = [f'<text x="8" y="16" text-anchor="start">{title}</text>']
    for kind in ("load", "store"):
        for name, t in trace.tensors.items():
            hits = [a for a in trace.accesses if a[0] == kind and a[1] == name]
            if not hits:
                continue
            rows, cols = (1, t.numel()) if t.dim() == 1 else tuple(t.shape)
            cells, off = {}, set()  # (row, column) -> program ids; lanes masked off
            for _, _, pid, lane_cells, lanes in hits:
                for (r, c), on in zip(lane_cells, lanes, strict=True):
                    if not (0 <= r < rows + 8 and 0 <= c < cols + 8):
                        continue  # far outside: not drawn
                    if on:
                        cells.setdefault((r, c), []).append(pid)
                    else:
                        off.add((r, c))
            inside = {(r, c) for r in range(rows) for c in range(cols)}
            height = max([rows] + [r + 1 for r, _ in [*cells, *off]])
            y += 22
            parts.append(f'<text x="8" y="{y}" text-anchor="start">{name} · tl.{kind}</text>')
            y += 6
            for r, c in sorted(inside | set(cells)):
                x0, y0, pids = 8 + c * size, y + r * size, cells.get((r, c), [])
                shade = 0.1 + 0.12 * ((pids[-1][0] + 3 * pids[-1][1]) % 4) if pids else 0
                # a thick border: touched by two programs, or outside the tensor
                thick = len(set(pids)) > 1 or (r, c) not in inside
                parts.append(
                    f'<rect x="{x0}" y="{y0}" width="{size}" height="{size}" '
                    f'fill="currentColor" fill-opacity="{shade:.2f}" stroke="currentColor"'
                    + (' stroke-width="3"/>' if thick else "/>")
                )
                if pids:
                    parts.append(f'<text x="{x0 + 13}" y="{y0 + 17}">{label(pids[-1])}</text>')
            for r, c in sorted(off):
                x0, y0 = 8 + c * size, y + r * size
                parts.append(
                    f'<rect x="{x0 + 3}" y="{y0 + 3}" width="{size - 6}" height="{size - 6}" '
                    'fill="none" stroke="currentColor" stroke-dasharray="3 3"/>'
                    f'<text x="{x0 + 13}" y="{y0 + 17}" fill-opacity="0.6">x</text>'
                )
            y += height * size + 4
            panels.append(max([cols] + [c + 1 for _, c in [*cells, *off]]))
    width = max(16 + size * max(panels), 16 + 8 * len(title))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {y + 8}" class="diagram" '
        'aria-hidden="true" focusable="false" font-size="12" text-anchor="middle" '
        'font-family="var(--md-code-font-family, monospace)" fill="currentColor">'
        + "".join(parts)
        + "</svg>\n"
    )


def save_drawing(trace: Trace, title: str) -> None:
    """Write the drawing beside the other temporary files (or into EXERCISE_DRAWING_DIR)."""
    folder = Path(os.environ.get("EXERCISE_DRAWING_DIR") or tempfile.gettempdir())
    path = folder / f"{Path(__file__).stem}.svg"
    svg = draw(trace, title)
    path.write_text(svg, encoding="utf-8")
    print(say("drawn", path=path))
    print(f"drawing sha256: {hashlib.sha256(svg.encode()).hexdigest()}")


# --8<-- [end:drawing]
def draw_run() -> None:
    """Run your kernel on 3 rows of 5 columns (BLOCK_N = 8) and draw what it touched."""
    x = -torch.arange(15, dtype=torch.float32).reshape(3, 5)
    out = torch.empty(3)
    with Trace(x=x, out=out) as trace:
        row_max_kernel[(3,)](x, out, 5, x.stride(0), BLOCK_N=8)
    save_drawing(trace, "row_max_kernel: x 3 x 5, BLOCK_N = 8, grid = (3,)")


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(say("no_gpu", file=Path(__file__).name))
    if INTERPRETED:
        try:
            draw_run()
        except Exception as exc:  # the checker below says what is wrong, case by case
            print(say("not_drawn", error=type(exc).__name__))
    raise SystemExit(check("row_max", CASES))
