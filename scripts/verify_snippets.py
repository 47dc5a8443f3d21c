"""Runner: run every snippet on this machine and write the lock's record for this platform.

    python scripts/verify_snippets.py                  # natively on this machine's GPU
    python scripts/verify_snippets.py --cpu            # on the CPU, as each snippet declares
    python scripts/verify_snippets.py --only vector    # re-run some, keep the rest of the record
    python scripts/verify_snippets.py --part cookbook  # one named part, keep the rest
    python scripts/verify_snippets.py --out-dir DIR    # write the record elsewhere (e.g. $OUT)
    python scripts/verify_snippets.py --lock <id>      # a lock other than the current one

Each snippet runs in its own process with an empty Triton cache (so compile times are real).
On a GPU it runs without TRITON_INTERPRET, in two phases: first the snippets that time nothing,
several at once on each GPU (--beside), then those that declare `gpu = { ..., timing = true }`,
one per GPU with nothing else running on it; the record marks each row with `alone`, and a
snippet that prints a timing beside others fails. With --cpu, no GPU is visible to it and it runs
the way its [tool.snippet] table says, in the same two phases (--jobs at a time, then the timing
files one at a time, so that a compile or build time measured on the CPU has it to itself).
A row whose file (sha256) ran here before keeps what those earlier runs measured ("earlier", at
most records.EARLIER_RUNS_KEPT), so that a page shows a figure that moved between runs with its
earlier values, not alone. Shows progress, ends with a table, and writes
locks/<lock>.<platform>.json (platform: the GPU's slug, or "cpu") after every snippet, so a run
stopped part-way (or at --deadline) keeps what it did. A snippet killed by a signal (a crash)
is failed, the signal named. An exercise's starter (``exercise = { expect = "fail", ... }``)
passes by failing with its own message (records.exercise_outcome); its row says ``expect``.

Before the runs it checks the C++ compiler torch.utils.cpp_extension would use (CXX, else c++):
it builds a tiny shared library with it and reads the library's DT_NEEDED entries. A compiler
that links libstdc++ statically (a wrapper such as the H200 image's /opt/gcc/bin/g++) builds
extensions that crash when PyTorch loads them; the runner then sets CXX, for the snippets, to the
first of g++, c++, clang++ on PATH that links it dynamically, says why, and records it; with none,
it stops. The record keeps the compiler and every environment setting that changes what a
snippet builds or runs (records.recorded_environment), so the same command reproduces it.

Exits 1 when a snippet failed, 2 when this machine does not match the lock or has no usable C++
compiler. Needs only the standard library, torch and triton, in the lock's versions.
"""

from __future__ import annotations

import argparse
import atexit
import datetime as dt
import fcntl
import importlib.util
import json
import os
import platform
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import snippet_records as records  # noqa: E402


def describe_machine(cpu: bool) -> tuple[str, dict, dict]:
    """(platform, device, versions) of this machine, as the record stores them."""
    import torch
    import triton

    versions = {
        "torch": torch.__version__,
        "triton": triton.__version__,
        "numpy": _version("numpy"),
        "python": platform.python_version(),
    }
    if cpu:
        device = {
            "name": "CPU",
            "machine": platform.machine(),
            "processor": platform.processor() or "unknown",
            "system": f"{platform.system()} {platform.release()}",
            "cores": os.cpu_count(),
        }
        return records.CPU, device, versions
    if not torch.cuda.is_available():
        raise SystemExit("No CUDA GPU visible: run with --cpu for the CPU record.")
    props = torch.cuda.get_device_properties(0)
    try:
        driver = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        driver = "unknown"
    device = {
        "name": torch.cuda.get_device_name(0),
        "cc": f"{props.major}.{props.minor}",
        "driver": driver,
        "memory_gib": round(props.total_memory / 2**30, 1),
        "multiprocessors": props.multi_processor_count,
    }
    versions["cuda"] = torch.version.cuda or "none"
    return records.device_slug(device["name"]), device, versions


