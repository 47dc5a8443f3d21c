"""Locks, their records, the states of snippets, and the audit that fails CI when one is stale."""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import snippet_records as records
import tomllib
from audit_locks import audit
from conftest import CURRENT, LOCKS, REPO

SNIPPET = "snippets/block-programming/vector_add.py"
CLAIM = "snippets/block-programming/claim_interpreter_bf16.py"


def pinned(requirements: str, name: str) -> str:
    text = (REPO / "requirements" / requirements).read_text()
    found = re.findall(rf"(?m)^{re.escape(name)}==([^\s;]+)", text)
    assert len(set(found)) == 1, f"{requirements}: {name} pins {found}"
    return found[0]


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
def test_lock_environment_installs_the_lock(lock):
    files = (
        ["test.in", "test.txt"]
        if lock.id == CURRENT.id
        else [f"lock-{lock.id}.in", f"lock-{lock.id}.txt"]
    )
    for requirements in files:
        for name, version in lock.packages.items():
            assert pinned(requirements, name) == version, (requirements, name)


def test_exactly_one_current_lock_and_it_is_the_newest_gpu_verified():
    """The rule for mike's `latest` (README): the newest lock that a GPU verifies is current."""
    verified = [lock for lock in LOCKS if lock.devices and lock.status != "retired"]
    assert [lock.id for lock in LOCKS if lock.status == "current"] == [verified[0].id]


def python_bounds(spec: str) -> tuple[int, int | None]:
    """'>=3.10,<3.15' -> (10, 15); '>=3.11' -> (11, None); minor versions of Python 3."""
    low = re.search(r">=\s*3\.(\d+)", spec)
    high = re.search(r"<\s*3\.(\d+)", spec)
    assert low, spec
    return int(low.group(1)), int(high.group(1)) if high else None


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
def test_lock_python_range_follows_its_wheels_metadata(lock):
    """The lock's Python range (shown to readers, and in every copied file's PEP 723 block) is
    inside what torch's and triton's wheels declare, as read into snippets/compatibility/pins.json
    by scripts/torch_triton_pins.py; it starts where the stricter of the two starts."""
    pins = json.loads((REPO / "snippets/compatibility/pins.json").read_text(encoding="utf-8"))
    torch_spec = next(t for t in pins["torch"] if t["version"] == lock.torch)["requires_python"]
    triton_spec = next(t for t in pins["triton"] if t["version"] == lock.triton)["requires_python"]
    low, high = python_bounds(lock.python)
    torch_low, _ = python_bounds(torch_spec)
    triton_low, triton_high = python_bounds(triton_spec)
    assert low == max(torch_low, triton_low), (lock.python, torch_spec, triton_spec)
    assert high is not None and (triton_high is None or high <= triton_high), lock.python


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
def test_lock_is_reviewed_on_time_and_says_why_without_a_gpu(lock):
    assert lock.reviewed < lock.next_review
    if not lock.devices:
        assert lock.gpu_reason and lock.gpu_reason.en and lock.gpu_reason.zh


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
def test_records_match_their_lock(lock):
    for platform in lock.record_platforms:
        record = records.load_record(lock.id, platform)
        assert record is not None, f"locks/{lock.id}.{platform}.json is missing"
        assert record["lock"] == lock.id and record["platform"] == platform
        assert record["versions"]["torch"].split("+")[0] == lock.torch
        assert record["versions"]["triton"] == lock.triton
        if platform != records.CPU:
            assert record["versions"]["cuda"] == lock.cuda
            assert records.device_slug(record["device"]["name"]) == platform


# What one call of the GPU machine may run for, the whole verification in it (the brief's budget).
GPU_CALL_BUDGET_S = 600


