"""The lock, its GPU records, and the rule: a snippet edited after its GPU run fails CI."""

from __future__ import annotations

import dataclasses
import re

import pytest
import snippet_records as records

LOCK = records.load_lock(records.current_lock_id())


def pinned(requirements: str, name: str) -> str:
    text = (records.REPO_ROOT / "requirements" / requirements).read_text()
    found = re.findall(rf"(?m)^{re.escape(name)}==([^\s;]+)", text)
    assert len(set(found)) == 1, f"{requirements}: {name} pins {found}"
    return found[0]


@pytest.mark.parametrize("requirements", ["test.in", "test.txt"])
def test_test_environment_installs_the_current_lock(requirements):
    assert pinned(requirements, "torch") == LOCK.torch
    assert pinned(requirements, "triton") == LOCK.triton


def test_lock_has_a_review_date_and_a_status():
    assert LOCK.status == "current"
    assert LOCK.reviewed < LOCK.next_review


@pytest.mark.parametrize("slug", LOCK.devices)
def test_record_matches_its_lock(slug):
    record = records.load_record(LOCK.id, slug)
    assert record is not None, f"locks/{LOCK.id}.{slug}.json is missing: run the GPU runner"
    assert record["lock"] == LOCK.id
    assert record["versions"]["torch"].split("+")[0] == LOCK.torch
    assert record["versions"]["triton"] == LOCK.triton
    assert record["versions"]["cuda"] == LOCK.cuda
    assert records.device_slug(record["device"]["name"]) == slug


@pytest.mark.parametrize("slug", LOCK.devices)
@pytest.mark.parametrize("path", records.list_snippets())
def test_snippet_is_verified_on_gpu_or_pending(path, slug):
    """CI fails when a snippet differs from its GPU run, unless it is listed as pending."""
    needs = records.read_snippet_needs(path)
    fresh = records.snippet_freshness(needs, LOCK, records.load_record(LOCK.id, slug))
    assert fresh.state in {"verified", "pending", "cpu-only"}, (
        f"{path} is {fresh.state} on {slug} ({fresh.reason}). Re-run scripts/verify_snippets.py "
        f"on the GPU and commit the record, or add it under [pending] in locks/{LOCK.id}.toml."
    )


def test_pending_list_names_real_unverified_snippets():
    for path, reason in LOCK.pending.items():
        assert reason.strip(), f"{path}: pending needs a reason"
        assert path in records.list_snippets(), f"pending lists {path}, which does not exist"
        needs = records.read_snippet_needs(path)
        states = {
            records.snippet_freshness(
                needs, dataclasses.replace(LOCK, pending={}), records.load_record(LOCK.id, slug)
            ).state
            for slug in LOCK.devices
        }
        assert states != {"verified"}, f"{path} is verified again: remove it from [pending]"


# ----------------------------------------------------------------------------- freshness rules

SNIPPET = "snippets/block_programming/vector_add.py"


def record_with(**entry_changes) -> dict:
    entry = {
        "path": SNIPPET,
        "sha256": records.file_sha256(SNIPPET),
        "status": "passed",
        "seconds": 1.0,
        "figures": {},
        **entry_changes,
    }
    return {
        "lock": LOCK.id,
        "date": "2026-01-01",
        "snippets": [entry],
        "device": {"name": "NVIDIA H200", "cc": "9.0", "driver": "x"},
        "versions": {"torch": "2.11.0", "triton": "3.6.0", "cuda": "13.0", "python": "3.12"},
    }


def state(record, pending=None, path=SNIPPET) -> records.Freshness:
    lock = dataclasses.replace(LOCK, pending=pending or {})
    return records.snippet_freshness(records.read_snippet_needs(path), lock, record)


def test_freshness_verified_when_hash_and_status_match():
    assert state(record_with()).state == "verified"


def test_freshness_changed_when_file_differs_from_its_run():
    assert state(record_with(sha256="0" * 64)).state == "changed"


def test_freshness_pending_shows_its_reason():
    fresh = state(record_with(sha256="0" * 64), pending={SNIPPET: "H200 run next week"})
    assert (fresh.state, fresh.reason) == ("pending", "H200 run next week")


def test_freshness_failed_and_not_run_and_no_record():
    assert state(record_with(status="failed", reason="exit 1")).state == "failed"
    assert state({**record_with(), "snippets": []}).state == "not-run"
    assert state(None).state == "no-record"


def test_freshness_cpu_only_snippet_needs_no_gpu_record():
    claim = "snippets/block_programming/claim_interpreter_bf16.py"
    assert state(None, path=claim).state == "cpu-only"


def test_record_validation_rejects_missing_keys_and_bad_figures():
    record = record_with()
    del record["device"]["cc"]
    with pytest.raises(ValueError, match="cc"):
        records.validate_record(record)
    with pytest.raises(ValueError, match="statistic"):
        records.validate_record(record_with(figures={"ms": {"value": 1.0}}))
    with pytest.raises(ValueError, match="without a reason"):
        records.validate_record(record_with(status="failed"))


def test_figures_lines_are_parsed_and_checked():
    out = 'hello\nfigures: {"ms": {"value": 1.5, "unit": "ms", "statistic": "median"}}\n'
    assert records.parse_figures(out) == {"ms": {"value": 1.5, "unit": "ms", "statistic": "median"}}
    with pytest.raises(ValueError, match="compile"):
        records.parse_figures('figures: {"a": {"value": 1, "statistic": "count", "compile": "?"}}')
