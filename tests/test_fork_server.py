"""The fork server that runs most snippets of the suite (scripts/fork_server.py, through
conftest.ForkServer): a forked run is a fresh one, a timeout kills what the run started, the exit
status is CPython's, and a file that the rule or its header keeps fresh is not forked. That each
forked snippet prints what a fresh process does: scripts/compare_fork_runs.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import conftest
import fork_server
import pytest
import snippet_records as records
from conftest import CURRENT, REPO, ForkServer, cpu_run_env, fork_server_env, run_counting_cpu


@pytest.fixture(scope="module")
def server():
    one = ForkServer(sys.executable, fork_server_env(interpreted=False))
    yield one
    one.close()


def both(server: ForkServer, path: Path, env: dict | None = None, timeout: float = 60):
    """The file run fresh (as run_counting_cpu runs ``[python, path]``) and forked."""
    env = env or cpu_run_env()
    fresh = run_counting_cpu([sys.executable, str(path)], REPO, env, timeout)
    forked = server.run(str(path), REPO, env, timeout)
    return fresh, forked


SMALL = """\
import os, sys
print("argv", sys.argv, "file", __file__, "path0", sys.path[0], "cwd", os.getcwd())
print("name", __name__, "interpret", os.environ.get("TRITON_INTERPRET"))
print("only here", os.environ.get("ONLY_HERE"))
print("stdin", repr(sys.stdin.read()), "hash", hash("seed"))
import triton

@triton.jit
def kernel(x):
    pass