@pytest.mark.parametrize(
    "lock, platform",
    [(lock, p) for lock in LOCKS for p in lock.record_platforms if p != records.CPU],
    ids=lambda v: getattr(v, "id", v),
)
def test_a_whole_gpu_run_fits_one_device_call(lock, platform):
    """A GPU record written by one whole run (no --only), or by one run of each named part
    (--part), ran every snippet in its time span, and each span fits one call of the GPU machine."""
    record = records.load_record(lock.id, platform)
    parts = record.get("parts", {})
    if parts:
        assert record["runner"].startswith("scripts/verify_snippets.py --part ")
        spans = {name: part for name, part in parts.items()}
        missing = set(records.GPU_PARTS) - set(spans)
        if missing or any("--only" in part["runner"] for part in spans.values()):
            pytest.skip(f"assembled from several calls: {[p['runner'] for p in spans.values()]}")
    elif record["runner"] != "scripts/verify_snippets.py":
        pytest.skip(f"assembled from several calls: {record['runner']}")
    else:
        spans = {name: record for name in records.GPU_PARTS}  # one run held every part
    for name, part in spans.items():
        for run in [part, *part.get("later", [])]:  # the whole run, then files re-run later
            span = dt.datetime.fromisoformat(run["finished"]) - dt.datetime.fromisoformat(
                run["started"]
            )
            assert span.total_seconds() <= GPU_CALL_BUDGET_S, f"part {name} took {span}"
    ran = {row["path"] for row in record["snippets"]}
    added_since = set(records.list_snippets()) - ran  # only files pending with a reason
    assert added_since <= set(lock.pending), "a whole run holds a row for every snippet"
    assert ran <= set(records.list_snippets()), "the record holds rows of deleted files"
    for row in record["snippets"]:
        part = spans[records.part_of(row["path"])]
        later = [r for r in part.get("later", []) if any(o in row["path"] for o in
                 re.findall(r"--only (\S+)", r["runner"]))]  # fmt: skip
        days = {run[k][:10] for run in [part, *later] for k in ("started", "finished")}
        assert row["date"] in days, row["path"]


def test_gpu_parts_cover_every_snippet_once():
    """Each snippet belongs to exactly one named part, and each named page folder exists."""
    pages = {Path(p).parent.name for p in records.list_snippets()}
    files = {Path(p).name for p in records.list_snippets()}
    for name, named in records.GPU_PARTS.items():
        folders = {n for n in named if "*" not in n}
        assert folders <= pages, (name, folders - pages)
        assert all(fnmatch.filter(files, n) for n in set(named) - folders), name
    rest = [name for name, named in records.GPU_PARTS.items() if not named]
    assert len(rest) == 1, "exactly one part takes every page no other part names"
    counts = {name: 0 for name in records.GPU_PARTS}
    for path in records.list_snippets():
        counts[records.part_of(path)] += 1
    assert all(counts.values()), counts


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
@pytest.mark.parametrize("path", records.list_snippets())
def test_snippet_is_verified_or_pending_on_every_platform(path, lock):
    """CI fails when a snippet differs from its run, unless its GPU run is listed as pending."""
    for s in records.lock_states(lock).of(path).values():
        assert not s.state.blocks_ci, (
            f"{path} is {s.state.name} on {lock.id} / {s.platform}. Re-run it there "
            f"(scripts/verify_snippets.py, `make records-cpu` for the CPU) and commit the record, "
            f"or list a GPU run under [pending] in locks/{lock.id}.toml."
        )


def test_pending_list_names_real_unverified_snippets():
    for lock in LOCKS:
        unpended = dataclasses.replace(lock, pending={})
        for path in lock.pending:
            assert path in records.list_snippets(), f"pending lists {path}, which does not exist"
            states = records.lock_states(unpended).of(path)
            gpu = {s.state.name for p, s in states.items() if p != records.CPU}
            assert gpu != {"verified"}, f"{path} is verified again: remove it from [pending]"


# ----------------------------------------------------------------------------- lock validation

GOOD = (REPO / "locks" / f"{CURRENT.id}.toml").read_text(encoding="utf-8")


