# SPDX-License-Identifier: BSD-3-Clause
"""The file system as a hostile user hands it to every file option, derived
from the parser as in test_cli_fuzz.py.

Every option that reads a file gets a FIFO, /dev/zero, a JSON and a TOML
file nested 100,000 deep, a directory, a file it may not read and a
symbolic link loop: each is refused with exit 2 and one `mpiscope: error:`
line, no traceback, within a time limit (a FIFO opened for reading would
block forever). Every option that writes a file gets a character device
made with mknod (1,3, what /dev/null is, in a temporary directory), a FIFO
without a reader, a FIFO with one, a name ending in '/' and a path in a
read-only directory: each is refused with exit 2, or written in place; the
node is never replaced, and no temporary file is left beside it. Config
files (MPISCOPE_CONFIG, ./mpiscope.toml, a hostfile a config names) and the
catalog get the same nodes.

Cases run in this process through the CLI's entry point, each under a
SIGALRM watchdog; an audit hook refuses the start of an MPI launcher, a
compiler or the engine, so no case launches MPI.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from analysis_runs import build_run
from permissions import permissions_apply
from app_traced import write_run
from mpiscope.cli.main import build_parser, main
from test_cli_fuzz import _argv, _options

CASE_LIMIT_S = 20
READ_KINDS = {"input_file", "text_file", "machine", "weights", "tune_dir"}
WRITE_KINDS = {"output_file", "new_file", "output_path", "output_dir"}
RUN_ID = "20240101-000000-aaaa"
# Programs no case may start: MPI launchers, compilers, the engine.
FORBIDDEN = ("mpirun", "mpiexec", "srun", "mpicc", "mpiscope-engine", "make", "cc", "gcc")


class Hung(Exception):
    """A case ran past CASE_LIMIT_S."""


class Launched(Exception):
    """A case started a program no case may start."""


_guard = {"on": False, "seen": []}


def _audit(event, args):
    if _guard["on"] and event == "subprocess.Popen":
        program = os.path.basename(str(args[0] if args[0] else args[1][0]))
        if any(program == p or program.startswith(p + ".") or program.startswith(p + "-")
               for p in FORBIDDEN):
            _guard["seen"].append(program)
            raise Launched(program)


sys.addaudithook(_audit)


def _alarm(signum, frame):
    raise Hung(f"no answer within {CASE_LIMIT_S} s")


def run_case(argv, env=None):
    """(exit code, stderr, stdout) of main(argv) in this process, under the watchdog."""
    err, out = io.StringIO(), io.StringIO()
    old_env = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_LIMIT_S)
    _guard["on"] = True
    try:
        with redirect_stderr(err), redirect_stdout(out):
            try:
                code = main([str(a) for a in argv])
            except SystemExit as e:
                code = e.code
    finally:
        _guard["on"] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        for k, v in old_env.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    return code, err.getvalue(), out.getvalue()


def refused(code, err, shown):
    assert code == 2, shown
    assert "Traceback" not in err, shown
    assert len([line for line in err.splitlines() if line.startswith("mpiscope: error:")]) == 1, shown


# ------------------------------------------------------------------ the nodes

@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """Hostile files and a read-only directory: a read-only tmpfs as root
    (root writes through permissions), else a directory of mode 0555."""
    d = tmp_path_factory.mktemp("nodes")
    os.chmod(d, 0o755)
    deep = "[" * 100_000 + "]" * 100_000
    (d / "deep.json").write_text(deep)
    (d / "deep.toml").write_text(f"a = {deep}\n")
    with open(d / "huge", "wb") as f:  # 2 GiB of holes: larger than any input may be
        f.truncate(2 << 30)
    os.mkfifo(d / "fifo")
    os.symlink("loop", d / "loop")
    (d / "dir").mkdir()
    # A file only its owner may read, in a directory every user may enter
    # (pytest's own temporary directories are its user's alone).
    locked = Path(tempfile.mkdtemp(prefix="mpiscope-locked-", dir="/tmp"))
    os.chmod(locked, 0o755)
    (locked / "secret").write_text("{}")
    os.chmod(locked / "secret", 0)
    os.symlink(locked, d / "locked")
    ro = d / "ro"
    ro.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)], capture_output=True).returncode == 0
    if not mounted:
        os.chmod(ro, 0o555)
    try:
        yield {"d": d, "ro": ro, "ro_how": "read-only tmpfs" if mounted else "mode 0555"}
    finally:
        shutil.rmtree(locked)
        if mounted:
            subprocess.run(["umount", "-l", str(ro)], check=False)


READ_CASES = ("fifo", "dev_zero", "huge", "deep_json", "deep_toml", "directory", "unreadable", "link_loop")
# Brackets nested deep are a syntax error of a hostfile or pairs file (found
# once the MPI is known) or of a GOAL schedule (found by the simulator);
# tests/bad_inputs.py has those: only JSON and TOML readers meet them as nesting.
TEXT_ONLY = {"text_file": {"deep_json", "deep_toml"}, "input_file": {"deep_json", "deep_toml"}}


def read_value(case, place, kind):
    d = place["d"]
    value = {"fifo": d / "fifo", "dev_zero": "/dev/zero", "huge": d / "huge", "deep_json": d / "deep.json",
             "deep_toml": d / "deep.toml", "directory": d / "dir",
             "unreadable": os.path.realpath(d / "locked") + "/secret",
             "link_loop": d / "loop"}[case]
    if kind == "tune_dir" and case != "directory":  # a tune directory whose tune.json is that node
        t = d / f"tune-{case}"
        if not t.exists():
            t.mkdir()
            os.symlink(value, t / "tune.json")
        return t
    return value


# What the refusal says of each case.
WHY = {"fifo": "is a FIFO", "dev_zero": "is a character device", "huge": "is larger than the",
       "deep_json": "nested more than 200 levels", "deep_toml": "nested more than 200 levels",
       "directory": "is a directory", "unreadable": "permission denied",
       "link_loop": "symbolic links loop"}

# Options a command needs before it reads the file at all.
READ_BASE = {("sim", "run"): ["--alpha", "1us", "--beta", "1ns/B"]}


def _read_options():
    return [(path, a, before) for path, a, before in _options(build_parser())
            if getattr(a.type, "kind", None) in READ_KINDS]


def _write_options():
    return [(path, a, before) for path, a, before in _options(build_parser())
            if getattr(a.type, "kind", None) in WRITE_KINDS]


def _label(path, action):
    return f"{' '.join(path)} {max(action.option_strings, key=len) if action.option_strings else action.metavar}"


@pytest.fixture
def env(tmp_path, monkeypatch):
    root, here = tmp_path / "out", tmp_path / "cwd"
    here.mkdir()
    build_run(root, RUN_ID, "2024-01-01T00:00:00+00:00", benches=("pingpong", "bw"), sizes=[1, 64])
    for key in ("MPISCOPE_CONFIG", "MPISCOPE_PROGRESS", "MPISCOPE_MPICC"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MPISCOPE_OUT", str(root))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(here)
    return {"root": root, "here": here, "profile": write_run(tmp_path / "prof")}


def test_every_file_reading_option_refuses_what_is_no_regular_file(place, env, capsys):
    options, counts, started = _read_options(), {}, time.monotonic()
    assert len(options) >= 15, [_label(p, a) for p, a, _ in options]
    for path, action, before in options:
        for case in READ_CASES:
            if case in TEXT_ONLY.get(action.type.kind, ()):
                continue
            value = str(read_value(case, place, action.type.kind))
            argv = [*path, *READ_BASE.get(path, ()), *_argv((), action, before, value)]
            with permissions_apply() if case == "unreadable" else contextlib.nullcontext():
                code, err, _ = run_case(argv)
            shown = f"{_label(path, action)} <- {case}: {argv!r:.200}\n{err[-600:]}"
            refused(code, err, shown)
            assert value in err or os.path.dirname(value) in err, shown  # the file is named
            if not (case == "directory" and action.type.kind == "tune_dir"):
                assert WHY[case] in err, shown  # and what is wrong with it
            counts[case] = counts.get(case, 0) + 1
    assert stat.S_ISFIFO(os.stat(place["d"] / "fifo").st_mode)
    assert not _guard["seen"]
    with capsys.disabled():
        print(f"\nfile fuzz, reading: {sum(counts.values())} cases over {len(options)} options "
              f"({', '.join(f'{k} {v}' for k, v in counts.items())}), all refused, "
              f"{time.monotonic() - started:.0f} s")


def test_config_files_and_the_hostfile_they_name_refuse_nodes(place, env):
    d = place["d"]
    for case in ("fifo", "dev_zero", "huge", "deep_toml", "directory", "link_loop"):
        value = str(read_value(case, place, "config"))
        code, err, _ = run_case(["runs"], env={"MPISCOPE_CONFIG": value})
        refused(code, err, f"MPISCOPE_CONFIG={case}\n{err}")
        assert value in err, err
        project = env["here"] / "mpiscope.toml"
        os.symlink(value, project)
        try:
            code, err, _ = run_case(["runs"])
        finally:
            project.unlink()
        refused(code, err, f"./mpiscope.toml -> {case}\n{err}")
    (env["here"] / "mpiscope.toml").write_text(f'[run]\nhostfile = "{d / "fifo"}"\n')
    code, err, _ = run_case(["run", "--dry-run"])
    refused(code, err, f"[run] hostfile = FIFO\n{err}")
    assert "fifo" in err and "FIFO" in err, err


@pytest.mark.parametrize("node", ["fifo", "directory"])
def test_a_catalog_that_is_no_file_falls_back_to_the_run_directories(env, node):
    catalog = env["root"] / "catalog.duckdb"
    catalog.unlink(missing_ok=True)
    os.mkfifo(catalog) if node == "fifo" else catalog.mkdir()
    code, err, out = run_case(["runs"])
    assert code == 0 and RUN_ID in out, err + out
    assert "not a regular file" in err and "Traceback" not in err, err
    assert stat.S_ISFIFO(os.stat(catalog).st_mode) if node == "fifo" else catalog.is_dir()


def test_a_fifo_in_place_of_a_run_context_does_not_hang_a_listing(env):
    other = env["root"] / "20240102-000000-bbbb"
    other.mkdir()
    os.mkfifo(other / "context.json")
    code, err, out = run_case(["runs"])
    assert code == 0 and RUN_ID in out and "Traceback" not in err, err + out


# ------------------------------------------------------------------ writing

WRITE_CASES = ("char_device", "fifo_without_reader", "fifo_with_reader", "trailing_slash", "read_only_dir")


def _valid_base(path, env):
    """Arguments that make a write command do its work, where the test has
    the data: the written bytes then go into the node."""
    run = ["latest"]
    return {("report",): run, ("export",): ["--format", "csv", *run],
            ("profile", "weights"): [str(env["profile"])]}.get(tuple(path), [])


class Reader:
    """Reads a FIFO from a thread while a case writes it."""

    def __init__(self, fifo):
        self.fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        self.data, self.stop = b"", threading.Event()
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self):
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            chunk = os.read(self.fd, 1 << 16) if ready else b""
            self.data += chunk
            if not chunk and self.stop.is_set():
                break

    def close(self):
        self.stop.set()
        self.thread.join(CASE_LIMIT_S)
        os.close(self.fd)
        return self.data


def test_every_file_writing_option_writes_nodes_in_place_or_refuses(place, env, tmp_path, capsys):
    options, counts, written, started = _write_options(), {}, 0, time.monotonic()
    assert len(options) >= 7, [_label(p, a) for p, a, _ in options]
    for path, action, before in options:
        kind = action.type.kind
        for case in WRITE_CASES:
            if case == "trailing_slash" and kind == "output_dir":
                continue  # 'new/' names the directory to write into: a correct value there
            d = tmp_path / f"w-{len(counts)}-{sum(counts.values())}"
            d.mkdir()
            node = d / "node"
            if case == "char_device":
                os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            elif case.startswith("fifo"):
                os.mkfifo(node)
            value = {"trailing_slash": f"{d}/new/", "read_only_dir": f"{place['ro']}/out.txt"}.get(case, str(node))
            reader = Reader(node) if case == "fifo_with_reader" else None
            argv = [*path, *_valid_base(path, env), *_argv((), action, before, value)]
            try:
                code, err, _ = run_case(argv)
            except Launched:
                code, err = None, ""
            finally:
                got = reader.close() if reader else b""
            shown = f"{_label(path, action)} <- {case} ({place['ro_how']}): {argv!r:.200}\n{err[-600:]}"
            assert "Traceback" not in err, shown
            if code == 0:
                written += 1
                assert case in ("char_device", "fifo_with_reader"), shown
                if case == "fifo_with_reader":
                    assert got, shown  # the output went through the pipe
            elif code is not None:
                refused(code, err, shown)
                if case == "read_only_dir" and place["ro_how"] == "read-only tmpfs":
                    assert "read-only file system" in err, shown
            if case in ("char_device",):
                assert stat.S_ISCHR(os.stat(node).st_mode), shown  # never replaced
            if case.startswith("fifo"):
                assert stat.S_ISFIFO(os.stat(node).st_mode), shown
            left = sorted(p.name for p in d.iterdir())
            assert left == (["node"] if node.exists() or node.is_symlink() else []), (shown, left)
            assert not os.listdir(place["ro"]) if place["ro_how"] != "mode 0555" else True
            counts[case] = counts.get(case, 0) + 1
    assert written >= 4  # report, export, profile weights wrote into a device or a FIFO
    with capsys.disabled():
        print(f"\nfile fuzz, writing: {sum(counts.values())} cases over {len(options)} options "
              f"({', '.join(f'{k} {v}' for k, v in counts.items())}), {written} written in place, "
              f"the rest refused; read-only directory: {place['ro_how']}; "
              f"{time.monotonic() - started:.0f} s")
