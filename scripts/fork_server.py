"""A process that imports torch and triton once and then runs snippet files, each in a child
forked from it, so that a run does not pay the ~3 CPU s of starting Python and importing them.

    PYTHONHASHSEED=0 CUDA_VISIBLE_DEVICES= python scripts/fork_server.py

It prints one JSON line when ready, {"ready": true, "cpu_seconds": ...} (what its own start and
imports cost), then reads one JSON request a line on stdin and answers each with one JSON line:

    {"path": "snippets/x/y.py", "cwd": "/repo", "env": {...}, "timeout": 60.0,
     "stdout": "/tmp/out", "stderr": "/tmp/err"}
    -> {"returncode": 0, "cpu_seconds": 1.2, "wall_seconds": 1.5, "timed_out": false}

The child does what ``python path`` does after start-up: a session of its own (os.setsid), stdin
from /dev/null, stdout and stderr to the request's files (stdout block-buffered, stderr
line-buffered, as when they are files), ``os.environ`` exactly the request's ``env``, the
request's ``cwd``, ``sys.argv = [path]``, ``sys.path[0]`` the file's folder, the file run as
``__main__`` (runpy.run_path, ``__file__`` absolute as Python 3.9+ sets it); SystemExit becomes
the exit status as CPython maps it (None 0, an int itself, anything else printed to stderr and
1), an uncaught exception its traceback and 1; then the atexit functions, and os._exit. The
server waits with os.wait4 (the child's CPU time, and its reaped children's), kills the child's
process group past ``timeout`` and answers ``timed_out``; ``returncode`` is -signal for a child
killed by a signal, as subprocess reports it.

Start it with the TRITON_INTERPRET its runs have (a server for the interpreted files, another
for the rest): triton 3.6 and 3.9 read it (knobs.runtime.interpret, from the environment at each
access) when a function is decorated with triton.jit and when it is launched, but the library's
own @jit functions (tl.cdiv, tl.sigmoid ...) are decorated when triton.language is imported, so
a server imported without it gives an interpreted kernel compiled helpers that it cannot call
("Cannot call @triton.jit'd outside of the scope of a kernel"). The child gets the run's
``env`` all the same.

Not every file may run this way: ``fresh_process_reason`` says which must start a process of their
own (tests/conftest.py runs those as before).
"""

from __future__ import annotations

import ast
import json
import os
import re
import resource
import select
import signal
import sys
import time

# ----------------------------------------------------------------- which files must not fork

# What a forked child cannot reproduce: settings that torch or triton read when imported (the
# server imported them with its own environment), and the process's own state.
IMPORT_TIME_KNOBS = re.compile(r"^(TORCH_LOGS|TORCHINDUCTOR_|TORCHDYNAMO_|TORCH_|PYTORCH_|TRITON_)")
PER_RUN_KNOBS = {"TRITON_INTERPRET"}  # a server per value (see the module's docstring)
ENV_WRITES = {"putenv", "unsetenv", "setdefault", "update", "pop", "popitem", "clear"}
PROCESS_STATE_MODULES = {"resource", "multiprocessing", "tracemalloc", "faulthandler", "signal"}
PROCESS_STATE_ATTRS = {
    ("sys", "modules"),  # what is imported already
    ("os", "fork"),
    ("os", "register_at_fork"),
    ("cuda", "init"),  # starts CUDA in the process
    ("cuda", "_lazy_init"),
    ("cuda", "set_device"),
}


