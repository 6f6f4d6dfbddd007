# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope's C programs on the other cluster CPUs, aarch64 and ppc64le:
built with Debian's cross compilers against that CPU's Open MPI
(scripts/cross-build.sh), then run under qemu-user: the timer's own test,
the simulator's tests, and a 2-rank engine pingpong whose ranks this host's
Open MPI mpirun starts under qemu (the PMIx wire between them is the same
on every CPU). The profiler and the delay program are built only. The
timer's test runs natively too."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mpiscope.measure import launch
from mpiscope.store.rawfile import read_raw

ROOT = Path(__file__).resolve().parents[2]
# Debian's name of the CPU, its ELF machine number, qemu-user's program, the counter's name.
ARCHES = {
    "arm64": (183, "qemu-aarch64-static", "CNTVCT_EL0"),
    "ppc64el": (21, "qemu-ppc64le-static", "time base"),
}
PROGRAMS = ("clock/timer-check", "sim/mpiscope-sim", "engine/mpiscope-engine", "pmpi/libmpiscope-pmpi.so",
            "cluster/mpiscope-delayd", "cluster/libmpiscope-yield.so")


@pytest.fixture(scope="module", params=sorted(ARCHES))
def built(request):
    """(arch, its build folder, the qemu-user command that runs its programs)."""
    arch = request.param
    p = subprocess.run(["bash", str(ROOT / "scripts" / "cross-build.sh"), arch], capture_output=True, text=True,
                       timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    top = ROOT / "build" / "cross" / arch
    return arch, top, [ARCHES[arch][1], "-L", str(top / "sysroot")]


def test_timer_check_passes_on_this_cpu(tmp_path):
    p = subprocess.run(["make", "-s", "-C", str(ROOT / "native" / "clock"), f"BUILD={tmp_path}"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([str(tmp_path / "timer-check")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["failures"] == 0 and got["period_s"] > 0 and got["resolution_s"] > 0


def test_every_program_is_built_for_the_cpu(built):
    arch, top, _ = built
    for name in PROGRAMS:
        head = (top / name).read_bytes()[:20]
        # ELF, 64-bit, little-endian, the CPU's machine number
        assert head[:4] == b"\x7fELF" and head[4] == 2 and head[5] == 1, name
        assert int.from_bytes(head[18:20], "little") == ARCHES[arch][0], name


def test_timer_check_passes_under_qemu(built):
    arch, top, qemu = built
    p = subprocess.run([*qemu, str(top / "clock" / "timer-check")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    print(arch, got)  # the counter's rates as emulated, for the record (pytest -s)
    assert got["counter"] == ARCHES[arch][2] and got["usable"] == 1
    assert got["nominal_hz"] > 0 and got["calibrated_hz"] > 0
    # The nominal rate where calibration agrees with it within 10%, else the calibrated one.
    agrees = abs(got["calibrated_hz"] / got["nominal_hz"] - 1) <= 0.1
    want = 1 / got["nominal_hz"] if agrees else 1 / got["calibrated_hz"]
    assert got["period_s"] == pytest.approx(want, rel=1e-5)


def test_simulator_tests_pass_under_qemu(built, tmp_path):
    arch, top, qemu = built
    wrapper = tmp_path / "mpiscope-sim"
    wrapper.write_text(f'#!/bin/sh\nexec {" ".join(qemu)} {top / "sim" / "mpiscope-sim"} "$@"\n')
    wrapper.chmod(0o755)
    # The model's tests on hand-written schedules and the closed forms of three
    # algorithms; the exhaustive sweeps over every algorithm stay native.
    tests = ["tests/cli/test_sim.py", "tests/cli/test_sim_exact.py::test_simulated_equals_closed_form"]
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *tests],
                       capture_output=True, text=True, cwd=ROOT, timeout=900,
                       env={**os.environ, "MPISCOPE_TEST_SIM": str(wrapper)})
    assert p.returncode == 0, p.stdout[-4000:]
    assert " passed" in p.stdout and "skipped" not in p.stdout


def test_engine_pingpong_on_two_ranks_under_qemu(built, tmp_path):
    arch, top, qemu = built
    out = tmp_path / "raw"
    out.mkdir()
    cmd = launch.command(launcher_family="openmpi", launcher="mpirun", np=2, engine=qemu[0], oversubscribe=True,
                         engine_args=[*qemu[1:], str(top / "engine" / "mpiscope-engine"), "--bench", "pingpong",
                                      "--sizes", "8", "--reps-max", "50", "--ci-width", "0", "--time-budget", "60",
                                      "--expect-np", "2", "--out", str(out)])
    p = subprocess.run(cmd, capture_output=True, text=True, env=launch.launch_env("openmpi"), timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert "@finalize" in p.stdout
    # No interval target (--ci-width 0) and a budget 50 repetitions never reach:
    # the series stops at --reps-max whatever qemu's timing noise.
    for rank in (0, 1):
        raw = read_raw(out / f"rank-{rank}.raw")
        assert raw.complete
        timer = raw.header["timer"]
        assert timer["name"] == "tsc" and timer["counter"] == ARCHES[arch][2] and timer["fallback"] is None
        (series,) = [b for b in raw.blocks if b.meta.get("kind") == "series"]
        assert series.meta["bench"] == "pingpong" and series.meta["size"] == 8 and series.nrows == 50
        # every repetition's timed span is a positive time on the CPU's counter
        spans = [e - s for s, e in zip(series.t_start, series.t_end)]
        assert min(spans) > 0