def _version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def check_machine(lock: records.Lock, platform_name: str, versions: dict) -> list[str]:
    problems = []
    if versions["torch"].split("+")[0] != lock.torch:
        problems.append(f"torch {versions['torch']} is not the lock's {lock.torch}")
    if versions["triton"] != lock.triton:
        problems.append(f"triton {versions['triton']} is not the lock's {lock.triton}")
    if platform_name != records.CPU:
        if versions["cuda"] != lock.cuda:
            problems.append(f"CUDA {versions['cuda']} is not the lock's {lock.cuda}")
        if platform_name not in lock.devices:
            problems.append(f"device {platform_name} is not one of the lock's {lock.devices}")
    return problems


def bytecode_cache_env(environ: dict[str, str], module: str = "torch") -> dict[str, str]:
    """The variables that let snippet processes share one bytecode cache, when ``module`` is
    installed without one and Python may not write it (the H200 image: no __pycache__ in its
    site-packages, PYTHONDONTWRITEBYTECODE=1). There each snippet process, and each compile
    worker it starts, compiled torch's Python source again, about 7 s of CPU every time. A
    reader's pip install compiles it once; here the run does, into a folder of its own. Empty
    where the bytecode is there (as in CI's virtual environment) or a prefix is already set."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or environ.get("PYTHONPYCACHEPREFIX"):
        return {}
    if os.path.exists(importlib.util.cache_from_source(spec.origin)):
        return {}
    return {"PYTHONPYCACHEPREFIX": tempfile.mkdtemp(prefix="snippet-bytecode-")}


def use_bytecode_cache() -> None:
    """Apply bytecode_cache_env to this process (before it imports torch) and to the snippets
    it starts; the folder goes when the run ends."""
    env = bytecode_cache_env(dict(os.environ))
    if not env:
        return
    folder = env["PYTHONPYCACHEPREFIX"]
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.update(env)
    sys.pycache_prefix, sys.dont_write_bytecode = folder, False
    atexit.register(shutil.rmtree, folder, True)
    print(f"bytecode: torch has none installed; compiled once for the run, into {folder}")


# ----------------------------------------------------------------------------- the C++ compiler

# A function that needs libstdc++ (an exception, a std::string): a compiler that links libstdc++
# dynamically lists libstdc++.so.* among the built library's DT_NEEDED entries.
CXX_PROBE = """\
#include <stdexcept>
#include <string>
extern "C" int snippet_runner_probe(int x) {
  if (x < 0) throw std::runtime_error(std::to_string(x));
  return x;
}
"""
CXX_FALLBACKS = ("g++", "c++", "clang++")  # tried in this order, on PATH


class CompilerError(RuntimeError):
    """No C++ compiler here builds extensions that PyTorch can load."""


def elf_needed(path: Path | str) -> list[str]:
    """The DT_NEEDED entries (shared libraries it links) of an ELF file, read from its dynamic
    section with the standard library: no readelf, ldd or pyelftools needed."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        raise ValueError(f"{path} is not an ELF file")
    end = "<" if data[5] == 1 else ">"
    if data[4] == 2:  # ELF64: e_shoff at 0x28; section header: name, type, flags, addr, offset,
        (shoff,) = struct.unpack_from(end + "Q", data, 0x28)  # size, link, info, align, entsize
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
        section, dyn = end + "IIQQQQIIQQ", end + "qQ"
    else:  # ELF32
        (shoff,) = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x2E)
        section, dyn = end + "IIIIIIIIII", end + "iI"
    sections = [struct.unpack_from(section, data, shoff + i * shentsize) for i in range(shnum)]
    needed = []
    for _, kind, _, _, offset, size, link, *_ in sections:
        if kind != 6:  # SHT_DYNAMIC; its strings are in the section it links to
            continue
        strings = sections[link][4]
        for at in range(offset, offset + size, struct.calcsize(dyn)):
            tag, value = struct.unpack_from(dyn, data, at)
            if tag == 0:  # DT_NULL ends the table
                break
            if tag == 1:  # DT_NEEDED: an offset into the string table
                start = strings + value
                needed.append(data[start : data.index(b"\0", start)].decode())
    return needed