def _dotted(node: ast.AST) -> str:
    """'os.environ' for the expression os.environ, '' for anything not a dotted name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _is_environ(node: ast.AST) -> bool:
    return _dotted(node) in ("os.environ", "environ", "os.environb")


def fresh_process_reason(text: str) -> str | None:
    """Why a snippet's run must start a Python of its own rather than fork from a server that
    has imported torch and triton (None: it may fork). The rule reads the file's code (its
    syntax tree: comments and docstrings do not count):

    * it changes the environment: assigns or deletes ``os.environ[...]``, calls
      ``os.environ.setdefault/update/pop/popitem/clear``, ``os.putenv`` or ``os.unsetenv``
      (torch and triton may have read the setting when the server imported them; even
      TRITON_INTERPRET: triton.language's own @jit functions, tl.cdiv among them, are
      decorated when it is imported);
    * it names a setting that torch or triton read at import, a string constant starting
      ``TORCH_LOGS``, ``TORCH_``, ``TORCHINDUCTOR_``, ``TORCHDYNAMO_``, ``PYTORCH_`` or
      ``TRITON_`` (``TRITON_INTERPRET`` excepted: the server was started with the run's value);
    * it inspects or changes the process itself: imports ``resource``, ``multiprocessing``,
      ``tracemalloc``, ``faulthandler`` or ``signal``, reads ``sys.modules``, forks or registers
      fork handlers, starts CUDA (``torch.cuda.init/_lazy_init/set_device``), or runs
      Python with ``-X importtime``.

    What the rule misses, the snippet's header says: ``fresh-process = "reason"`` in its
    ``[tool.snippet]`` table (snippet_records.SnippetNeeds.fresh_process)."""
    tree = ast.parse(text)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            if any(isinstance(t, ast.Subscript) and _is_environ(t.value) for t in targets):
                return "it changes os.environ"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner, name = node.func.value, node.func.attr
            if name in ENV_WRITES and _is_environ(owner):
                return f"it calls os.environ.{name}"
            if name in ("putenv", "unsetenv") and _dotted(owner) == "os":
                return f"it calls os.{name}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docstrings:
                continue
            if "importtime" in node.value:
                return "it times imports (-X importtime)"
            knob = IMPORT_TIME_KNOBS.match(node.value)
            if knob and node.value.split("=")[0] not in PER_RUN_KNOBS:
                return f"it names {node.value.split('=')[0]!r}, a setting read at import"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            for name in names:
                if name and name.split(".")[0] in PROCESS_STATE_MODULES:
                    return f"it imports {name}"
        elif isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)):
            owner = _dotted(node.value).rsplit(".", 1)[-1]
            if (owner, node.attr) in PROCESS_STATE_ATTRS:
                return f"it uses {owner}.{node.attr}"
    return None


# ------------------------------------------------------------------------------ the child


def exit_status(exc: SystemExit) -> int:
    """The exit status CPython gives ``raise SystemExit(code)``, printing a non-int code."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code  # os._exit gives the parent code & 0xFF, as exit() does
    try:
        print(code, file=sys.stderr)
    except Exception:  # noqa: BLE001 - as CPython: a code that cannot print still exits 1
        pass
    return 1


def run_child(request: dict) -> None:
    """In the forked child: become ``python path`` and never return."""
    status, interrupted = 1, False
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for fd, target in ((null, 0), (out, 1), (err, 2)):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        encoding, errors = sys.stdout.encoding, sys.stdout.errors  # as the server's, a pipe's
        sys.stdin = sys.__stdin__ = open(0, closefd=False, encoding=encoding, errors=errors)
        sys.stdout = sys.__stdout__ = open(1, "w", encoding=encoding, errors=errors, closefd=False)
        sys.stderr = sys.__stderr__ = open(
            2, "w", encoding=encoding, errors="backslashreplace", buffering=1,
            closefd=False,
        )  # fmt: skip
        os.chdir(request["cwd"])
        path = request["path"]
        full = os.path.abspath(path)
        sys.argv = [path]
        sys.path[0] = os.path.dirname(full)
        import runpy

        try:
            runpy.run_path(full, run_name="__main__")
            status = 0
        except SystemExit as exc:
            status = exit_status(exc)
        except BaseException as exc:  # noqa: BLE001 - as `python path`: the traceback, and 1
            import traceback

            traceback.print_exc()
            status, interrupted = 1, isinstance(exc, KeyboardInterrupt)
        try:  # what Py_FinalizeEx does next: wait for non-daemon threads, then atexit
            if "threading" in sys.modules:
                sys.modules["threading"]._shutdown()
            import atexit

            atexit._run_exitfuncs()
        except BaseException:  # noqa: BLE001
            pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - a closed stream: CPython exits 120
                status = status or 120
    except BaseException:  # noqa: BLE001 - the server's own failure: on the run's stderr
        import traceback

        os.write(2, traceback.format_exc().encode())
    else:
        if interrupted:  # CPython ends an uncaught KeyboardInterrupt by SIGINT: -2
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
    finally:
        os._exit(status)


# ------------------------------------------------------------------------------ the server


def wait_with_timeout(pid: int, timeout: float | None) -> tuple[int, resource.struct_rusage, bool]:
    """os.wait4 the child; past ``timeout`` seconds kill its process group first."""
    deadline = None if not timeout else time.monotonic() + timeout
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    timed_out = False
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            timed_out = True
            try:
                os.killpg(pid, signal.SIGKILL)  # the child's session: it and what it started
            except ProcessLookupError:
                pass
            _, status, usage = os.wait4(pid, 0)
            break
        if pidfd is not None:
            select.select([pidfd], [], [], left)  # readable when the child has ended
        else:
            time.sleep(0.05 if left is None else min(left, 0.05))
    if pidfd is not None:
        os.close(pidfd)
    return status, usage, timed_out


def serve(requests, answers) -> None:
    for line in requests:
        if not line.strip():
            continue
        request = json.loads(line)
        start = time.perf_counter()
        sys.stdout.flush(), sys.stderr.flush()  # nothing buffered is written twice
        pid = os.fork()
        if pid == 0:
            run_child(request)  # never returns
        status, usage, timed_out = wait_with_timeout(pid, request.get("timeout"))
        answer = {
            "returncode": os.waitstatus_to_exitcode(status),
            "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "wall_seconds": time.perf_counter() - start,
            "timed_out": timed_out,
        }
        print(json.dumps(answer), file=answers, flush=True)


def main() -> int:
    import numpy  # noqa: F401 - what the snippets import, once
    import torch  # noqa: F401
    import triton  # noqa: F401
    import triton.language  # noqa: F401

    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"ready": True, "cpu_seconds": usage.ru_utime + usage.ru_stime}), flush=True)
    serve(sys.stdin, sys.stdout)  # a child's dup2 over fd 1 leaves the server's own fd 1 alone
    return 0


if __name__ == "__main__":
    sys.exit(main())