print("decorated as", type(kernel).__name__)
print("to stderr", file=sys.stderr)
import atexit
atexit.register(lambda: print("at exit"))
"""


@pytest.mark.parametrize("interpret", [None, "1"])
def test_a_forked_run_prints_what_a_fresh_process_prints(tmp_path, server, interpret):
    path = tmp_path / "small.py"
    path.write_text(SMALL)
    env = {**cpu_run_env(), "ONLY_HERE": "yes"}
    if interpret:
        env["TRITON_INTERPRET"] = interpret
    fresh, forked = both(server, path, env)
    assert fresh.returncode == 0, fresh.stderr
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        fresh.returncode, fresh.stdout, fresh.stderr
    )  # fmt: skip
    assert "at exit" in forked.stdout and "yes" in forked.stdout
    assert ("InterpretedFunction" in forked.stdout) == bool(interpret)
    assert forked.forked and forked.cpu_seconds < fresh.cpu_seconds + 1
    assert forked.wall_seconds > 0


@pytest.mark.parametrize(
    "body, status, stderr",
    [
        ("pass", 0, ""),
        ("import sys; sys.exit()", 0, ""),
        ("import sys; sys.exit(3)", 3, ""),
        ("import sys; sys.exit(256 + 7)", 7, ""),
        ("import sys; sys.exit(-1)", 255, ""),
        ("import sys; sys.exit(True)", 1, ""),
        ("import sys; sys.exit('not solved yet')", 1, "not solved yet\n"),
        ("raise ValueError('wrong')", 1, "ValueError: wrong\n"),
        ("raise KeyboardInterrupt", -2, "KeyboardInterrupt\n"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", -15, ""),
        ("import os; os._exit(4)", 4, ""),
    ],
)
def test_the_exit_status_is_what_python_gives(tmp_path, server, body, status, stderr):
    path = tmp_path / "exits.py"
    path.write_text(body + "\n")
    fresh, forked = both(server, path)
    assert fresh.returncode == status and forked.returncode == status
    assert forked.stderr.endswith(stderr) and fresh.stderr.endswith(stderr)
    if "Traceback" in fresh.stderr:  # the same traceback, less the server's runpy frames
        assert forked.stderr.splitlines()[-1] == fresh.stderr.splitlines()[-1]


def test_a_timeout_kills_the_run_and_what_it_started(tmp_path, server):
    path = tmp_path / "hangs.py"
    pid_file = tmp_path / "pid"
    path.write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(300)\n"
    )
    start = time.perf_counter()
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        server.run(str(path), REPO, cpu_run_env(), timeout=3)
    assert time.perf_counter() - start < 30
    assert raised.value.output == "started\n"
    grandchild = int(pid_file.read_text())
    for _ in range(100):  # killed with the group; reaped by whoever adopted it
        stat = Path(f"/proc/{grandchild}/stat")
        if not stat.exists() or stat.read_text().split()[2] == "Z":
            break
        time.sleep(0.1)
    else:
        os.kill(grandchild, 9)
        pytest.fail(f"the sleep the run started (pid {grandchild}) outlived the timeout")
    path.write_text("print('next')\n")
    done = server.run(str(path), REPO, cpu_run_env())
    assert done.stdout == "next\n", "the server serves the next run after a timeout"


@pytest.mark.parametrize(
    "code, fresh",
    [
        ("import torch\nprint(torch.ones(2))\n", False),
        ('import os\nprint(os.environ.get("TRITON_INTERPRET"), os.environ["HOME"])\n', False),
        ('"""Set os.environ["TORCH_LOGS"] = "+dynamo"."""\n# os.environ["X"] = "1"\n', False),
        ('import os\nos.environ["TRITON_INTERPRET"] = "1"\n', True),
        ('import os\nos.environ.setdefault("TORCH_LOGS", "graph")\n', True),
        ('import os\nos.environ.pop("CC", None)\n', True),
        ('import os\ndel os.environ["CC"]\n', True),
        ('import os\nos.putenv("A", "1")\n', True),
        ('import os\nprint(os.environ.get("TORCHINDUCTOR_CACHE_DIR"))\n', True),
        ('env = {"TRITON_CACHE_DIR": "/tmp/x"}\n', True),
        ('import sys\nprint("torch" in sys.modules)\n', True),
        ("import resource\n", True),
        ("from multiprocessing import Pool\n", True),
        ("import torch\ntorch.cuda.init()\n", True),
        ('import subprocess\nsubprocess.run(["python", "-X", "importtime", "-c", ""])\n', True),
    ],
)
def test_the_rule_keeps_a_file_that_forking_could_change_in_a_fresh_process(code, fresh):
    reason = fork_server.fresh_process_reason(code)
    assert (reason is not None) == fresh, reason


HEADER = """\
# /// script
# requires-python = ">=3.10"
# dependencies = ["torch"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# fresh-process = "it reads how long its own imports took"
# ///
"""


def test_the_header_keeps_a_file_the_rule_misses_in_a_fresh_process():
    needs = records.parse_snippet_needs(HEADER, "snippets/x/y.py")
    assert needs.fresh_process == "it reads how long its own imports took"
    with pytest.raises(records.SnippetContractError, match="fresh-process"):
        records.parse_snippet_needs(HEADER.replace('"it reads how long its own imports took"',
                                                   "true"), "snippets/x/y.py")  # fmt: skip
    path = "snippets/block-programming/vector_add.py"
    assert conftest.may_fork(path)
    assert not conftest.may_fork(path, needs)  # not a patched read_snippet_needs: see CpuRuns


class Recorder:
    """Stands in for run_counting_cpu and ForkServer: which way did CpuRuns._run go?"""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict]] = []

    def fresh(self, command, cwd, env, timeout=None):
        self.calls.append(("fresh", command[-1], env))
        return subprocess.CompletedProcess(command, 0, "", "")

    def server(self, python, env):
        recorder = self

        class Server:
            def run(self, path, cwd, run_env, timeout=None):
                recorder.calls.append(("forked", path, env))
                return subprocess.CompletedProcess([python, path], 0, "", "")

        return Server()


@pytest.mark.parametrize(
    "path, way",
    [
        ("snippets/block-programming/vector_add.py", "forked"),  # interpreted
        ("snippets/debugging/claim_debug_build.py", "fresh"),  # sets os.environ
        ("snippets/choosing-a-route/first_call_times.py", "fresh"),  # names TORCHINDUCTOR_*
    ],
)
def test_cpu_runs_fork_only_what_may_fork(path, way):
    needs = records.read_snippet_needs(path)
    assert needs.runs_on_cpu and conftest.exercise_batch(path) is None
    recorder = Recorder()
    conftest.CpuRuns(fresh=recorder.fresh, fork_server=recorder.server)._run(CURRENT, path)
    ((how, ran, env),) = recorder.calls
    assert (how, ran) == (way, path)
    if how == "forked":  # the server's environment has the run's TRITON_INTERPRET
        assert (env.get("TRITON_INTERPRET") == "1") == needs.cpu_interpreter


NICENESS = "import os; print(os.nice(0))"


def test_the_pools_processes_yield_to_the_tests_own(tmp_path):
    """A process the pool starts, and one a fork server the pool started forks, run at
    POOL_NICENESS; one the main thread starts keeps the tests' own priority."""
    script = tmp_path / "niceness.py"
    script.write_text(NICENESS + "\n")
    runs = conftest.CpuRuns()
    try:
        own = int(os.nice(0))
        pooled = runs.submit(("niceness", "fresh"), run_counting_cpu, [sys.executable, str(script)],
                             REPO, cpu_run_env(), 60).result()  # fmt: skip
        forked = runs._pool.submit(
            lambda: runs._server(CURRENT, cpu_run_env()).run(str(script), REPO, cpu_run_env(), 60)
        ).result()
        main = run_counting_cpu([sys.executable, str(script)], REPO, cpu_run_env(), 60)
    finally:
        runs.close()
    assert int(main.stdout) == own
    assert int(pooled.stdout) == int(forked.stdout) == min(19, own + conftest.POOL_NICENESS)