def cxx_problem(compiler: str, environ: dict[str, str]) -> str | None:
    """Why ``compiler`` would build extensions that crash in PyTorch, or None when it links
    libstdc++ dynamically (it builds a tiny shared library and reads its DT_NEEDED)."""
    with tempfile.TemporaryDirectory(prefix="cxx-probe-") as tmp:
        source, library = Path(tmp) / "probe.cpp", Path(tmp) / "probe.so"
        source.write_text(CXX_PROBE)
        command = [compiler, "-shared", "-fPIC", "-o", str(library), str(source)]
        try:
            proc = subprocess.run(
                command, capture_output=True, text=True, timeout=120, env=environ, cwd=tmp
            )
        except FileNotFoundError:
            return "not found"
        except (OSError, subprocess.SubprocessError) as exc:
            return f"could not run it ({exc})"
        if proc.returncode != 0 or not library.is_file():
            return f"could not build a shared library (exit {proc.returncode}): " + tail(
                proc.stderr or proc.stdout, 2
            ).replace("\n", " ")
        try:
            needed = elf_needed(library)
        except (ValueError, struct.error, IndexError) as exc:
            return f"built a library whose dynamic section could not be read ({exc})"
    if not any(n.startswith("libstdc++.so") for n in needed):
        return (
            "links libstdc++ statically (the probe library's DT_NEEDED: "
            f"{', '.join(needed) or 'none'}); an extension built with it crashes when PyTorch "
            "loads it"
        )
    return None


