"""Shared fixtures: the project's files, the built site, each lock's Python and the CPU runs."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import fork_server
import page_source
import pytest
import snippet_copies as copies
import snippet_records as records

REPO = records.REPO_ROOT
LANGUAGES = ("en", "zh")
LOCKS = records.all_locks()
CURRENT = records.load_lock(records.current_lock_id())


def project_files() -> list[str]:
    """Every file of the project as git sees it: tracked, plus untracked files not ignored.

    A copy made from this list holds a new top-level folder as soon as it exists, so a test
    copy never silently lacks something the build reads.
    """
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env=environ(),  # on a pool thread, not a PATH a main-thread test has patched
    ).stdout.split("\0")
    return [p for p in listed if p and (REPO / p).is_file()]


def copy_project(dest: Path) -> Path:
    """Copy the project (as git sees it) to change it without touching the repository."""
    for rel in project_files():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target)
    return dest


# The environment as the session started: what the pool's jobs start from, so that a test on the
# main thread that sets a variable with monkeypatch (a fake compiler on PATH, CXX) does not reach
# a run the pool starts meanwhile.
SESSION_ENVIRON = dict(os.environ)


def environ() -> dict[str, str]:
    """A copy of os.environ, or of SESSION_ENVIRON on a pool thread."""
    return dict(SESSION_ENVIRON if getattr(_POOL_THREAD, "active", False) else os.environ)


def quiet_env(**changes: str) -> dict[str, str]:
    """The environment for a child build: MkDocs 2 / end-of-life banners off (CI logs only)."""
    env = {**environ(), "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    env.pop("DOCS_DRAFT", None)  # a draft build hides missing records: never in the tests
    env.update(changes)
    return env


# The CPU runs' pool (CpuRuns) runs its processes at a lower priority than the tests' own work:
# the main thread's work is one process at a time, the pool's two, and the session ends when both
# are done. At an equal priority the pool took a share of the main thread's core and finished
# first, leaving the main thread's serial work alone on one of the two cores for minutes; at a
# lower one the main thread keeps its core and the pool fills what is left, both cores to the end.
POOL_NICENESS = 10
_POOL_THREAD = threading.local()


def yield_to_the_tests(pid: int) -> None:
    """Lower ``pid``'s priority (and so its children's) by POOL_NICENESS below the tests' own
    when a pool thread started it."""
    if getattr(_POOL_THREAD, "active", False):
        niceness = min(19, os.getpriority(os.PRIO_PROCESS, 0) + POOL_NICENESS)
        try:
            os.setpriority(os.PRIO_PROCESS, pid, niceness)
        except OSError:  # the process has already ended
            pass


def _mark_pool_thread() -> None:
    _POOL_THREAD.active = True


def run_counting_cpu(
    command: list[str], cwd: Path, env: dict, timeout: float | None = None
) -> subprocess.CompletedProcess:
    """subprocess.run(command, capture_output=True, text=True), which also keeps the run's
    ``wall_seconds`` and ``cpu_seconds``: the processor time (user + system, from wait4) of it
    and the children it waited for, which processes on the other cores do not inflate as they
    do a wall clock. Past ``timeout`` seconds the process is killed: TimeoutExpired."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=err, text=True, env=env)
        yield_to_the_tests(proc.pid)
        killed: list[bool] = []
        timer = threading.Timer(timeout or 0, lambda: (killed.append(True), proc.kill()))
        if timeout:
            timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        done = subprocess.CompletedProcess(command, proc.returncode, out.read(), err.read())
    if killed:
        raise subprocess.TimeoutExpired(command, timeout, done.stdout)
    done.wall_seconds = time.perf_counter() - start
    done.cpu_seconds = usage.ru_utime + usage.ru_stime
    return done


