"""One-off probe (not on the site; delete before merging): can a chunked fused linear +
cross-entropy built from cuBLAS matmuls and the cookbook's one-pass loss kernel (its gradient
written over the chunk's logits) beat Liger-Kernel 0.8.5's fused linear cross-entropy, and on
what lever? Liger sizes a chunk so its logits are about the input's size (chunk_mem_const=1)
and adds every chunk's product into grad_weight, re-reading and re-writing all V x H of it
per chunk; larger chunks do that fewer times. Liger's own chunk_mem_const is swept too, so a
win that is only Liger's knob shows as such.

CPU (checks only):  TRITON_INTERPRET=1 python exp/flce_probe.py
GPU:                python exp/flce_probe.py
"""
import importlib.util, os, statistics, sys, time
import torch
import torch.nn.functional as F

spec = importlib.util.spec_from_file_location("ce", "snippets/cross-entropy/cross_entropy.py")
ce = importlib.util.module_from_spec(spec); spec.loader.exec_module(ce)
IGNORE = -100


def mm_fp32(a, b):
    """a @ b accumulated and returned in float32 (cuBLAS's bf16 x bf16 -> fp32 where it has
    one), without an fp32 copy of a or b."""
    try:
        return torch.mm(a, b, out_dtype=torch.float32)
    except (NotImplementedError, RuntimeError):
        return a.float() @ b.float()


class ChunkedLinearCE(torch.autograd.Function):
    """Mean cross-entropy of (h @ W.T) against t, the gradients computed chunk by chunk in the
    forward; the N x V logits never exist at once (only chunk x V)."""

    @staticmethod
    def forward(ctx, h, W, t, chunk: int, fp32_grad_w: bool):
        N, H = h.shape
        V = W.shape[0]
        count = (t != IGNORE).sum()
        scale = count.to(torch.float32).reciprocal()  # the mean's 1/n, on the GPU: no wait
        loss_rows = torch.empty(N, dtype=torch.float32, device=h.device)
        bad = torch.zeros(1, dtype=torch.int32, device=h.device)
        grad_h = torch.empty_like(h)
        grad_w = torch.zeros(V, H, device=h.device,
                             dtype=torch.float32 if fp32_grad_w else W.dtype)
        logits_buf = torch.empty(min(chunk, N), V, dtype=h.dtype, device=h.device)
        for s in range(0, N, chunk):
            e = min(s + chunk, N)
            hc, logits = h[s:e], logits_buf[: e - s]
            torch.matmul(hc, W.t(), out=logits)
            block, warps, per_sm = ce.fwd_grad_plan(V, logits.element_size())
            ce.ce_fwd_grad_kernel[(e - s,)](
                logits, t[s:e], loss_rows[s:e], logits, scale, bad, e - s, V, V, V, IGNORE,
                0.0, BLOCK=block, SMOOTH=False, ONE_BLOCK=block >= V, num_warps=warps)
            torch.matmul(logits, W, out=grad_h[s:e])  # the gradient over the logits, in place
            if fp32_grad_w:
                grad_w.add_(mm_fp32(logits.t(), hc))
            else:
                grad_w.addmm_(logits.t(), hc)
        ctx.save_for_backward(grad_h, grad_w)
        ctx.w_dtype = W.dtype
        return loss_rows.sum() * scale

    @staticmethod
    def backward(ctx, g):
        grad_h, grad_w = ctx.saved_tensors
        return grad_h * g.to(grad_h.dtype), (grad_w * g).to(ctx.w_dtype), None, None, None


def eager(h, W, t):
    logits = F.linear(h, W)
    if logits.element_size() < 4:
        logits = logits.float()
    return F.cross_entropy(logits, t, ignore_index=IGNORE)


def case(N, H, V, dtype, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    h = (torch.randn(N, H, generator=g) / H**0.5).to(dtype).to(device)
    W = torch.randn(V, H, generator=g).to(dtype).to(device)
    t = torch.randint(0, V, (N,), generator=g)
    t[::7] = IGNORE
    return h, W, t.to(device)


def grads(fn, h, W, t):
    hg, Wg = h.detach().requires_grad_(), W.detach().requires_grad_()
    loss = fn(hg, Wg, t)
    loss.backward()
    return loss.detach(), hg.grad, Wg.grad


def check(device):
    for N, H, V, dtype in [(37, 16, 1000, torch.float32), (64, 32, 5000, torch.float32)]:
        h, W, t = case(N, H, V, dtype, device)
        want = grads(lambda a, b, c: eager(a.double(), b.double(), c), h, W, t)
        for chunk in (8, 16, 64):
            for fp32 in (False, True):
                got = grads(lambda a, b, c: ChunkedLinearCE.apply(a, b, c, chunk, fp32), h, W, t)
                for x, y, what in zip(got, want, ("loss", "grad_h", "grad_w")):
                    torch.testing.assert_close(x.double(), y.double(), rtol=1e-4, atol=1e-6,
                                               msg=lambda m: f"{what} chunk {chunk}: {m}")
    print(f"{device}: chunked linear + CE matches float64 eager (loss, grad_h, grad_w)")


def liger_fn(mem_const):
    from liger_kernel.ops.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyFunction as L

    def f(h, W, t):
        out = L.apply(h, W, t, None, None, IGNORE, 0.0, 0.0, "mean", None, False, None, False,
                      False, False, None, None, mem_const)
        return out[0] if isinstance(out, tuple) else out
    return f


def bench():
    N, H, V, dtype = 8192, 4096, 128256, torch.bfloat16
    print(f"fwd+bwd, N={N} H={H} V={V} {dtype}; ms median of 5 (CUDA events), peak GiB")
    small = case(1024, H, V, dtype, "cuda", seed=1)
    want = grads(lambda a, b, c: eager(a.float(), b.float(), c), *small)
    routes = {"eager": eager}
    for c in (1, 4, 8):
        routes[f"liger_mem_const_{c}"] = liger_fn(c)
    for chunk in (256, 1024, 2048):
        routes[f"ours_chunk_{chunk}_bf16_gw"] = lambda a, b, c, k=chunk: ChunkedLinearCE.apply(a, b, c, k, False)
        routes[f"ours_chunk_{chunk}_fp32_gw"] = lambda a, b, c, k=chunk: ChunkedLinearCE.apply(a, b, c, k, True)
    h, W, t = case(N, H, V, dtype, "cuda")
    for name, fn in routes.items():
        got = grads(fn, *small)
        err = [((x.float() - y.float()).abs().max() / y.float().abs().max()).item() for x, y in zip(got, want)]
        for _ in range(2):
            grads(fn, h, W, t)
        torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        ts = []
        for _ in range(5):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); r = grads(fn, h, W, t); b.record(); b.synchronize(); ts.append(a.elapsed_time(b)); del r
        peak = (torch.cuda.max_memory_allocated() - base) / 2**30
        print(f"  {name:28} {statistics.median(ts):8.2f} ms  [{min(ts):.2f}-{max(ts):.2f}]  peak +{peak:5.2f} GiB  "
              f"rel.err loss/gh/gw vs fp32 eager {err[0]:.1e} {err[1]:.1e} {err[2]:.1e}", flush=True)


if __name__ == "__main__":
    if torch.cuda.is_available():
        check("cuda")
        bench()
    else:
        check("cpu")
