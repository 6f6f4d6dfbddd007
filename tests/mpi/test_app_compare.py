# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope app compare` end to end on a small MPI program (written and
built here) that does some allreduces, then sleeps DELAY_MS milliseconds on
every rank: a configuration setting DELAY_MS is slower by a known delay, one
setting FAIL fails every launch, one setting QUIET prints no metric. The
run is stored, `show` and `--json` (validated against its schema) present
it, every launch that does not count is named; an interrupted or killed
run keeps what it measured. Run under `flock /tmp/mpiscope-mpi.lock`."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from runcli import mpiscope

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "schemas" / "app.schema.json").read_text())
DELAY_MS = 1000  # well above launch-to-launch spread on a loaded machine, so the wall time shows it
METRIC = r"Loop time of ([0-9.]+)"

PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *d = getenv("DELAY_MS");
    long ms = d ? atol(d) : 0, all[64];
    double x = 1, y = 0;
    for (int i = 0; i < 100; i++) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Gather(&ms, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("delays:");
        for (int r = 0; r < size && r < 64; r++) printf(" %ld", all[r]);
        printf("\n");
        if (!getenv("QUIET")) printf("Loop time of %.3f on %d procs\n", 0.001 * ms + 0.01, size);
    }
    int rc = getenv("FAIL") ? 3 : 0;
    if (rc && rank == 0) fprintf(stderr, "app: asked to fail\n");
    MPI_Finalize();
    return rc;
}
"""


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("app")
    (d / "delay.c").write_text(PROGRAM)
    for wrapper, name in (("mpicc.openmpi", "delay"), ("mpicc.mpich", "delay-mpich")):
        subprocess.run([wrapper, "-O2", "-o", str(d / name), str(d / "delay.c")], check=True)
    (d / "slow.env").write_text(f"# {DELAY_MS} ms more on every rank\nexport DELAY_MS={DELAY_MS}\n")
    (d / "fail.sh").write_text("export FAIL=1\n")
    (d / "quiet.sh").write_text("QUIET=1\n")
    return d


def openmpi_launch(work):
    return ["mpirun.openmpi", "-n", "2", "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle",
            "1", str(work / "delay")]


def compare(work, out, *args, code=0):
    p = mpiscope("app", "compare", "--out", out, "--json", *args, cwd=work, timeout=900)
    assert p.returncode == code, f"exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    return doc, p.stderr


def rows(doc):
    return {r["config"]: r for r in doc["results"]}


def test_the_slower_configuration_is_found_and_failures_are_named(work, tmp_path):
    doc, err = compare(work, tmp_path, "--mpi", "openmpi", "--config", f"slow={work / 'slow.env'}",
                       "--config", f"bad={work / 'fail.sh'}", "--min-rounds", 6, "--max-rounds", 6,
                       "--", *openmpi_launch(work), code=1)
    r = rows(doc)
    assert doc["status"] == "completed" and doc["kind"] == "app" and doc["rounds"] == 6
    assert [c["name"] for c in doc["configs"]] == ["default", "slow", "bad"]
    assert r["default"]["verdict"] == "baseline" and r["default"]["n"] == 6
    # DELAY_MS more on every rank: slower, its whole interval below 1.
    slow = r["slow"]
    assert slow["verdict"] == "slower" and slow["n"] == 6
    assert slow["speedup"]["high"] < 1 and slow["median"] > r["default"]["median"]
    # Every launch of `bad` failed: each is named, with the program's own message.
    assert r["bad"]["verdict"] == "no valid launch" and r["bad"]["n"] == 0
    assert r["bad"]["launches"] == r["bad"]["failed"] == 6
    failed = doc["failed_launches"]
    assert {x["config"] for x in failed} == {"bad"} and len(failed) == 1 + 6   # its warm-up launch too
    for x in failed:
        assert x["status"] == "failed" and x["exit_code"] == 3 and "asked to fail" in x["reason"]
        assert f"launch {x['index']} (bad, round {x['round']}" in err
    assert "mpiscope: error: no valid launch of bad" in err
    run_dir = Path(doc["run_dir"])
    assert run_dir.parent == tmp_path and run_dir.name == doc["run_id"]
    assert (run_dir / f"launch-{failed[0]['index']}.stderr").read_text().startswith("app: asked to fail")
    assert f"delays: {DELAY_MS} {DELAY_MS}" in (run_dir / "launch-1.out").read_text()   # warm-up of slow: both ranks

    # Stored: listed with its kind, shown again as text and as the same document.
    listing = mpiscope("runs", "--out", tmp_path)
    assert doc["run_id"] in listing.stdout and " app" in listing.stdout.splitlines()[-1]
    shown = mpiscope("show", doc["run_id"], "--out", tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "slower" in shown.stdout and "no valid launch" in shown.stdout and "asked to fail" in shown.stdout
    again = json.loads(mpiscope("show", doc["run_id"], "--out", tmp_path, "--json").stdout)
    jsonschema.validate(again, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert again["results"] == doc["results"] and again["failed_launches"] == failed
    refused = mpiscope("export", doc["run_id"], "--format", "csv", "--out", tmp_path)
    assert refused.returncode == 2 and "launches.parquet" in refused.stderr


def test_the_metric_gives_the_known_ratio_and_a_missing_one_is_named(work, tmp_path):
    """The program prints 0.010 + DELAY_MS/1000 s: the speedup is known
    exactly, every interval has no width, and measuring stops as soon as
    there are launches enough for a verdict. mpiscope starts the program
    itself (-n)."""
    doc, err = compare(work, tmp_path, "--mpi", "openmpi", "-n", 2, "--metric", METRIC,
                       "--config", f"slow={work / 'slow.env'}", "--config", f"quiet={work / 'quiet.sh'}",
                       "--min-rounds", 2, "--warmup", 0, "--", str(work / "delay"), code=1)
    r = rows(doc)
    assert doc["value"]["metric"] == METRIC and doc["np"] == 2
    assert doc["stop"] == "ci-width" and doc["rounds"] == 6          # 6 launches: the least for a verdict
    assert r["default"]["median"] == pytest.approx(0.010)
    assert r["slow"]["speedup"]["point"] == pytest.approx(0.010 / (0.010 + DELAY_MS / 1000))
    assert r["slow"]["speedup"]["low"] == r["slow"]["speedup"]["high"] and r["slow"]["verdict"] == "slower"
    assert r["quiet"]["n"] == 0 and r["quiet"]["metric_missing"] == 2   # dropped after --min-rounds
    missing = [x for x in doc["failed_launches"] if x["config"] == "quiet"]
    assert len(missing) == 2 and all(x["status"] == "metric-missing" and "no match" in x["reason"]
                                     for x in missing)
    assert doc["command"][1:3] == ["-n", "2"] and doc["command"][-1] == str(work / "delay")


def test_mpich_ranks_get_the_variables(work, tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost:2\n")
    doc, _ = compare(work, tmp_path / "out", "--mpi", "mpich", "--hostfile", hosts, "--config",
                     f"slow={work / 'slow.env'}", "--min-rounds", 1, "--max-rounds", 1, "--warmup", 0, "--",
                     str(work / "delay-mpich"))
    run_dir = Path(doc["run_dir"])
    assert "delays: 0 0" in (run_dir / "launch-0.out").read_text()
    assert f"delays: {DELAY_MS} {DELAY_MS}" in (run_dir / "launch-1.out").read_text()
    assert (run_dir / "hostfile").read_text().strip() == "localhost:2"


def _start(work, out, extra=()):
    cmd = [sys.executable, "-m", "mpiscope.cli", "app", "compare", "--out", str(out), "--mpi", "openmpi",
           "--config", f"slow={work / 'slow.env'}", "--max-rounds", 50, "--min-rounds", 50, *extra, "--",
           *openmpi_launch(work)]
    env = {k: v for k, v in os.environ.items() if k != "MPISCOPE_PROGRESS"}
    return subprocess.Popen(list(map(str, cmd)), cwd=work, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_for_launches(out, n, proc, timeout=300):
    """The hidden run directory once it holds `n` launches."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for partial in Path(out).glob(".*.partial"):
            outs = list(partial.glob("launch-*.stderr"))
            if len(outs) > n and (partial / "launches.parquet").exists():
                return partial
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    raise AssertionError(f"no {n} launches in {timeout} s")


