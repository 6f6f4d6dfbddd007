# SPDX-License-Identifier: BSD-3-Clause
"""The what-if at scale run by the simulator (mpiscope-sim, built by make) on a
synthetic traced profile of 4 ranks (app_traced.py): the replicated
schedule simulates, the what-if's validation and speedups at 8 and 16
ranks, `mpiscope sim whatif`'s text, JSON and bad input, and the estimate
of operations per rank."""

import json
from dataclasses import replace

import numpy as np
import pytest

from mpiscope.app.scale import whatif
from mpiscope.app.trace_pattern import traced_pattern
from mpiscope.cli.main import build_parser
from mpiscope.common.errors import UsageError
from mpiscope.sim import binary
from mpiscope.sim.costs import SimCosts
from mpiscope.sim.replicate import CALC, RECV, SEND, Algorithms, estimate_ops, write_schedule
from mpiscope.sim.simulate import Extras, probe
from app_traced import replicated, write_tune
from schemas import validate
from snapshot import assert_snapshot


def test_replication_to_8_ranks(traced_app, tmp_path):
    algs = {"allreduce": "recursive_doubling", "bcast": "binomial"}
    ranks, info = replicated(traced_app, tmp_path, 8, lambda bench, q, size: algs[bench])
    assert len(ranks) == 8 and info["nops"] == sum(len(o) for o, _ in ranks)
    assert info["kept_s"] == pytest.approx([1e-4] * 8)   # the barrier's traced time stands
    for r, (ops, deps) in enumerate(ranks):
        p2p = ops[(ops["type"] <= RECV) & (ops["tag"] == 0)]
        # the ring keeps its distance: receive from r-1, send to r+1, at 8 ranks
        assert list(zip(p2p["type"], p2p["peer"], p2p["value"])) == [(RECV, (r - 1) % 8, 1000),
                                                                     (SEND, (r + 1) % 8, 1000)]
        coll = ops[(ops["type"] <= RECV) & (ops["tag"] > 0)]
        allreduce = coll[coll["value"] == 64]
        # recursive doubling on 8 ranks: 3 exchanges with r xor 1, 2, 4
        assert sorted(allreduce["peer"][allreduce["type"] == SEND]) == sorted(r ^ m for m in (1, 2, 4))
        bcast = coll[coll["value"] == 128]
        root = r | 1                     # pairs (0,1), (2,3), … keep their members shifted, root 1
        assert list(bcast["type"]) == ([SEND] if r == root else [RECV])
        assert list(bcast["peer"]) == [r ^ 1]
        assert len(set(allreduce["tag"]) & set(bcast["tag"])) == 0   # each call its own tags
        assert (deps < np.repeat(np.arange(len(ops)), ops["ndeps"].astype(int))).all()  # earlier only
        assert (ops["type"] == CALC).sum() >= 4
    doc = binary.simulate(["--schedule", tmp_path / "app.bin", "--alpha-s", "1e-6"])
    assert doc["nranks"] == 8 and doc["makespan_median_s"] > 0


def test_whatif_validation_and_scale(traced_app, tmp_path):
    tune = write_tune(tmp_path / "ring", {"allreduce": {4: [(0, "ring")]}, "bcast": {2: [(0, "default")]}},
                 [("allreduce", 4, 64, "recursive_doubling"), ("bcast", 2, 128, "binomial")], ps=(2, 4))
    # Free messages: the simulated communication is the barrier's traced time alone.
    free = whatif(traced_app, tune, [8], SimCosts(), Extras())
    assert free.validation.default.median_s == pytest.approx(1e-4, rel=1e-6)
    assert free.traced_comm_s == pytest.approx(3.3e-4)
    assert free.error == pytest.approx(1e-4 / 3.3e-4 - 1, rel=1e-6)
    # Latency-bound: ring allreduce (tuned) needs 2(p-1) steps, recursive doubling lg p: tuned is slower.
    w = whatif(traced_app, tune, [8, 16], SimCosts(alpha_s=1e-5), Extras(replicates=3, seed=5))
    assert [x.p for x in w.points] == [8, 16]
    for x in w.points:
        assert x.speedup.median < 1 and x.tuned.median_s > x.default.median_s
        assert x.default.low_s <= x.default.median_s <= x.default.high_s
    assert w.points[1].nops > w.points[0].nops
    used = {(s.collective, s.p): s for s in w.selections}
    assert used[("allreduce", 16)].ours_tuned == "ring" and used[("bcast", 2)].ours_default == "binomial"
    assert w.kept == [{"call": "MPI_Barrier", "traced_s": pytest.approx(1e-4), "share": pytest.approx(1e-4 / 3.3e-4)}]
    assert json.dumps(w.to_dict())