def lock_data(**changes) -> dict:
    data = tomllib.loads(GOOD)
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    return data


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"status": "active"}, "status 'active' is not one of"),
        ({"reviewed": None}, "missing key 'reviewed'"),
        ({"gpu": {"devices": ["nvidia-a100"]}}, "unknown device"),
        ({"gpu": {"devices": []}}, "give reason and reason-zh"),
        ({"packages": {"torch": "2.11.0"}}, "must pin triton"),
        ({"packages": {"torch": ">=2.11", "triton": "3.6.0"}}, "not an exact version"),
        ({"python": "3.10+"}, "python ="),
        ({"mike-version": "torch2.11"}, "triton-<major>.<minor>"),
        ({"next-review": dt.date(2020, 1, 1)}, "must come after"),
        ({"colour": "blue"}, "unknown keys"),
        ({"pending": {SNIPPET: "no Chinese reason"}}, "reason-zh"),
        ({"pending": {SNIPPET: {"reason": "a", "reason-zh": "甲"}}}, "due = YYYY-MM-DD"),
        (
            {"pending": {SNIPPET: {"reason": "a", "reason-zh": "甲", "due": "next week"}}},
            "due = YYYY-MM-DD",
        ),
    ],
)
def test_lock_validation_says_what_is_wrong(changes, message):
    with pytest.raises(records.LockError, match=re.escape(message)):
        records.parse_lock(lock_data(**changes), "x.toml")


def pending_entry(due: dt.date) -> dict:
    return {"reason": "H200 booked", "reason-zh": "已预约 H200", "due": due}


def test_lock_pending_reasons_in_both_languages_and_a_due_date():
    lock = records.parse_lock(
        lock_data(pending={SNIPPET: pending_entry(dt.date(2027, 1, 15))}), "x"
    )
    assert lock.pending[SNIPPET]("en") == "H200 booked"
    assert lock.pending[SNIPPET]("zh") == "已预约 H200"
    assert lock.pending_due[SNIPPET] == dt.date(2027, 1, 15)


def test_audit_fails_once_a_pending_run_is_past_its_due_date():
    """A [pending] entry is a promise with a date: the audit holds it to that date."""
    due = dt.date(2027, 1, 15)
    lock = records.parse_lock(lock_data(pending={SNIPPET: pending_entry(due)}), "x.toml")
    overdue = f"the GPU run of {SNIPPET} was due on {due}"
    late = [p for p in audit(due + dt.timedelta(days=1), [lock]) if overdue in p]
    assert len(late) == 1 and f"--only {SNIPPET}" in late[0], late
    assert not [p for p in audit(due, [lock]) if "was due on" in p]  # the day itself is in time


# ----------------------------------------------------------------------------- states


def record_with(platform: str = "nvidia-h200", path: str = SNIPPET, **entry_changes) -> dict:
    entry = {
        "path": path,
        "sha256": records.snippet_sha256(records.read_snippet_needs(path)),
        "status": "passed",
        "seconds": 1.0,
        "date": "2026-01-01",
        "figures": {},
        "stdout": [],
        **entry_changes,
    }
    device = (
        {"name": "NVIDIA H200", "cc": "9.0", "driver": "x"}
        if platform != records.CPU
        else {"name": "CPU", "machine": "x86_64"}
    )
    return {
        "schema": records.RECORD_SCHEMA,
        "lock": CURRENT.id,
        "platform": platform,
        "date": "2026-01-01",
        "snippets": [entry],
        "device": device,
        "versions": {"torch": "2.11.0", "triton": "3.6.0", "cuda": "13.0", "python": "3.12"},
    }


def state(record, platform="nvidia-h200", path=SNIPPET, lock=CURRENT, pending=None):
    lock = dataclasses.replace(lock, pending=pending or {})
    return records.snippet_state(records.read_snippet_needs(path), lock, platform, record)


def test_state_verified_when_hash_and_status_match():
    assert state(record_with()).state.name == "verified"


