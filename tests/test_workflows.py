"""The GitHub Actions workflows parse and call the project's own entry points (README)."""

from __future__ import annotations

import pytest
import yaml
from conftest import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))


def run_lines(workflow: dict) -> str:
    return "\n".join(
        step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]
    )


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_parses_and_has_jobs_with_steps(path):
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert workflow["jobs"] and all(job["steps"] for job in workflow["jobs"].values())


@pytest.mark.parametrize(
    "name, command",
    [
        ("ci.yml", ".ci/run"),
        ("gpu-verify.yml", "scripts/verify_snippets.py"),
        ("audit.yml", "scripts/audit_locks.py"),
        ("deploy.yml", "scripts/deploy_docs.py --all --push"),
    ],
)
def test_workflow_runs_the_projects_entry_point(name, command):
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / name).read_text(encoding="utf-8"))
    assert command in run_lines(workflow)


def test_gpu_verify_runs_on_a_self_hosted_gpu_runner_and_deploy_on_tags():
    gpu = yaml.safe_load((REPO / ".github/workflows/gpu-verify.yml").read_text(encoding="utf-8"))
    assert gpu["jobs"]["verify"]["runs-on"] == ["self-hosted", "linux", "gpu"]
    deploy = yaml.safe_load((REPO / ".github/workflows/deploy.yml").read_text(encoding="utf-8"))
    assert deploy[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads the key `on` as True
    audit = yaml.safe_load((REPO / ".github/workflows/audit.yml").read_text(encoding="utf-8"))
    assert audit[True]["schedule"][0]["cron"].endswith("* *")


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_workflow_pastes_an_input_into_a_script(path):
    """`${{ inputs.x }}` inside `run:` is shell injection; pass inputs through `env:`."""
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert "${{ inputs." not in run_lines(workflow)
    assert "${{ github.event." not in run_lines(workflow)
