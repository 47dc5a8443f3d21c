"""One-off probe (not on the site; delete before merging): why, on an H100 on 2026-12-06, the
idle-GPU call clock measured one fn at a time put softmax's autograd.Function at 0.64-0.75 of
Liger-Kernel's call at 16384 x 1024 although its host cost was lower. Compares, right after a
profiler session as in measure(): (a) one fn at a time, (b) the fns taking turns (the new
call_times), (c) (b) without the profiler session before it; and the kernel times."""
import importlib.util, statistics, torch

spec = importlib.util.spec_from_file_location("sm", "snippets/fused-softmax/softmax.py")
sm = importlib.util.module_from_spec(spec); spec.loader.exec_module(sm)
liger = sm.load_liger()
med = lambda t: round(statistics.median(t) * 1e3, 1)
for dtype in (torch.bfloat16, torch.float32):
    x = torch.randn(16384, 1024, device="cuda", dtype=dtype)
    fns = {"triton_fn": lambda: sm.SoftmaxFunction.apply(x), "triton": lambda: sm.softmax(x),
           "liger": lambda: liger(x), "eager": lambda: torch.softmax(x, -1)}
    for rnd in range(2):
        k = sm.kernel_times(list(fns.values()))
        one = [sm.call_times([f])[0] for f in fns.values()]  # (a) after the profiler session
        k2 = sm.kernel_times(list(fns.values()))
        turns = sm.call_times(list(fns.values()))  # (b)
        turns2 = sm.call_times(list(fns.values()))  # (c) no profiler session just before
        for name, kt, a, b, c in zip(fns, k, one, turns, turns2):
            print(f"{str(dtype)[6:]:9} round {rnd} {name:10} kernel {med(kt):7} us  call one-at-a-time "
                  f"{med(a):7}  turns {med(b):7}  turns-again {med(c):7}", flush=True)