def test_state_changed_when_the_file_differs_from_its_run():
    assert state(record_with(sha256="0" * 64)).state.name == "changed"


def test_state_pending_shows_its_reason_on_the_gpu_only():
    reason = records.Reason("H200 run next week", "下周在 H200 上跑")
    s = state(record_with(sha256="0" * 64), pending={SNIPPET: reason})
    assert (s.state.name, s.reason) == ("pending", reason)
    cpu = state(record_with(records.CPU, sha256="0" * 64), records.CPU, pending={SNIPPET: reason})
    assert cpu.state.name == "changed"  # a CPU record is re-run here, never pending


def test_state_failed_skipped_not_run_no_record():
    assert state(record_with(status="failed", reason="exit 1")).state.name == "failed"
    assert state(record_with(status="skipped", reason="needs CC 8.0")).state.name == "skipped"
    assert state({**record_with(), "snippets": []}).state.name == "not-run"
    assert state(None).state.name == "no-record"


def test_state_of_a_declared_skip_is_not_here_with_both_reasons():
    s = state(None, path=CLAIM)
    assert s.state.name == "not-here"
    needs = records.read_snippet_needs(CLAIM)
    assert s.reason.en == needs.gpu_skip and s.reason.zh == needs.skip_zh["gpu"]


def test_state_on_a_lock_without_gpu():
    lock = next(lock for lock in LOCKS if not lock.devices)
    s = state(None, lock=lock)
    assert s.state.name == "no-gpu" and s.reason == lock.gpu_reason


def test_every_state_has_its_own_icon_and_only_verified_is_verified():
    icons = {s.icon for s in records.STATES.values() if s.name != "no-record"}
    assert len(icons) == len(records.STATES) - 1  # not-run and no-record share "?"
    assert [s.name for s in records.STATES.values() if s.verified] == ["verified"]
    assert records.STATES["verified"].icon == "✓"
    assert all(s.icon != "✓" for s in records.STATES.values() if s.name != "verified")
    assert {s.name for s in records.STATES.values() if s.blocks_ci} == {
        "changed",
        "failed",
        "skipped",
        "not-run",
        "no-record",
    }


# ----------------------------------------------------------------------------- records


def test_record_validation_rejects_missing_keys_and_bad_figures():
    record = record_with()
    del record["device"]["cc"]
    with pytest.raises(ValueError, match="cc"):
        records.validate_record(record)
    with pytest.raises(ValueError, match="statistic"):
        records.validate_record(record_with(figures={"ms": {"value": 1.0}}))
    with pytest.raises(ValueError, match="without a reason"):
        records.validate_record(record_with(status="failed"))


MEASURED = {
    "value": 1.5,
    "unit": "ms",
    "statistic": "median",
    "spread": "min-max",
    "low": 1.2,
    "high": 1.9,
    "repeats": 5,
    "op": "add",
    "compile": "excluded",
}


@pytest.mark.parametrize(
    "missing, message",
    [
        ("repeats", "repeats >= 3"),
        ("spread", "spread must be"),
        ("low", "low <= high"),
        ("compile", "compile time"),
        ("op", "what was measured"),
    ],
)
def test_a_measured_figure_needs_its_spread_and_card(missing, message):
    records.validate_figure("ms", MEASURED)
    figure = {k: v for k, v in MEASURED.items() if k != missing}
    with pytest.raises(ValueError, match=message):
        records.validate_figure("ms", figure)
    with pytest.raises(ValueError, match="median, mean or min"):
        records.validate_figure("ms", {**MEASURED, "statistic": "count"})


def test_figures_lines_are_parsed_and_checked():
    import json

    out = f"hello\nfigures: {json.dumps({'ms': MEASURED})}\n"
    assert records.parse_figures(out) == {"ms": MEASURED}
    assert records.output_lines(out) == ["hello"]
    with pytest.raises(ValueError, match="compile"):
        records.parse_figures('figures: {"a": {"value": 1, "statistic": "count", "compile": "?"}}')


