# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# exercise = { expect = "fail", message = "not solved yet", message-zh = "还没有做对" }
# ///
"""Exercise (complete one line): a 2-D tile that reads a non-contiguous input through its strides.

transpose_kernel writes out = x.t() one BLOCK_M x BLOCK_N tile per program instance, on a 2-D
grid. x may be any view: a slice with a step (x[:, ::2]), a transpose (x.t()). Its element (m, n)
lies at x_ptr + m * stride_xm + n * stride_xn, which is m * N + n only when x is contiguous.
Complete the line marked TODO: the pointers of the tile the program instance loads.

On a CPU:       TRITON_INTERPRET=1 python exercise_transpose_tile.py
On a CUDA GPU:  python exercise_transpose_tile.py
The checker runs your kernel on empty, one-element, partial-tile, sliced, transposed, NaN/Inf,
float16 and int32 inputs, into a view of a wider buffer, and says what is wrong with a hint. Under
TRITON_INTERPRET=1 it also draws which program instance loaded and stored which element of x
and out, and which lanes the mask turned off. It exits non-zero until every case is right."""

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
def transpose_kernel(
    x_ptr,
    out_ptr,
    M,
    N,
    stride_xm,
    stride_xn,
    stride_om,
    stride_on,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)  # 64-bit: a view's last
    offs_n = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)  # element may lie 2**31 away
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x_ptrs = x_ptr + offs_m[:, None] * N + offs_n[None, :]  # TODO: x may be a view: use its strides
    tile = tl.load(x_ptrs, mask=mask)
    out_ptrs = out_ptr + offs_n[None, :] * stride_om + offs_m[:, None] * stride_on
    tl.store(out_ptrs, tile, mask=mask)


# --8<-- [end:kernel]

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"
DTYPES = (torch.float16, torch.float32, torch.int32)


def transpose(x: torch.Tensor, out: torch.Tensor, block: int = 16) -> None:
    """out = x.t() for a 2-D x of any strides, without copying x (the part you need not edit)."""
    if x.dim() != 2 or tuple(out.shape) != (x.shape[1], x.shape[0]):
        raise ValueError(
            f"x must be 2-D and out its transpose: {tuple(x.shape)}, {tuple(out.shape)}"
        )
    if x.dtype not in DTYPES or out.dtype != x.dtype:
        raise TypeError(f"transpose() takes one dtype of {DTYPES}, got {x.dtype} and {out.dtype}")
    M, N = x.shape
    if x.numel() == 0:
        return
    grid = (triton.cdiv(M, block), triton.cdiv(N, block))
    strides = (*x.stride(), *out.stride())
    transpose_kernel[grid](x, out, M, N, *strides, BLOCK_M=block, BLOCK_N=block)


SENTINEL = 12345
OUTSIDE = {"en": "changed {k} elements outside its output", "zh": "改动了输出之外的 {k} 个元素"}


def case(m: int, n: int, dtype=torch.float32, layout: str = "contiguous", special: bool = False):
    """Transpose an m x n input laid out as ``layout`` into a view of a wider buffer."""

    def run():
        g = torch.Generator().manual_seed(m * 1000 + n)
        shape = {"contiguous": (m, n), "strided": (m, 2 * n), "transposed": (n, m)}[layout]
        base = (100 * torch.randn(shape, generator=g)).to(dtype).to(DEVICE)
        x = {"contiguous": base, "strided": base[:, ::2], "transposed": base.t()}[layout]
        if special:
            x[0, :3] = torch.tensor([float("nan"), float("inf"), -float("inf")], dtype=dtype)
        buffer = torch.full((n, m + 6), SENTINEL, dtype=dtype, device=DEVICE)
        out = buffer[:, 3 : 3 + m]  # rows m + 6 apart: the output is not contiguous either
        transpose(x, out)
        outside = torch.cat([buffer[:, :3], buffer[:, 3 + m :]], dim=1)
        if not bool((outside == SENTINEL).all()):
            return OUTSIDE[LANGUAGE].format(k=int((outside != SENTINEL).sum()))
        return differs(out, x.t())

    return run


STRIDES_EN = "x_ptr + m * stride_xm + n * stride_xn: a view's rows and columns are its strides apart, not N and 1."
STRIDES_ZH = "x_ptr + m * stride_xm + n * stride_xn：视图的行与列相隔的是它的步长，不是 N 和 1。"
# fmt: off
CASES = [
    ("empty: 0 x 5", "空张量：0 x 5",
     "no element, no launch: transpose() returns before the kernel.",
     "没有元素就不启动内核：transpose() 在启动前就返回了。", case(0, 5)),
    ("one element: 1 x 1", "只有一个元素：1 x 1",
     "one program instance, one lane on: the pointer of element (0, 0) is x_ptr.",
     "一个程序实例，只有一条 lane 打开：元素 (0, 0) 的指针就是 x_ptr。", case(1, 1)),
    ("5 x 7, contiguous (partial tiles)", "5 x 7，连续（边上的 tile 不满）",
     "the mask keeps rows < M and columns < N; the pointers follow the strides.",
     "掩码只保留行 < M、列 < N 的 lane；指针按步长计算。", case(5, 7)),
    ("9 x 6 slice with a step, x[:, ::2]", "9 x 6 的带步长切片 x[:, ::2]",
     STRIDES_EN, STRIDES_ZH, case(9, 6, layout="strided")),
    ("6 x 9 transposed view, x.t()", "6 x 9 的转置视图 x.t()",
     STRIDES_EN, STRIDES_ZH, case(6, 9, layout="transposed")),
    ("NaN and Inf copied as they are", "NaN 和 Inf 原样复制",
     "a transpose moves values; it never computes with them.",
     "转置只搬运数值，不对它们做任何计算。", case(4, 5, special=True)),
    ("float16, 17 x 3", "float16，17 x 3",
     STRIDES_EN, STRIDES_ZH,
     case(17, 3, dtype=torch.float16, layout="strided")),
    ("int32, 3 x 17", "int32，3 x 17",
     STRIDES_EN, STRIDES_ZH,
     case(3, 17, dtype=torch.int32, layout="transposed")),
    ("int64 is refused with TypeError", "int64 被拒绝并抛出 TypeError",
     "transpose() checks the dtype before the launch (you need not change it).",
     "transpose() 在启动前检查 dtype（这部分不用改）。",
     lambda: refuses(TypeError, lambda: transpose(
         torch.ones(2, 3, dtype=torch.int64, device=DEVICE),
         torch.ones(3, 2, dtype=torch.int64, device=DEVICE)))),
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
    """Run your kernel on a 5 x 6 slice x[:, ::2] in 4 x 4 tiles; draw what it touched."""
    base = torch.arange(60, dtype=torch.float32).reshape(5, 12)
    x = base[:, ::2]
    out = torch.full((6, 5), float(SENTINEL))
    with Trace(x=x, out=out) as trace:
        transpose(x, out, block=4)
    save_drawing(trace, "transpose_kernel: x = base[:, ::2] (5 x 6, strides 12, 2), 4 x 4 tiles")


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(say("no_gpu", file=Path(__file__).name))
    if INTERPRETED:
        try:
            draw_run()
        except Exception as exc:  # the checker below says what is wrong, case by case
            print(say("not_drawn", error=type(exc).__name__))
    raise SystemExit(check("transpose_tile", CASES))
