# SPDX-License-Identifier: BSD-3-Clause
"""unit/ holds the tests that start no process: an audit hook (PEP 578) fails
any test here, its fixtures included, that starts one, naming the program,
so that `make test-fast` stays fast and runs on any machine."""

import sys

import pytest

from rawgen import build_demo_run

# The audit events of every way Python starts a process.
PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                            "os.fork", "os.forkpty"})

MOVE_IT = "tests in tests/unit/ start none: move it to tests/cli/, tests/mpi/, tests/cluster/ or tests/apps/"

_running = []    # the unit test being set up, run or torn down
_started = {}    # its node id -> the process starts refused


def _refuse(event, args):
    if _running and event in PROCESS_EVENTS:
        what = f"{event} {args[0]!r}" if args else event
        _started.setdefault(_running[-1], []).append(what)
        raise RuntimeError(f"{_running[-1]} started a process ({what}); {MOVE_IT}")


sys.addaudithook(_refuse)  # a hook cannot be removed: it refuses only while a unit test runs


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _watched(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _watched(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    if nextitem is None:  # the session's fixtures end here too, whichever folder made them
        return (yield)
    return (yield from _watched(item))


def _watched(item):
    _running.append(item.nodeid)
    try:
        result = yield
    except BaseException:
        _started.pop(item.nodeid, None)  # the refusal, or another failure, is reported as it is
        raise
    finally:
        _running.pop()
    started = _started.pop(item.nodeid, None)
    if started:  # the test caught the refusal
        pytest.fail(f"{item.nodeid} started a process ({'; '.join(started)}); {MOVE_IT}", pytrace=False)
    return result


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo run of rawgen, built once per test module: (output root, run
    directory, its RunBuilder)."""
    out = tmp_path_factory.mktemp("out")
    run_dir, rb = build_demo_run(out)
    return out, run_dir, rb
