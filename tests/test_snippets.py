"""Every snippet keeps the contract, and every snippet CI may run passes on this CPU."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import snippet_records as records

SNIPPETS = records.list_snippets()


def test_there_are_snippets():
    assert len(SNIPPETS) >= 5, SNIPPETS


@pytest.mark.parametrize("path", SNIPPETS)
def test_snippet_declares_its_needs(path):
    needs = records.read_snippet_needs(path)
    assert needs.runs_on_gpu or needs.runs_on_cpu


@pytest.mark.parametrize("path", SNIPPETS)
def test_snippet_runs_on_cpu(path):
    """Run the file in its own process, as a reader would, on the CPU."""
    needs = records.read_snippet_needs(path)
    if needs.cpu_skip:
        pytest.skip(f"GPU only: {needs.cpu_skip}")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["CUDA_VISIBLE_DEVICES"] = ""  # a GPU on the test machine must not change the result
    if needs.cpu_interpreter:
        env["TRITON_INTERPRET"] = "1"
    proc = subprocess.run(
        [sys.executable, path],
        cwd=records.REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=needs.timeout_s,
    )
    assert proc.returncode == 0, f"{path} failed on CPU:\n{proc.stdout}\n{proc.stderr}"
    # each figures line must parse: the GPU runner records them the same way
    records.parse_figures(proc.stdout)


def test_interpreted_snippet_fails_loudly_on_wrong_numbers(tmp_path):
    """The CPU run catches a kernel that computes the wrong thing (exit code, not a print)."""
    source = (records.REPO_ROOT / "snippets/block_programming/vector_add.py").read_text()
    broken = source.replace(
        "tl.store(out_ptr + offsets, x + y, mask=mask)",
        "tl.store(out_ptr + offsets, x - y, mask=mask)",
    )
    assert broken != source
    script = tmp_path / "vector_add_broken.py"
    script.write_text(broken)
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode != 0
    assert "Mismatched elements" in proc.stderr


HEADER = """\
# /// script
# requires-python = ">=3.10"
#
# [tool.snippet]
{body}
# ///
print("hello")
"""


def needs_of(body: str) -> records.SnippetNeeds:
    text = HEADER.format(body="\n".join("# " + line for line in body.strip().splitlines()))
    return records.parse_snippet_needs(text, "snippets/x.py")


def test_contract_reads_gpu_and_interpreter():
    needs = needs_of('gpu = { min-cc = "8.0" }\ncpu = { interpreter = true }')
    assert (needs.gpu_min_cc, needs.gpu_skip, needs.cpu_interpreter, needs.cpu_skip) == (
        "8.0",
        None,
        True,
        None,
    )


def test_contract_reads_skip_reasons():
    needs = needs_of(
        'gpu = { skip = "interpreter claim", skip-zh = "解释器论断" }\n'
        "cpu = { interpreter = false }"
    )
    assert needs.gpu_skip == "interpreter claim" and not needs.runs_on_gpu
    assert needs.skip_zh == {"gpu": "解释器论断"}
    assert needs.runs_on_cpu and not needs.cpu_interpreter


@pytest.mark.parametrize(
    "body, message",
    [
        ("cpu = { interpreter = true }", "must say 'gpu"),
        ('gpu = { min-cc = "8" }\ncpu = { interpreter = true }', "min-cc"),
        ('gpu = { min-cc = "8.0" }\ncpu = { skip = "", skip-zh = "x" }', "non-empty reason"),
        ('gpu = { min-cc = "8.0" }\ncpu = { skip = "why" }', "skip-zh"),
        (
            'gpu = { skip = "a", skip-zh = "甲" }\ncpu = { skip = "b", skip-zh = "乙" }',
            "must run somewhere",
        ),
        ('gpu = { min-cc = "8.0" }\ncpu = { interpreter = true }\ncolour = 1', "unknown"),
        ('gpu = { min-cc = "8.0", skip = "x" }\ncpu = { interpreter = true }', "nothing else"),
    ],
)
def test_contract_rejects_malformed_needs(body, message):
    with pytest.raises(records.SnippetContractError, match=message):
        needs_of(body)


def test_contract_needs_exactly_one_block():
    with pytest.raises(records.SnippetContractError, match="exactly one"):
        records.parse_snippet_needs('print("no metadata")\n', "snippets/x.py")
