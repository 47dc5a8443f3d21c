# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: the profiler's per-op averages name GPU time `self_device_time_total`; the older
`self_cuda_time_total` is gone from them, kept (deprecated) on single events, and still accepted
as a sort key by `table()`.

On a CUDA GPU or a CPU:  python claim_profiler_device_time.py
"""

import warnings

import torch
from torch.profiler import ProfilerActivity, profile

# --8<-- [start:claim]
x = torch.randn(64, 64)
with profile(activities=[ProfilerActivity.CPU]) as prof:
    torch.relu(x @ x)

row = prof.key_averages()[0]  # (1)!
names = [name for name in ("self_device_time_total", "self_cuda_time_total") if hasattr(row, name)]
print(f"key_averages() rows have: {names}")

event = prof.events()[0]  # (2)!
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    _ = event.self_cuda_time_total
print(f"events() rows: self_cuda_time_total gives a {caught[0].category.__name__}")

old = prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=3)  # (3)!
new = prof.key_averages().table(sort_by="self_device_time_total", row_limit=3)
print(f"table(sort_by='self_cuda_time_total') sorts like the new name: {old == new}")
# --8<-- [end:claim]
assert names == ["self_device_time_total"], names
assert old == new
assert caught and caught[0].category is FutureWarning, caught
print("claim_profiler_device_time: all checks passed")