def compiler_version(compiler: str, environ: dict[str, str]) -> str:
    try:
        out = subprocess.run(
            [compiler, "--version"], capture_output=True, text=True, timeout=30, env=environ
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (out.strip().splitlines() or ["unknown"])[0]


def compilers_on_path(environ: dict[str, str]) -> list[str]:
    """Every CXX_FALLBACKS compiler in every PATH folder, in that order (name first): where a
    wrapper comes first on PATH (/opt/gcc/bin/g++), the system's own g++ is still found."""
    found = []
    for name in CXX_FALLBACKS:
        for folder in environ.get("PATH", "").split(os.pathsep):
            path = os.path.join(folder or ".", name)
            if os.path.isfile(path) and os.access(path, os.X_OK) and path not in found:
                found.append(path)
    return found


def choose_cxx(environ: dict[str, str]) -> tuple[dict[str, str], dict]:
    """The C++ compiler for the snippets: (variables to set for them, what the record keeps).

    torch.utils.cpp_extension compiles with CXX, else c++. When that one does not link libstdc++
    dynamically, the first compiler on PATH (compilers_on_path) that does is chosen: CXX is set
    to its path. Raises CompilerError when none does."""
    asked = environ.get("CXX") or "c++"
    problem = cxx_problem(asked, environ)
    if problem is None:
        path = shutil.which(asked, path=environ.get("PATH")) or asked
        return {}, {"cxx": path, "version": compiler_version(asked, environ)}
    tried = {os.path.realpath(shutil.which(asked, path=environ.get("PATH")) or asked): problem}
    for path in compilers_on_path(environ):
        if os.path.realpath(path) in tried:  # the same file under another name
            continue
        tried[os.path.realpath(path)] = cxx_problem(path, environ)
        if tried[os.path.realpath(path)] is None:
            why = f"{asked} {problem}"
            info = {"cxx": path, "version": compiler_version(path, environ), "replaced": asked}
            return {"CXX": path}, {**info, "why": why}
    raise CompilerError(
        f"no C++ compiler here builds extensions that PyTorch can load: CXX={asked}: {problem}; "
        f"tried {', '.join(CXX_FALLBACKS)} on PATH: "
        + ("; ".join(f"{p}: {why}" for p, why in list(tried.items())[1:]) or "none found")
        + ". Install g++ (or set CXX to a compiler that links libstdc++ dynamically) and re-run."
    )


def use_working_cxx() -> dict:
    """Apply choose_cxx to this process's environment (which the snippets inherit); print
    what was chosen and why; return what the record keeps."""
    changes, info = choose_cxx(dict(os.environ))
    os.environ.update(changes)
    if changes:
        print(
            f"C++ compiler: {info['why']}; the snippets get CXX={info['cxx']} ({info['version']})"
        )
    else:
        print(f"C++ compiler: {info['cxx']} ({info['version']}), links libstdc++ dynamically")
    return info


def exit_reason(returncode: int) -> str:
    """'exit code 1', or for a crash: 'killed by SIGSEGV (signal 11, exit -11)'."""
    if returncode >= 0:
        return f"exit code {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = "an unknown signal"
    return f"killed by {name} (signal {-returncode}, exit {returncode})"


def tail(text: str, lines: int = 3) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def snippet_env(
    needs: records.SnippetNeeds,
    cpu: bool,
    cache_dir: str,
    gpu: int | None = None,
    threads: int | None = None,
) -> dict[str, str]:
    """The environment a snippet runs in: how a reader would run it on this platform (on GPU
    number ``gpu`` alone, when the machine has several; with ``threads`` CPU threads for torch
    when it shares the machine with other snippets)."""
    dropped = ("TRITON_INTERPRET", "TRITON_DEBUG", records.REPEATS_ENV)  # records: the defaults
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    # both caches empty for each run of each snippet, as on a fresh machine: no kernel, compiled
    # graph or autotuning result carried over from an earlier run
    env.update(
        TRITON_CACHE_DIR=cache_dir,
        TORCHINDUCTOR_CACHE_DIR=os.path.join(cache_dir, "inductor"),
        PYTHONUNBUFFERED="1",
        PYTHONHASHSEED="0",
    )
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = str(gpu)
    if threads is not None:
        env.setdefault("OMP_NUM_THREADS", str(threads))
    if cpu:
        env["CUDA_VISIBLE_DEVICES"] = ""  # a GPU on this machine must not change the result
        if needs.cpu_interpreter:
            env["TRITON_INTERPRET"] = "1"
    return env


def run_snippet(
    needs: records.SnippetNeeds,
    cpu: bool,
    device_cc: str | None,
    gpu: int | None = None,
    beside: int = 0,
    threads: int | None = None,
) -> dict:
    """Run one snippet; return its record row. ``beside``: how many other snippets may run on
    its GPU at the same time (0: it has the machine to itself)."""
    row = {
        "path": needs.path,
        "sha256": records.snippet_sha256(needs),
        "date": dt.datetime.now(dt.timezone.utc).date().isoformat(),
        "mode": ("interpreter" if needs.cpu_interpreter else "plain") if cpu else "native",
        "figures": {},
        "stdout": [],
    }
    if not cpu:
        row["alone"] = beside == 0
    skip = needs.cpu_skip if cpu else needs.gpu_skip
    if skip:
        return {**row, "status": "skipped", "seconds": 0.0, "reason": skip}
    if not cpu and tuple(map(int, device_cc.split("."))) < tuple(
        map(int, needs.gpu_min_cc.split("."))
    ):
        reason = f"needs compute capability {needs.gpu_min_cc}, device has {device_cc}"
        return {**row, "status": "skipped", "seconds": 0.0, "reason": reason}

    cache_dir = tempfile.mkdtemp(prefix="triton-cache-")
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, needs.path],
            cwd=records.REPO_ROOT,
            env=snippet_env(needs, cpu, cache_dir, gpu, threads),
            capture_output=True,
            text=True,
            timeout=needs.timeout_s,
        )
        stdout, stderr, returncode = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr, returncode = "", None
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    row["seconds"] = round(time.perf_counter() - start, 2)
    row["stdout"] = records.output_lines(stdout)
    if returncode is None:
        return {**row, "status": "failed", "reason": f"timed out after {needs.timeout_s} s"}
    if needs.is_starter:  # an exercise's starter passes by failing with its own message
        row["expect"] = "fail"
        wrong = records.exercise_outcome(needs, returncode, stdout, stderr)
        if wrong:
            return {**row, "status": "failed", "reason": f"{wrong}: {tail(stderr or stdout)}"}
        return {**row, "status": "passed"}
    if returncode != 0:  # a crash (a signal) too: its output may be empty
        detail = tail(stderr or stdout) or "no output"
        return {**row, "status": "failed", "reason": f"{exit_reason(returncode)}: {detail}"}
    try:
        row["figures"] = records.parse_figures(stdout)
        benchmark = records.parse_benchmark(stdout)
    except ValueError as exc:
        return {**row, "status": "failed", "reason": f"bad figures or benchmark line: {exc}"}
    if benchmark:
        row["benchmark"] = benchmark
    if row.get("alone") is False and records.times_something(row):
        reason = (
            f"it printed a timing while up to {beside} other snippets ran on its GPU: "
            "declare gpu = { ..., timing = true } so that it runs alone"
        )
        return {**row, "status": "failed", "reason": reason}
    return {**row, "status": "passed"}