class ForkServer:
    """A `scripts/fork_server.py` process of one lock's Python: torch and triton imported once,
    each run a child forked from it. ``run`` gives what run_counting_cpu gives for
    ``[python, path]``: a CompletedProcess with ``wall_seconds`` and ``cpu_seconds`` (the
    child's and its reaped children's, from wait4), TimeoutExpired past ``timeout`` (the
    server kills the child's process group). ``cpu_seconds`` is what its own start and imports
    cost, counted once."""

    def __init__(self, python: str, env: dict) -> None:
        self.python = python
        self.proc = subprocess.Popen(
            [python, str(REPO / "scripts" / "fork_server.py")],
            cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        yield_to_the_tests(self.proc.pid)  # the children it forks inherit the priority
        ready = self.proc.stdout.readline()
        if not ready:
            raise RuntimeError(f"{python} scripts/fork_server.py exited {self.proc.wait()}")
        self.cpu_seconds = json.loads(ready)["cpu_seconds"]

    def run(
        self, path: str, cwd: Path, env: dict, timeout: float | None = None
    ) -> subprocess.CompletedProcess:
        command = [self.python, path]
        with tempfile.TemporaryDirectory(prefix="fork-run-") as folder:
            out, err = Path(folder) / "stdout", Path(folder) / "stderr"
            request = {"path": path, "cwd": str(cwd), "env": env, "timeout": timeout,
                       "stdout": str(out), "stderr": str(err)}  # fmt: skip
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the fork server of {self.python} died: {self.proc.wait()}")
            answer = json.loads(line)
            with open(out) as o, open(err) as e:  # the locale's encoding, as run_counting_cpu
                done = subprocess.CompletedProcess(
                    command, answer["returncode"], o.read(), e.read()
                )
        if answer["timed_out"]:
            raise subprocess.TimeoutExpired(command, timeout, done.stdout)
        done.wall_seconds = answer["wall_seconds"]
        done.cpu_seconds = answer["cpu_seconds"]
        done.forked = True
        return done

    def close(self) -> None:
        self.proc.stdin.close()  # the server ends at the end of its input
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


def cpu_run_env() -> dict[str, str]:
    """The environment every CPU run of a snippet starts from, and a fork server's: this one,
    no GPU, a fixed hash seed, no TRITON_INTERPRET (a run that wants it adds it)."""
    env = {k: v for k, v in environ().items() if k not in ("TRITON_INTERPRET",)}
    env.update(CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0")
    return env


def fork_server_env(interpreted: bool) -> dict[str, str]:
    """A fork server's environment: the runs' (cpu_run_env), with the TRITON_INTERPRET of the
    runs it serves, which triton.language reads when imported (scripts/fork_server.py)."""
    env = cpu_run_env()
    if interpreted:
        env["TRITON_INTERPRET"] = "1"
    return env


def may_fork(path: str, needs: records.SnippetNeeds | None = None) -> bool:
    """Whether the suite may run ``path`` (a plain ``[python, path]`` run) in a child forked
    from a fork server: neither the static rule (fork_server.fresh_process_reason) nor the
    header (``fresh-process = "reason"``; ``needs``, else the file's) asks for a fresh process."""
    if (needs or records.read_snippet_needs(path)).fresh_process:
        return False
    return fork_server.fresh_process_reason((REPO / path).read_text(encoding="utf-8")) is None


def build_site(
    source: Path, dest: Path, env: dict | None = None, command: tuple[str, ...] = ("mkdocs",)
) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of the project at ``source`` into ``dest``; the result carries
    ``cpu_seconds`` (run_counting_cpu)."""
    return run_counting_cpu(
        [sys.executable, "-m", *command, "build", "--strict", "--site-dir", str(dest)],
        source,
        env or quiet_env(),
    )


def git(cwd, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=environ()
    ).stdout


@pytest.fixture(scope="session")
def published(tmp_path_factory) -> Path:
    """A clone of the project with every lock deployed to its local gh-pages branch by
    `make publish`'s script: tests/test_deploy.py checks the branch, tests/test_browser.py
    serves it."""
    clone = copy_project(tmp_path_factory.mktemp("clone"))
    ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
    git(clone, "init", "-q", "-b", "main")
    git(clone, *ident, "add", ".")
    git(clone, *ident, "commit", "-q", "-m", "docs")
    env_git = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    proc = subprocess.run(
        [sys.executable, "scripts/deploy_docs.py", "--all"],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=900,
        env=quiet_env(**env_git, PATH=os.environ["PATH"]),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return clone


@pytest.fixture(scope="session")
def gh_pages(published, tmp_path_factory) -> Path:
    """The gh-pages branch that `published` holds, unpacked as GitHub Pages serves it: every
    lock under its mike version folder, versions.json, the root redirect and 404 page."""
    root = tmp_path_factory.mktemp("gh-pages")
    branch = subprocess.run(
        ["git", "archive", "gh-pages"], cwd=published, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(branch)) as archive:
        archive.extractall(root, filter="data")
    return root


SITE_BUILD: dict[str, float] = {}  # the session's build of the site: its CPU seconds


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("site")
    proc = build_site(REPO, dest)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    SITE_BUILD["cpu_seconds"] = proc.cpu_seconds
    return dest


def doc_pages(lang: str) -> list[str]:
    """Source pages of one language, relative to docs/<lang>."""
    root = REPO / "docs" / lang
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.suffix in (".md", ".ipynb")
    )


def markdown_pages(lang: str = "en") -> list[str]:
    return [p for p in doc_pages(lang) if p.endswith(".md")]


def page_source_of(lang: str, page: str) -> page_source.PageSource:
    return page_source.read_page(REPO / "docs" / lang / page)


def page_url(lang: str, page: str) -> str:
    """URL path of a source page below the site's (or a version folder's) root, as a browser
    sees it: '', 'zh/', 'block-programming/', 'fused-geglu/benchmarks/' ..."""
    stem = page.rsplit(".", 1)[0]
    rel = "" if stem == "index" else stem.removesuffix("/index") + "/"
    return ("" if lang == "en" else "zh/") + rel


def built_page(site: Path, lang: str, page: str) -> Path:
    """Built HTML of a source page (directory URLs; English at the root, Chinese under zh/)."""
    return site / page_url(lang, page) / "index.html"


def lock_python(lock: records.Lock) -> str:
    """The Python that runs snippets for ``lock``: this one for the current lock, else its venv."""
    if lock.id == CURRENT.id:
        return sys.executable
    python = REPO / ".venv-locks" / lock.id / "bin" / "python"
    if not python.exists():
        pytest.fail(f"{python} is missing: run `make test` (it creates .venv-locks/{lock.id})")
    return str(python)


def other_lock_python(lock: records.Lock) -> str | None:
    """The Python of another lock: the second torch install a file may need (a reader names
    it in OTHER_TORCH_PYTHON, as snippets/cpp-extensions/stable_abi_across_releases.py says)."""
    other = next((o for o in LOCKS if o.id != lock.id and o.status != "retired"), None)
    return lock_python(other) if other else None


def copy_run(lock: records.Lock, path: str, env: dict, timeout: float):
    """The snippet's download (snippet_copies.archive_bytes, the bytes the site serves beside
    its page), alone in an empty folder, run with the commands its page shows, with the lock's
    Python first on PATH: a copy that needs anything it does not carry fails here. What its
    declared also-needs asks for is given: OTHER_TORCH_PYTHON, another lock's Python. The
    result also carries the archive's ``archive_sha256`` and the ``commands`` run
    (tests/test_browser.py compares them with what the served page offers)."""
    data = copies.archive_bytes(path, lock)
    commands = copies.run_commands(path)
    env = {**env, "PATH": str(Path(lock_python(lock)).parent) + os.pathsep + env["PATH"]}
    other = other_lock_python(lock)
    if other:
        env["OTHER_TORCH_PYTHON"] = other
    with tempfile.TemporaryDirectory(prefix="copy-") as folder:
        (Path(folder) / copies.archive_name(path)).write_bytes(data)
        done = run_counting_cpu(["bash", "-ec", "\n".join(commands)], Path(folder), env, timeout)
    done.archive_sha256 = hashlib.sha256(data).hexdigest()
    done.commands = commands
    return done


# A snippet's `timeout` is for a machine that runs it alone. Here two snippets run at once beside
# the builds and the browser: first_call_times.py, three fresh torch.compile processes on a CPU,
# took 137 s with one other snippet beside it (45 s alone) and passed 300 s twice in full runs.
CPU_RUN_TIMEOUT_FACTOR = 3


def exercise_batch(path: str, language: str = "en") -> str | None:
    """Which process an exercise file's CPU run shares, or None for any other file.

    Exercise files do little beyond importing torch and triton (about 3 CPU s a process), so
    they run one after another in one process per batch (scripts/run_in_one_process.py): the
    interpreted ones together, with the current lock's Chinese copies of the starters; the
    others (triton_op files) by starters and solutions, and the Chinese starters apart, since
    a starter and its solution register the same operator names, which one process allows once."""
    if not Path(path).name.startswith("exercise_"):
        return None
    needs = records.read_snippet_needs(path)
    if not needs.runs_on_cpu or copies.has_archive(path):
        return None
    if needs.cpu_interpreter:
        return "interpreted"
    return (
        "plain "
        + ("starters" if needs.is_starter else "solutions")
        + (f" {language}" * (language != "en"))
    )


def batch_members(lock: records.Lock, batch: str) -> list[tuple[str, str]]:
    """(path, language) of each run in one batch: the Chinese runs, of starters, on the current
    lock only (the message tables do not depend on the lock)."""
    languages = ("en", "zh") if lock.id == CURRENT.id else ("en",)
    return [
        (path, language)
        for language in languages
        for path in records.list_snippets()
        if exercise_batch(path, language) == batch
        and (language == "en" or records.read_snippet_needs(path).is_starter)
    ]


def run_batch(
    lock: records.Lock, members: list[tuple[str, str]], interpreted: bool
) -> tuple[subprocess.CompletedProcess, dict[tuple[str, str], subprocess.CompletedProcess]]:
    """Run ``members`` (path, language) in one process of the lock's Python: the process, and
    per run what a process of its own would have given (exit code, stdout, stderr, seconds)."""
    env = fork_server_env(interpreted)  # the runs' environment, TRITON_INTERPRET as asked
    runs = [path if language == "en" else f"{path}:{language}" for path, language in members]
    command = [lock_python(lock), "scripts/run_in_one_process.py", *runs]
    timeout = 60 * len(members) * CPU_RUN_TIMEOUT_FACTOR
    proc = run_counting_cpu(command, REPO, env, timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{proc.stdout}\n{proc.stderr}")
    done = {}
    for line in proc.stdout.splitlines():
        row = json.loads(line)
        one = subprocess.CompletedProcess(
            [row["path"]], row["returncode"], row["stdout"], row["stderr"]
        )
        one.wall_seconds, one.cpu_seconds = row["seconds"], 0.0  # the batch's CPU counts once
        done[(row["path"], row["language"])] = one
    return proc, done


class CpuRuns:
    """Each snippet run once per lock on this CPU, as a reader runs it, kept for reuse.

    The runs start in the background as soon as the session has collected a test that needs
    them, as many at a time as the machine has cores, longest first (from the CPU records), so
    they overlap the builds and the browser tests instead of adding to them.

    A plain run (``[python, path]``, from the repository) of a file that ``may_fork`` runs in a
    child forked from a ForkServer of the lock's Python, one server per pool thread, lock and
    TRITON_INTERPRET (interpreted files or not), started at its first such run and ended with
    the session (``close``): it skips the ~3 CPU s of importing torch and triton a process.
    Downloads (copy_run), the exercise batches and the mutation runs start processes as
    before. tests/test_fork_server.py checks the server; scripts/compare_fork_runs.py that each
    forked file gives the exit status and printed lines a fresh process gives.
    """

    def __init__(self, fresh=None, fork_server=None) -> None:
        """``fresh`` and ``fork_server`` stand in for run_counting_cpu and ForkServer in a test
        of which way a run goes: a stand-in of this pool only, never a module global patched
        while the session's pool runs snippets on other threads."""
        self._fresh = fresh or run_counting_cpu
        self._fork_server = fork_server or ForkServer
        self._pool = ThreadPoolExecutor(
            max_workers=max(1, os.cpu_count() or 1), initializer=_mark_pool_thread
        )
        self._runs: dict[tuple[str, str], Future] = {}
        # (thread, lock id, interpreted) -> server
        self._servers: dict[tuple[int, str, bool], ForkServer] = {}
        self._servers_lock = threading.Lock()
        self._closed_servers: list[ForkServer] = []  # still counted in the summary

    def _server(self, lock: records.Lock, env: dict) -> ForkServer:
        """This pool thread's fork server of ``lock`` for a run with ``env``'s TRITON_INTERPRET,
        started at its first such run."""
        interpreted = env.get("TRITON_INTERPRET") == "1"
        key = (threading.get_ident(), lock.id, interpreted)
        with self._servers_lock:
            server = self._servers.get(key)
        if server is None:
            server = self._fork_server(lock_python(lock), fork_server_env(interpreted))
            with self._servers_lock:
                self._servers[key] = server
        return server

    def close(self) -> None:
        """End the fork servers (the session's end)."""
        with self._servers_lock:
            servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            server.close()
        self._closed_servers += servers

    def _submit(self, lock: records.Lock, path: str, language: str = "en") -> Future:
        key = (lock.id, path) if language == "en" else (lock.id, path, language)
        if key not in self._runs:
            batch = exercise_batch(path, language)
            if batch is None:
                self._runs[key] = self._pool.submit(self._run, lock, path)
            else:
                self._submit_batch(lock, batch)
        return self._runs[key]

    def _submit_batch(self, lock: records.Lock, batch: str) -> None:
        """One process for every run of ``batch`` (batch_members), and a future per run."""
        members = batch_members(lock, batch)
        futures = {m: Future() for m in members}
        for (path, language), future in futures.items():
            self._runs[(lock.id, path) if language == "en" else (lock.id, path, language)] = future
        job = self._pool.submit(run_batch, lock, members, batch == "interpreted")
        self._runs[(lock.id, f"exercises, {batch}, in one process")] = job

        def share(done: Future) -> None:
            if done.exception() is not None:
                for future in futures.values():
                    future.set_exception(done.exception())
                return
            for member, one in done.result()[1].items():
                futures[member].set_result(one)

        job.add_done_callback(share)

    def run_localized(self, lock: records.Lock, path: str, language: str):
        """An exercise file's run as the page in ``language`` offers it (its LANGUAGE line)."""
        return self._submit(lock, path, language).result()

    def _run(self, lock: records.Lock, path: str) -> subprocess.CompletedProcess:
        """A file that reads files beside it runs from its download, as its page says
        (copy_run); any other from the repository, forked from this thread's fork server
        when it may (may_fork), else in a process of its own."""
        needs = records.read_snippet_needs(path)
        env = cpu_run_env()
        if needs.gpu_timing:  # two at a time beside the browser: no time here means anything,
            env[records.REPEATS_ENV] = "1"  # and none is kept, so each is measured once
        timeout = needs.timeout_s * CPU_RUN_TIMEOUT_FACTOR
        if copies.has_archive(path):
            return copy_run(lock, path, env, timeout)
        if needs.cpu_interpreter:
            env["TRITON_INTERPRET"] = "1"
        if may_fork(path, needs):
            return self._server(lock, env).run(path, REPO, env, timeout)
        return self._fresh([lock_python(lock), path], REPO, env, timeout)

    def start_all(self, wanted: set[tuple[str, str]] | None = None) -> None:
        """Queue every CPU-runnable snippet under every lock (or only the (lock id, path) pairs
        in ``wanted``): the files offered as downloads first, then longest first."""
        jobs = []
        for lock in LOCKS:
            record = records.load_record(lock.id, records.CPU) or {"snippets": []}
            seconds = {e["path"]: e["seconds"] for e in record["snippets"]}
            for path in records.list_snippets():
                if wanted is not None and (lock.id, path) not in wanted:
                    continue
                if records.read_snippet_needs(path).runs_on_cpu:
                    # the downloads first: the browser test, early in the session, waits for them
                    later = not copies.has_archive(path)
                    jobs.append(((later, -seconds.get(path, 60.0)), lock, path))
        for _, lock, path in sorted(jobs, key=lambda j: j[0]):
            self._submit(lock, path)

    def run(self, lock: records.Lock, path: str) -> subprocess.CompletedProcess:
        return self._submit(lock, path).result()

    def submit(self, key: tuple[str, str], run, *args) -> Future:
        """Queue ``run(*args)`` in the same pool, once per ``key`` ("what", name): a process run
        by run_counting_cpu, or a tuple whose first item is one (the summary counts it). Used for
        the mutated copies (tests/test_mutations.py), the pending path and the site builds
        (tests/test_site.py)."""
        if key not in self._runs:
            self._runs[key] = self._pool.submit(run, *args)
        return self._runs[key]

    def summary(self, slowest: int = 12) -> list[str]:
        """Lines for the end of the session: what the finished runs cost, the costliest first."""
        done = [
            (key[:2], future.result())
            for key, future in self._runs.items()
            if future.done() and not future.exception()
        ]
        done = [(key, r[0] if isinstance(r, tuple) else r) for key, r in done]  # a batch
        if not done:
            return []
        done.sort(key=lambda d: -d[1].cpu_seconds)
        servers = list(self._servers.values()) + self._closed_servers
        imports = sum(s.cpu_seconds for s in servers)
        forked = sum(1 for _, r in done if getattr(r, "forked", False))
        cpu = sum(r.cpu_seconds for _, r in done) + imports
        wall = sum(r.wall_seconds for _, r in done)
        lines = [
            f"{len(done)} CPU snippet runs: {cpu:.0f} CPU seconds, {wall:.0f} s summed "
            f"({os.cpu_count()} cores); {forked} of them forked from {len(servers)} fork "
            f"servers, whose own start and imports ({imports:.0f} CPU s) the total counts; "
            "the costliest:"
        ]
        lines += [
            f"  {r.cpu_seconds:6.1f} CPU s {r.wall_seconds:6.1f} s  {path} ({lock_id})"
            for (lock_id, path), r in done[:slowest]
        ]
        return lines