def test_cli_text_json_and_bad_input(traced_app, app_tune, capsys):
    argv = ["sim", "whatif", "--from-trace", traced_app, "--tune", app_tune, "-p", "8", "--alpha", "20us", "--beta", "1GB/s"]
    args = build_parser().parse_args([str(a) for a in argv + ["--json"]])
    assert args.func(args) == 0
    doc = json.loads(capsys.readouterr().out)
    validate("sim-whatif", doc)
    assert doc["traced_p"] == 4 and [x["p"] for x in doc["points"]] == [8]
    args = build_parser().parse_args([str(a) for a in argv])
    assert args.func(args) == 0
    assert_snapshot("sim-whatif.txt", capsys.readouterr().out.replace(str(app_tune), "TUNE"))
    args = build_parser().parse_args([str(a) for a in argv[:-6] + ["-p", "6"] + argv[-4:]])
    with pytest.raises(UsageError, match="give multiples of 4"):   # known once the trace is read
        args.func(args)
    with pytest.raises(SystemExit) as exc:   # refused as the command line is read
        build_parser().parse_args([str(a) for a in argv[:-6] + ["-p", "8,x"] + argv[-4:]])
    assert exc.value.code == 2 and "distinct ones" in capsys.readouterr().err


def test_operation_estimate_and_the_limit(traced_app, tmp_path):
    """Every rank runs as many operations as the ranks probed here, so the estimate is exact."""
    algs = {"allreduce": "recursive_doubling", "bcast": "binomial"}
    _, info = replicated(traced_app, tmp_path, 8, lambda bench, q, size: algs[bench])
    pattern = traced_pattern(traced_app).pattern
    estimate = estimate_ops(pattern, 8, lambda bench, q, size: algs[bench],
                            lambda b, a, q, s: probe(b, a, q, s, 8192)["max_ops_probed"])
    assert estimate == info["nops"]
    with pytest.raises(UsageError, match="passes 10 operations"):
        write_schedule(pattern, 8, lambda *a: None, Algorithms(8192), tmp_path / "x.bin", 10)


def _traced_by(run, *mca):
    """The traced run as if Open MPI had run it on one host with these MCA words."""
    path = run / "context.json"
    ctx = json.loads(path.read_text())
    ctx.update({"mpi": "openmpi", "nodes": 1, "launch_commands": [["mpirun", "-n", "4", *mca, "app"]]})
    path.write_text(json.dumps(ctx))


def test_the_whatif_sends_messages_above_the_librarys_eager_limit_by_rendezvous(traced_app, app_tune):
    """The ring's 1000 B messages: eager under vader's default limit, by
    rendezvous (a request and its answer before the data) under a limit of
    512 B, which costs the validation time; every message eager without the
    library's limit, and a limit the costs set stands."""
    costs, extras = SimCosts(L=1e-4, alpha_s=1e-4), Extras()
    eager = whatif(traced_app, app_tune, [8], costs, extras)
    assert eager.eager_limit is None and eager.eager_from == "every message eager"
    _traced_by(traced_app)
    default = whatif(traced_app, app_tune, [8], costs, extras, library_eager=True)
    assert default.eager_limit == 4096 - 16 and "btl_vader_eager_limit, 4096 by default" in default.eager_from
    assert default.validation.default.median_s == pytest.approx(eager.validation.default.median_s)
    _traced_by(traced_app, "--mca", "btl_vader_eager_limit", "512")
    low = whatif(traced_app, app_tune, [8], costs, extras, library_eager=True)
    assert low.eager_limit == 512 - 16
    assert low.validation.default.median_s > eager.validation.default.median_s + 1e-4   # the handshake: 2 L
    given = whatif(traced_app, app_tune, [8], replace(costs, S=2000.0), extras, library_eager=True)
    assert given.eager_limit == 2000 and given.eager_from == "set by the costs"
    assert given.validation.default.median_s == pytest.approx(eager.validation.default.median_s)
