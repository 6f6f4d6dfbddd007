# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope tune on real libraries (docs/tutorials/tune-collectives.md):
the files we write are loaded by the library and select what they say, and a
small tune on 2 ranks writes a file that verifies.

Nothing here asserts a speed: which algorithm wins depends on the machine's
load. The assertions are about what the library does with the file."""

import json
import os
import subprocess
from pathlib import Path

import jsonschema
import pytest

from mpiscope.engine.mpi import identify
from mpiscope.mpilibs.mpich import selection_json as mpich_selection
from mpiscope.mpilibs.mpich.cvars import device_cvar
from mpiscope.mpilibs.openmpi import rules as ompi_rules
from mpiscope.mpilibs.selection import Rule
from mpiscope.tune import probes
from mpiscope.tune.discover import discover
from runcli import mpiscope

OMPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "tune.schema.json"


def _run(cmd, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **OMPI_ENV, **(env or {})}, stdin=subprocess.DEVNULL)


def test_open_mpi_loads_our_classic_file_and_ignores_one_not_starting_at_zero(tmp_path):
    """allgather 'two_proc' refuses any communicator but 2 ranks: on 3 ranks a
    file selecting it makes the call fail, so the library read and applied it.
    The same rule starting at 8 instead of 0 is silently ignored by Open MPI."""
    mpi = identify("/usr/bin/mpicc.openmpi")
    cat = discover(mpi)
    probe = probes.build(mpi, "collcall")
    good = tmp_path / "good.conf"
    good.write_text(ompi_rules.write_classic({"allgather": {3: [Rule(0, "two_proc")]}}, cat))
    ompi_rules.read_classic(good.read_text(), cat)
    bad = tmp_path / "bad.conf"
    bad.write_text(good.read_text().replace("0 6 4 0", "8 6 4 0"))
    with pytest.raises(Exception, match="not 0"):
        ompi_rules.read_classic(bad.read_text(), cat)   # our reader refuses what Open MPI ignores
    for path, fails in ((good, True), (bad, False)):
        p = _run([mpi.launcher, "-n", "3", "--oversubscribe", "--bind-to", "none",
                  "--mca", "coll_tuned_use_dynamic_rules", "1",
                  "--mca", "coll_tuned_dynamic_rules_filename", str(path), str(probe),
                  "allgather:64"])
        assert (p.returncode != 0) == fails, (path.name, p.stdout, p.stderr[-2000:])


@pytest.mark.parametrize("device", ["none", "percoll"])
@pytest.mark.parametrize("wrapper", ["/usr/bin/mpicc.mpich"])
def test_mpich_reads_our_selection_file(wrapper, device, tmp_path):
    """MPICH aborts at MPI_Init on a selection file naming an algorithm it lacks:
    the file we write (every tuned collective) passes, a broken one does not;
    with the device's collectives off for all (none) or for the tuned ones
    (percoll, as env.sh sets them)."""
    mpi = identify(wrapper)
    cat = discover(mpi)
    probe = probes.build(mpi, "collcall")
    table = {c: {2: [Rule(0, cat.algorithms[c][-1].name)]}
             for c in ("allreduce", "bcast", "alltoall", "barrier") if cat.algorithms.get(c)}
    good = tmp_path / "sel.json"
    good.write_text(mpich_selection.write(table, cat))
    mpich_selection.read(good.read_text(), cat)
    bad = tmp_path / "bad.json"
    bad.write_text(good.read_text().replace("MPIR_Bcast_", "MPIR_Bcast_nosuch_", 1))
    cells = ["allreduce:64", "bcast:64", "alltoall:64", "barrier:0", "allgather:64"]
    assert set(table) <= cat.device_percoll
    per_coll = [w for c in table for w in ("-genv", device_cvar(c), "0")] if device == "percoll" else []
    for path, ok in ((good, True), (bad, False)):
        p = _run([mpi.launcher, "-n", "2", "-genv", "MPIR_CVAR_DEVICE_COLLECTIVES", device, *per_coll,
                  "-genv", "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", str(path), str(probe),
                  *cells])
        assert (p.returncode == 0) == ok, (path.name, p.stdout, p.stderr[-2000:])


def test_small_tune_writes_a_file_the_library_selects_by(tmp_path):
    out = tmp_path / "t"
    p = mpiscope("tune", "-n", "2", "--mpi", "openmpi", "--coll", "allreduce,barrier",
                 "--sizes", "8,64K", "--time-budget", "0.05", "--verify-repeat", "1",
                 "--repeat", "2", "--own", "--json", "-o", out, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()),
                        cls=jsonschema.Draft202012Validator)
    assert json.loads((out / "tune.json").read_text())["rules"] == doc["rules"]
    cat = discover(identify("/usr/bin/mpicc.openmpi"))
    parsed = ompi_rules.read_classic(Path(doc["files"]["openmpi"]).read_text(), cat)
    assert set(parsed) == {"allreduce", "barrier"}
    for coll, by_p in doc["rules"].items():
        assert by_p["2"][0]["start"] == 0
    # gdb saw every cell enter the function its rule's algorithm enters when forced
    cells = doc["verification"]["cells"]
    assert len(cells) == 3 and all(c["library_selects"] for c in cells)
    assert all(c["library_selects"] == c["expected"] for c in cells)
    assert doc["verification"]["file_in_effect"] is True
    assert doc["cells"]["measured"] <= doc["cells"]["exhaustive"]
    # the default search, guided, measured its point-to-point costs itself: a pingpong run among the tune's
    assert doc["search"] == "guided"
    costs = json.loads((out / "runs" / doc["costs_run"] / "context.json").read_text())
    assert costs["status"] == "completed" and costs["plan"]["benches"] == ["pingpong"]
    # every launch timed its repetitions alike: each started at the engine's own barrier
    plans = [json.loads(c.read_text())["plan"] for c in (out / "runs").glob("*/context.json")]
    assert plans and {(pl["sync"], pl["start_barrier"]) for pl in plans} == {("barrier", "own")}
    # what the default runs was read under gdb at every cell, barrier's too
    assert {(r["collective"], r["size"]) for r in doc["default_runs"]} == \
        {("allreduce", 8), ("allreduce", 65536), ("barrier", 0)}
    assert all(r["algorithm"] in cat.names(r["collective"]) for r in doc["default_runs"])
    # two rounds of launches: every algorithm judged against the default over its launches
    judged = [r for d in doc["decisions"] for r in d["rows"] if "verdict" in r]
    assert judged and all(r["unit"] == "launch" and r["launches"] == 2 for r in judged)
    # allreduce has algorithms of our own, compared wherever the library's were measured (the
    # guided search may leave a size to the simulation); barrier none
    own = doc["own_algorithms"]
    measured = {(d["collective"], d["size"]) for d in doc["decisions"] if d["measured"]}
    compared = {(x["collective"], x["size"]) for x in own}
    assert {c for c in measured if c[0] == "allreduce"} <= compared <= {("allreduce", 8), ("allreduce", 65536)}
    assert compared
    assert all(x["best_library"] in ["default"] + cat.names("allreduce") for x in own)
    env = (out / "env.sh").read_text()
    assert f"OMPI_MCA_coll_tuned_dynamic_rules_filename={Path(doc['files']['openmpi']).absolute()}" in env
    assert "OMPI_MCA_coll_tuned_use_dynamic_rules=1" in env
    # the tuning report beside the files: every decided cell in the winner map
    html = (out / "report.html").read_text()
    table = html.split('<table class="winners">')[1].split("</table>")[0]
    winners = {d["winner"] for d in doc["decisions"] if d["collective"] == "allreduce"}
    assert all(f"<b>{w}</b>" in table for w in winners) and "<th>64K</th>" in table


def test_bad_input_exits_2_and_writes_nothing(tmp_path):
    out = tmp_path / "t"
    p = mpiscope("tune", "-n", "2", "--mpi", "openmpi", "--coll", "allreduce,nosuch", "-o", out)
    assert p.returncode == 2 and "nosuch" in p.stderr
    assert not out.exists()
    w = tmp_path / "w.json"
    w.write_text('{"collectives": {"allreduce": {"sizes": {"1K": 3}}}}')
    p = mpiscope("tune", "-n", "2", "--mpi", "openmpi", "--weights", w, "-o", out)
    assert p.returncode == 2 and "weights" in p.stderr
    assert not out.exists()
    p = mpiscope("tune", "-n", "2", "--mpi", "openmpi", "--model-prune", "lots", "-o", out)
    assert p.returncode == 2 and "--model-prune" in p.stderr
    assert not out.exists()