def test_an_interrupted_run_is_stored_failed_with_its_launches(work, tmp_path):
    proc = _start(work, tmp_path)
    try:
        _wait_for_launches(tmp_path, 3, proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    assert "interrupted (SIGINT)" in err
    [run_dir] = [p for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    doc = json.loads(mpiscope("show", run_dir, "--json").stdout)
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert doc["status"] == "failed" and doc["stop"] == "interrupted" and doc["launches"] >= 3
    assert sum(r["launches"] for r in doc["results"]) == doc["launches"] - 2   # the warm-up round left out


def test_a_killed_run_stays_hidden_failed_and_readable(work, tmp_path):
    proc = _start(work, tmp_path)
    try:
        partial = _wait_for_launches(tmp_path, 3, proc)
        proc.kill()
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    context = json.loads((partial / "context.json").read_text())
    assert context["status"] == "failed" and "launches.parquet" in context["error"]
    shown = mpiscope("show", partial, "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert doc["stop"] is None and doc["launches"] >= 3 and doc["status"] == "failed"


@pytest.mark.skipif(os.geteuid() != 0, reason="emulated clusters need root")
def test_on_an_emulated_cluster_every_rank_gets_the_variables(work, tmp_path):
    name = f"ap{os.getpid() % 100000}"
    up = mpiscope("cluster", "up", name, "--hosts", 2, "--slots", 1)
    assert up.returncode == 0, up.stderr
    try:
        for mpi, program in (("openmpi", "delay"), ("mpich", "delay-mpich")):
            # Debian's MPICH 4.0 may stay in MPI_Finalize over emulated hosts:
            # such a launch is stopped by --launch-timeout and named, after
            # its ranks printed what they were given.
            p = mpiscope("app", "compare", "--out", tmp_path / mpi, "--json", "--mpi", mpi, "--cluster", name,
                         "--config", f"slow={work / 'slow.env'}", "--min-rounds", 1, "--max-rounds", 1,
                         "--warmup", 0, "--launch-timeout", 60, "--", str(work / program), cwd=work, timeout=600)
            doc = json.loads(p.stdout)
            other_failures = [x for x in doc["failed_launches"] if "was killed" not in x["reason"]]
            assert p.returncode in (0, 1) and not other_failures, f"exit {p.returncode}\n{p.stderr[-3000:]}"
            run_dir = Path(doc["run_dir"])
            assert doc["np"] == 2 and json.loads((run_dir / "context.json").read_text())["cluster"]["placement"] \
                == [f"{name}-h0", f"{name}-h1"]
            assert "delays: 0 0" in (run_dir / "launch-0.out").read_text()
            assert f"delays: {DELAY_MS} {DELAY_MS}" in (run_dir / "launch-1.out").read_text()
    finally:
        mpiscope("cluster", "down", name)


def test_a_prediction_stands_beside_the_measurement(work, tmp_path):
    """--profile and --tune: the tune (a stored tune of Open MPI, its rules
    file in place) is added as the configuration `tuned`, and its predicted
    speedup is printed and stored beside the measured one."""
    tune = tmp_path / "tune"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "tune-replay" / "expected" / "openmpi-adaptive",
                    tune)
    (tune / "env.sh").write_text((tune / "env.sh").read_text().replace("OUT/", f"{tune}/"))
    out = tmp_path / "out"
    p = mpiscope("profile", "--out", out, "--mpi", "openmpi", "--label", "prof", "--", *openmpi_launch(work),
                 timeout=300)
    assert p.returncode == 0, p.stderr
    doc, _ = compare(work, out, "--mpi", "openmpi", "--profile", "prof", "--tune", tune, "--min-rounds", 2,
                     "--max-rounds", 2, "--", *openmpi_launch(work))
    assert [c["name"] for c in doc["configs"]] == ["default", "tuned"]
    assert doc["configs"][1]["env"]["OMPI_MCA_coll_tuned_dynamic_rules_filename"] == f"{tune}/ompi-rules.conf"
    pred = doc["prediction"]
    assert pred["config"] == "tuned" and pred["tune"] == str(tune.resolve())
    assert pred["low"] <= pred["speedup"] <= pred["high"] and isinstance(pred["agree"], bool)
    assert pred["measured"] == rows(doc)["tuned"]["speedup"]
    shown = mpiscope("show", doc["run_id"], "--out", out)
    assert "predicted speedup of tuned" in shown.stdout and "agree" in shown.stdout, shown.stdout