# ----------------------------------------------------------------------------- the audit


def test_audit_passes_today():
    assert audit(dt.date.today()) == []


def test_audit_fails_when_a_review_date_has_passed():
    late = max(lock.next_review for lock in LOCKS) + dt.timedelta(days=1)
    problems = [p for p in audit(late) if "review was due on" in p]  # pending runs due too
    assert len(problems) == len([lock for lock in LOCKS if lock.status != "retired"])
    assert all("records-cpu" in p for p in problems)


def edited_snippet() -> str:
    """The snippet the audit test edits: one the README's pending path can be walked with (it
    runs on the CPU and on a GPU, verified on each lock's platforms, pending nowhere), vector_add
    while it qualifies; chosen, not hard-coded, so that listing vector_add under [pending] (as
    README "Records, and what CI checks" says to) does not break the test."""
    for path in [SNIPPET, *records.list_snippets()]:
        needs = records.read_snippet_needs(path)
        if not (needs.runs_on_cpu and needs.runs_on_gpu) or any(path in k.pending for k in LOCKS):
            continue
        states = [s for lock in LOCKS for s in records.lock_states(lock).of(path).values()]
        if all(s.state.name in ("verified", "no-gpu") for s in states):
            return path
    raise AssertionError("no verified snippet runs on both the CPU and a GPU")


def run_audit(project) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "scripts/audit_locks.py"], cwd=project, capture_output=True, text=True
    )


def test_audit_fails_when_a_record_is_older_than_its_snippet_until_the_readme_path(tmp_path):
    """An edited snippet is `changed` on every platform; listed under [pending] (README "Records,
    and what CI checks"), only its CPU run is left to do, which `make records-cpu` does."""
    from conftest import copy_project

    path = edited_snippet()
    copy = copy_project(tmp_path / "p")
    snippet = copy / path
    snippet.write_text(snippet.read_text() + "\n# an edit after the runs\n")
    proc = run_audit(copy)
    assert proc.returncode == 1
    for lock in LOCKS:
        assert f"{lock.id}: {path} is changed on cpu: run `make records-cpu`" in proc.stdout
        for device in lock.devices:
            assert f"{lock.id}: {path} is changed on {device}" in proc.stdout
            assert f"--only {path}" in proc.stdout
    due = dt.date.today() + dt.timedelta(days=30)
    for lock in LOCKS:
        if lock.devices:
            toml = copy / "locks" / f"{lock.id}.toml"
            toml.write_text(
                toml.read_text().replace(
                    "[pending]\n",
                    f'[pending]\n"{path}" = {{ reason = "a", reason-zh = "甲", due = {due} }}\n',
                )
            )
    pended = run_audit(copy)
    assert pended.returncode == 1, pended.stdout
    about = [line for line in pended.stdout.splitlines() if f" {path} " in line]
    assert about and all(f"{path} is changed on cpu: " in line for line in about), about


SENTENCES = {
    # state: (English, Chinese), for a GPU row dated 2026-01-01 with reason "why" / "原因"
    "verified": (
        "✓ verified on NVIDIA H200 (CC 9.0) · torch 2.11.0 · triton 3.6.0 · 2026-01-01",
        "✓ 已在 NVIDIA H200 (CC 9.0) 上验证 · torch 2.11.0 · triton 3.6.0 · 2026-01-01",
    ),
    "changed": (
        "! changed since its run on NVIDIA H200 (CC 9.0) (2026-01-01): not verified",
        "! 在 NVIDIA H200 (CC 9.0) 上运行（2026-01-01）之后已修改：未经验证",
    ),
    "pending": (
        "… NVIDIA H200 (CC 9.0) run pending: why",
        "… 等待在 NVIDIA H200 (CC 9.0) 上重新运行：原因",
    ),
    "failed": (
        "✗ failed on NVIDIA H200 (CC 9.0) (2026-01-01): why",
        "✗ 在 NVIDIA H200 (CC 9.0) 上失败（2026-01-01）：原因",
    ),
    "skipped": (
        "– skipped on NVIDIA H200 (CC 9.0) (2026-01-01): why",
        "– 在 NVIDIA H200 (CC 9.0) 上被跳过（2026-01-01）：原因",
    ),
    "not-run": ("? not run on NVIDIA H200 (CC 9.0) yet", "? 尚未在 NVIDIA H200 (CC 9.0) 上运行"),
    "no-record": ("? no NVIDIA H200 record for this lock", "? 本锁定版本没有 NVIDIA H200 的记录"),
    "not-here": (
        "◇ not run on NVIDIA H200 (CC 9.0): why",
        "◇ 不在 NVIDIA H200 (CC 9.0) 上运行：原因",
    ),
    "no-gpu": (
        "○ not verified on a GPU for this lock: why",
        "○ 本锁定版本未经 GPU 验证：原因",
    ),
}