class Item:
    def __init__(self, name: str, fixtures: tuple[str, ...] = ()) -> None:
        self.name = self.originalname = name
        self.fixturenames = fixtures


def test_the_tests_that_wait_for_the_pool_run_last_in_their_order(monkeypatch):
    monkeypatch.setattr(conftest, "WAITS_FOR_THE_POOL", {"test_waits"})
    items = [Item("a"), Item("b", ("cpu_runs",)), Item("c"), Item("test_waits"), Item("d")]
    ordered = [i.name for i in conftest.pool_waiters_last(items)]
    assert ordered == ["a", "c", "d", "b", "test_waits"]


def test_the_pools_jobs_start_from_the_sessions_environment(monkeypatch, tmp_path):
    """A variable a main-thread test sets (a fake compiler on PATH, CXX) does not reach a run
    the pool starts meanwhile: the pool's environment is the one the session started with. So a
    site build in the pool still finds git (it copies the project as git lists it) while a test
    of the runner has put a folder of fake compilers alone on PATH."""
    monkeypatch.setenv("SET_BY_A_TEST_ON_THE_MAIN_THREAD", "1")
    monkeypatch.setenv("PATH", str(tmp_path))  # no git here
    runs = conftest.CpuRuns()
    try:
        pooled = runs.submit(("environment", "cpu"), conftest.cpu_run_env).result()
        built = runs.submit(("environment", "build"), conftest.quiet_env).result()
        listed = runs.submit(("environment", "files"), conftest.project_files).result()
        head = runs.submit(("environment", "git"), conftest.git, conftest.REPO, "rev-parse", "HEAD")
        head = head.result()
    finally:
        runs.close()
    assert "README.md" in listed and len(head.strip()) == 40, (listed[:5], head)
    assert "SET_BY_A_TEST_ON_THE_MAIN_THREAD" not in pooled
    assert "SET_BY_A_TEST_ON_THE_MAIN_THREAD" not in built
    assert cpu_run_env()["SET_BY_A_TEST_ON_THE_MAIN_THREAD"] == "1"


def test_every_name_that_waits_for_the_pool_is_a_test():
    import test_mutations
    import test_site

    tests = {
        name for m in (test_site, test_mutations) for name in dir(m) if name.startswith("test_")
    }
    assert conftest.WAITS_FOR_THE_POOL and conftest.WAITS_FOR_THE_POOL <= tests


# What the pool's threads read while the main thread runs other tests: a test that patches one of
# these modules' names (monkeypatch.setattr) changes the snippet runs in flight beside it (a
# patched read_snippet_needs once ran program_ids.py without the interpreter in a CI run). Such a
# test passes its stand-in in (CpuRuns(fresh=..., fork_server=...), may_fork(path, needs)).
POOL_READS = ("records", "conftest", "copies", "fork_server", "snippet_records", "snippet_copies")
NOT_READ_BY_THE_POOL = {  # patched by a test, and why no pool thread reads it
    "records.snippet_sha256": "a record's binding: read by lock states and the history page, "
    "not by a snippet's run, a copy's run or a build (a process of its own)",
}
PATCHED = re.compile(r"monkeypatch\.setattr\(\s*(\w+)\s*,\s*\"(\w+)\"")


def patches_of_what_the_pool_reads(text: str) -> list[str]:
    return [
        f"{module}.{name}"
        for module, name in PATCHED.findall(text)
        if module in POOL_READS
        and name != "WAITS_FOR_THE_POOL"  # read before the pool starts
        and f"{module}.{name}" not in NOT_READ_BY_THE_POOL
    ]


def test_no_test_patches_a_name_the_pools_threads_read():
    found = {
        path.name: patched
        for path in sorted((REPO / "tests").glob("test_*.py"))
        if (patched := patches_of_what_the_pool_reads(path.read_text(encoding="utf-8")))
    }
    assert not found, f"pass a stand-in instead of patching a module global: {found}"
    patch = "monkeypatch" + ".setattr("  # not a patch of this file's own
    planted = patch + 'records, "read_snippet_needs", lambda p: needs)'
    assert patches_of_what_the_pool_reads(planted) == ["records.read_snippet_needs"]
    assert patches_of_what_the_pool_reads(patch + 'conftest, "ForkServer", x)')