def print_rerun_report(rows: list[dict], previous_rows: dict[str, dict]) -> None:
    """A re-run of files the record already holds: how many of their measured figures and
    benchmark times held (records.held_on_rerun), per clock, and each one that moved."""
    compared = [
        (row["path"], c)
        for row in sorted(rows, key=lambda r: r["path"])
        for c in records.rerun_comparison(previous_rows.get(row["path"]), row)
    ]
    if not compared:
        return
    print("\nagainst the record's previous run of the same files:")
    print("  files compared: " + ", ".join(records.rerun_files(rows, previous_rows)))
    for clock, counts in records.rerun_summary(rows, previous_rows).items():
        held, total = counts["held"], counts["compared"]
        print(f"  {clock}: {held} of {total} held ({100 * held / total:.0f} %)")
    moved = [(path, c) for path, c in compared if not c["held"]]
    for path, c in moved:
        change = c["new"] / c["old"] - 1 if c["old"] else float("inf")
        print(f"  moved: {path}: {c['what']} ({c['clock']}) {c['old']:.4g} -> {c['new']:.4g} "
              f"({change:+.0%})")  # fmt: skip


def print_table(rows: list[dict]) -> None:
    width = max(len(r["path"]) for r in rows)
    print(f"\n{'snippet':<{width}}  {'status':<8} {'seconds':>8}  figures / reason")
    print(f"{'-' * width}  {'-' * 8} {'-' * 8}  {'-' * 40}")
    for r in rows:
        detail = r.get("reason") or ", ".join(
            f"{k}={v['value']}{v.get('unit', '')}" for k, v in r["figures"].items()
        )
        if r.get("benchmark"):
            detail = f"{len(r['benchmark'])} benchmark rows; {detail}"
        detail = detail.replace("\n", " ")
        print(f"{r['path']:<{width}}  {r['status']:<8} {r['seconds']:>8.2f}  {detail[:100]}")
    counts = {s: sum(r["status"] == s for r in rows) for s in records.RUN_STATUSES}
    total = sum(r["seconds"] for r in rows)
    print("\n" + ", ".join(f"{n} {s}" for s, n in counts.items()) + f"; {total:.0f} s of runs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lock", default=None, help="lock id (default: the current lock)")
    parser.add_argument("--cpu", action="store_true", help="write the CPU record (no GPU used)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="run only snippets whose path contains this text; repeatable",
    )
    parser.add_argument(
        "--part",
        choices=list(records.GPU_PARTS),
        default=None,
        help="run one named part of the snippets (records.GPU_PARTS), keep the rest of the "
        "record; the record notes when each part ran",
    )
    parser.add_argument(
        "--jobs", type=int, default=None, help="CPU: snippets run at once (default 2)"
    )
    parser.add_argument(
        "--beside",
        type=int,
        default=None,
        help="GPU: snippets that time nothing run this many at once per GPU "
        "(default: half the CPU cores per GPU, at most 8)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        default=None,
        help="seconds after which no new snippet starts (the record keeps what ran)",
    )
    parser.add_argument(
        "--out-dir",
        type=Path,
        default=records.LOCKS_DIR,
        help="where to write <lock>.<platform>.json (default: locks/)",
    )
    args = parser.parse_args(argv)

    use_bytecode_cache()
    lock = records.load_lock(args.lock or records.current_lock_id())
    platform_name, device, versions = describe_machine(args.cpu)
    problems = check_machine(lock, platform_name, versions)
    print(f"lock {lock.id}: {lock.title}")
    print(f"platform {platform_name}: {device}")
    print(f"versions {versions}")
    if problems:
        print("This machine does not match the lock:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    try:
        compiler = use_working_cxx()  # before the snippets start: they inherit CXX
    except CompilerError as exc:
        print(exc, file=sys.stderr)
        return 2
    environment = records.recorded_environment(os.environ)
    print(f"settings recorded: {environment or 'none set'}")

    paths = [
        p
        for p in records.list_snippets()
        if (not args.only or any(o in p for o in args.only))
        and (not args.part or records.part_of(p) == args.part)
    ]
    keep_others = bool(args.only or args.part)  # the record keeps the rows this run leaves
    if not paths:
        print(f"no snippet matches {args.only}", file=sys.stderr)
        return 2
    all_needs = [records.read_snippet_needs(p) for p in paths]  # fail early on a bad contract
    previous = records.load_record(lock.id, platform_name)
    previous_rows = {e["path"]: e for e in (previous or {}).get("snippets", [])}
    if (
        keep_others
        and previous
        and (
            previous.get("environment") != environment
            or (previous.get("compiler") or {}).get("cxx") != compiler["cxx"]
        )
    ):
        print(
            "note: the record's other rows ran with other settings "
            f"({previous.get('compiler')}, {previous.get('environment')}); this run's replace "
            "them in the record: re-run them too if the settings matter to them"
        )
    last_seconds = {path: e["seconds"] for path, e in previous_rows.items()}
    all_needs.sort(key=lambda n: -last_seconds.get(n.path, 60.0))  # longest first: even finish
    # Two phases, on either platform: what times nothing, several at once; then each timing
    # file with the machine (on a GPU: its GPU) to itself. Each phase: a label, its worker
    # slots (GPU number, how many others run beside, torch's CPU threads), its queue.
    untimed = [n for n in all_needs if not n.gpu_timing]
    timed = [n for n in all_needs if n.gpu_timing]
    if args.cpu:
        jobs = args.jobs or 2
        phases = [
            (f"{jobs} at a time", [(None, 0, None)] * jobs, untimed),
            ("the timing files, one at a time", [(None, 0, None)], timed),
        ]
    else:
        import torch

        gpus = list(range(torch.cuda.device_count()))
        cores = os.cpu_count() or 1
        per_gpu = args.beside or max(1, min(8, cores // 2 // max(1, len(gpus))))
        threads = max(1, cores // (per_gpu * max(1, len(gpus))))
        phases = [
            (
                f"timing nothing: {per_gpu} at a time per GPU",
                [(g, per_gpu - 1, threads) for g in gpus for _ in range(per_gpu)],
                untimed,
            ),
            ("timings: one per GPU, nothing beside it", [(g, 0, None) for g in gpus], timed),
        ]
    started = dt.datetime.now(dt.timezone.utc)
    clock = time.perf_counter()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    out = args.out_dir / records.record_path(lock.id, platform_name).name
    rows: list[dict] = []
    existing = set(records.list_snippets())
    skipped_for_time: list[str] = []
    lock_guard = threading.Lock()

    def write_record() -> None:
        """Merge the rows so far into the record on disk (after every snippet: a run stopped
        part-way keeps what it did)."""
        with open(args.out_dir / f".{out.name}.lock", "w") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)  # several runs at once merge, one at a time
            base = None
            if out.is_file():
                base = json.loads(out.read_text(encoding="utf-8"))
            elif keep_others:
                base = previous
            ran = {r["path"] for r in rows}
            kept = [
                e
                for e in (base or {}).get("snippets", [])
                if e["path"] not in ran and e["path"] in existing and (keep_others or out.is_file())
            ]
            runner = (
                "scripts/verify_snippets.py"
                + (" --cpu" if args.cpu else "")
                + (f" --part {args.part}" if args.part else "")
                + "".join(f" --only {o}" for o in args.only)
            )
            parts = dict((base or {}).get("parts", {})) if keep_others else {}
            if args.part:
                this = {
                    "started": started.isoformat(timespec="seconds"),
                    "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                    "runner": runner,
                }
                rerun = records.rerun_summary(rows, previous_rows)
                if rerun:  # what held against the record's previous run of the same files
                    this["rerun"] = rerun
                    this["rerun_files"] = records.rerun_files(rows, previous_rows)
                whole = parts.get(args.part, {})
                if args.only and whole and "--only" not in whole["runner"]:
                    # a few files of a part re-run later: the part's whole run stays on record
                    later = [r for r in whole.get("later", []) if r["started"] != this["started"]]
                    parts[args.part] = {**whole, "later": later + [this]}
                else:
                    parts[args.part] = this
            record = {
                "schema": records.RECORD_SCHEMA,
                "lock": lock.id,
                "platform": platform_name,
                "date": started.date().isoformat(),
                "started": started.isoformat(timespec="seconds"),
                "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "device": device,
                "versions": versions,
                "runner": runner,
                **({"parts": parts} if parts else {}),
                "compiler": compiler,
                "environment": environment,
                "snippets": sorted(kept + rows, key=lambda r: r["path"]),
            }
            records.validate_record(record)
            text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
            out.write_text(text, encoding="utf-8")

    def worker(queue: list, slot: int | None, beside: int, threads: int | None) -> None:
        while True:
            with lock_guard:
                if not queue:
                    return
                needs = queue.pop(0)
                if args.deadline and time.perf_counter() - clock > args.deadline:
                    skipped_for_time.append(needs.path)
                    continue
            row = run_snippet(needs, args.cpu, device.get("cc"), slot, beside, threads)
            earlier = records.earlier_runs(row, previous_rows.get(needs.path))
            if earlier:  # the same file ran before here: keep what those runs measured
                row["earlier"] = earlier
            with lock_guard:
                rows.append(row)
                write_record()
                where = "" if slot is None else f", GPU {slot}" + ("" if beside else ", alone")
                print(
                    f"[{len(rows)}/{len(all_needs)}] {needs.path}: {row['status']} "
                    f"({row['seconds']:.1f} s{where}, {time.perf_counter() - clock:.0f} s in)"
                    + (f" - {row['reason'].splitlines()[-1]}" if row.get("reason") else ""),
                    flush=True,
                )

    for number, (label, slots, queue) in enumerate(phases, 1):
        if not queue:
            continue
        print(
            f"running {len(queue)} snippets, phase {number}, {label} ({len(slots)} slots)",
            flush=True,
        )
        workers = [threading.Thread(target=worker, args=(queue, *slot)) for slot in slots]
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join()
    print_table(sorted(rows, key=lambda r: r["path"]))
    print_rerun_report(rows, previous_rows)
    if skipped_for_time:
        print(f"\nnot started, past the {args.deadline} s deadline (re-run with --only):")
        print("\n".join(f"  {p}" for p in skipped_for_time))
    print(f"\nwrote {out}")
    return 1 if any(r["status"] == "failed" for r in rows) or skipped_for_time else 0


if __name__ == "__main__":
    sys.exit(main())