@pytest.mark.parametrize("name", list(records.STATES))
def test_each_state_reads_as_it_should_in_both_languages(name):
    """The badge sentence of every state, written out here, not derived from STATES: a wrong icon
    or word in the vocabulary (skipped shown as verified, a tick on a CPU-only badge) fails."""
    record = record_with() if name not in ("no-record", "no-gpu") else None
    s = records.SnippetState(
        SNIPPET, "nvidia-h200", records.STATES[name], records.Reason("why", "原因"), record,
        record["snippets"][0] if record and name != "not-run" else None,
    )  # fmt: skip
    for lang, expected in zip(("en", "zh"), SENTENCES[name], strict=True):
        assert f"{s.state.icon} {records.state_text(s, lang)}" == expected


def test_a_row_keeps_the_earlier_runs_of_the_same_file_only():
    def row(sha, value, date="2026-12-02", status="passed", earlier=()):
        figures = {"t": {"value": value, "statistic": "ratio"}}
        return {"path": "x.py", "sha256": sha, "status": status, "date": date,
                "figures": figures, "earlier": list(earlier)}  # fmt: skip

    old = row("a", 1.0, "2026-12-01", earlier=[{"date": "2026-11-30", "figures": {"t": 2.0}}])
    assert records.earlier_runs(row("a", 1.3), old) == [
        {"date": "2026-12-01", "figures": {"t": 1.0}},
        {"date": "2026-11-30", "figures": {"t": 2.0}},
    ]
    assert records.earlier_runs(row("b", 1.3), old) == []  # the file changed: history restarts
    assert records.earlier_runs(row("a", 1.3, status="failed"), old) == []
    many = row(
        "a", 1.0, earlier=[{"date": f"2026-11-{d}", "figures": {"t": 1.0}} for d in range(20, 28)]
    )
    assert len(records.earlier_runs(row("a", 1.0), many)) == records.EARLIER_RUNS_KEPT
    new = row("a", 1.3, earlier=records.earlier_runs(row("a", 1.3), old))
    assert records.other_runs(new, "t") == [1.0, 2.0]
    assert records.moved_between_runs(new["figures"]["t"], [1.0, 2.0])
    assert not records.moved_between_runs(new["figures"]["t"], [1.31])  # within 5 %
    spread = {"value": 1.3, "low": 1.0, "high": 1.6, "statistic": "median"}
    assert not records.moved_between_runs(spread, [1.1])  # inside this run's own spread
    percent = f"{records.MOVED_RATIO:.0%}"  # as each page states it: "5 %" in en, "5%" in zh
    for lang, threshold in (("en", percent.replace("%", " %")), ("zh", percent)):
        assert threshold in (REPO / "docs" / lang / "verification.md").read_text(encoding="utf-8")
    bad = {**new, "earlier": [{"date": "2026-12-01", "figures": {"other": 1.0}}]}
    with pytest.raises(ValueError, match="earlier figures not in this run"):
        records.validate_earlier(bad, "record")