CPU_RUNS = CpuRuns()


# Functions a test module registers at import to queue runs of its own once the session knows
# which tests will run (after the snippets' CPU runs): each is called with CPU_RUNS and the items.
BACKGROUND_STARTS: list = []


# Names of the test functions that wait for a job a module queued in the pool (with
# BACKGROUND_STARTS or CPU_RUNS.submit): they run last, as the tests asking for cpu_runs do.
WAITS_FOR_THE_POOL: set[str] = set()


def waits_for_the_pool(item) -> bool:
    return "cpu_runs" in getattr(item, "fixturenames", ()) or (
        getattr(item, "originalname", item.name) in WAITS_FOR_THE_POOL
    )


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected what will not run
def pytest_collection_modifyitems(session, config, items):
    if config.option.collectonly:  # nothing will run
        return
    start_cpu_runs(items)
    for start in BACKGROUND_STARTS:
        start(CPU_RUNS, items)
    items[:] = pool_waiters_last(items)


def pool_waiters_last(items: list) -> list:
    """The tests that wait for the pool's runs last, each group in its order: the main thread
    does its own work while the pool runs, and waits only once it has nothing else to do."""
    return [i for i in items if not waits_for_the_pool(i)] + [
        i for i in items if waits_for_the_pool(i)
    ]


def start_cpu_runs(items) -> None:
    wanted: set[tuple[str, str]] = set()
    for item in items:
        if "cpu_runs" not in getattr(item, "fixturenames", ()):
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "lock" not in params or "path" not in params:
            CPU_RUNS.start_all()  # a test that may ask for any run
            return
        wanted.add((params["lock"].id, params["path"]))
    if wanted:
        CPU_RUNS.start_all(wanted)


def pytest_sessionfinish(session):
    CPU_RUNS.close()


def pytest_terminal_summary(terminalreporter):
    lines = CPU_RUNS.summary()
    if lines:
        terminalreporter.section("CPU snippet runs")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def cpu_runs() -> CpuRuns:
    return CPU_RUNS
