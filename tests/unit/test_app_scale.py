"""The what-if at scale (app/trace_pattern.py, sim/replicate.py,
app/scale.py) on a synthetic traced profile of 4 ranks, written in the
profiler's raw format and ingested: a ring of point-to-point messages, an
allreduce on all ranks, a broadcast on pairs of ranks (root 1) and a
barrier. Replicated to 8 ranks: operation counts, sizes, partners and
tags; the default and tuned selections' picks; the simulator runs it."""

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from mpiscope.app.scale import Selector, whatif
from mpiscope.app.trace_pattern import traced_pattern
from mpiscope.app.tune_cells import read_tune
from mpiscope.cli.main import build_parser
from mpiscope.common.errors import UsageError
from mpiscope.sim import binary
from mpiscope.sim.costs import SimCosts
from mpiscope.sim.replicate import (CALC, RECV, SEND, Algorithms, estimate_ops, offset, read_binary,
                                   write_schedule)
from mpiscope.sim.simulate import Extras, probe
from profilegen import write_profile
from snapshot import assert_snapshot

P = 4
SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def _trace(r):
    """(call, t0, t1, bytes, peer or root, communicator size, index in the rank's communicators:
    0 the world, 1 its pair)."""
    return [("MPI_Irecv", 0.0, 1e-6, 1000, (r - 1) % P, P, 0),
            ("MPI_Send", 2e-6, 1e-5, 1000, (r + 1) % P, P, 0),
            ("MPI_Wait", 2e-5, 3e-5, 0, -1, 0, -1),
            ("MPI_Allreduce", 1e-3, 1.1e-3, 64, -1, P, 0),
            ("MPI_Bcast", 2e-3, 2.1e-3, 128, 1, 2, 1),
            ("MPI_Barrier", 3e-3, 3.1e-3, 0, -1, P, 0)]


@pytest.fixture
def run(tmp_path):
    cells = [(c, q, "node", 1, 1, b, t1 - t0) for c, t0, t1, b, _, q, _ in _trace(0) if q > 0]
    comms = {r: [list(range(P)), [0, 1] if r < 2 else [2, 3]] for r in range(P)}
    return write_profile(tmp_path / "prof", P, 0.01, {r: cells for r in range(P)},
                         {r: _trace(r) for r in range(P)}, comms)


def _tune(path, rules, default_runs, ps=(4,)):
    path.mkdir()
    doc = {"library": "openmpi", "version": "4.1.4", "p": ps[0], "ps": list(ps),
           "rules": {c: {str(p): [{"start": s, "algorithm": a} for s, a in rs] for p, rs in by_p.items()}
                     for c, by_p in rules.items()},
           "default_runs": [{"collective": c, "p": p, "size": s, "algorithm": a, "as_forced": True}
                            for c, p, s, a in default_runs],
           "verification": {"cells": []}}
    (path / "tune.json").write_text(json.dumps(doc))
    return path


@pytest.fixture
def tune(tmp_path):
    return _tune(tmp_path / "tune", {"allreduce": {4: [(0, "default"), (1024, "ring")]},
                                     "bcast": {2: [(0, "binomial")], 4: [(0, "default")]}},
                 [("allreduce", 4, 8, "recursive_doubling"), ("allreduce", 4, 65536, "rabenseifner"),
                  ("bcast", 2, 8, "pipeline"), ("bcast", 4, 8, "binomial")], ps=(2, 4))


def test_offsets_agree_at_both_ends():
    for p in (2, 3, 4, 5, 8):
        for r in range(p):
            for q in range(p):
                if q != r:
                    d = offset(r, q, p)
                    assert -p / 2 <= d <= p / 2 and (r + d) % p == q
                    assert offset(q, r, p) == -d   # the partner's view points back


def test_the_traced_pattern(run):
    t = traced_pattern(run)
    assert t.pattern.p == P and sorted(map(tuple, t.pattern.comms)) == [(0, 1), (0, 1, 2, 3), (2, 3)]
    kinds = [k for k, _, _ in t.pattern.nodes[0]]
    assert kinds == ["calc", "recv", "send", "calc", "coll", "calc", "coll", "calc", "coll"]
    # computations: the gaps after the last completion before each post
    assert t.pattern.compute_s == pytest.approx([0 + (1e-3 - 3e-5) + 9e-4 + 9e-4] * P)
    assert t.comm_s == pytest.approx([3.1e-3 - 2.77e-3] * P)
    calls = {c.name: c for k, c, _ in t.pattern.nodes[3] if k == "coll"}
    assert calls["MPI_Bcast"].root == 1 and t.pattern.comms[calls["MPI_Bcast"].comm] == (2, 3)
    assert calls["MPI_Barrier"].bench is None and calls["MPI_Allreduce"].bench == "allreduce"
    assert calls["MPI_Allreduce"].size == 64


def _replicated(run, tmp_path, p_new, choose):
    pattern = traced_pattern(run).pattern
    path = tmp_path / "app.bin"
    info = write_schedule(pattern, p_new, choose, Algorithms(8192), path, 10 ** 6)
    return read_binary(path), info


def test_replication_to_8_ranks(run, tmp_path):
    algs = {"allreduce": "recursive_doubling", "bcast": "binomial"}
    ranks, info = _replicated(run, tmp_path, 8, lambda bench, q, size: algs[bench])
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


def test_rank_counts_must_be_multiples(run, tmp_path):
    with pytest.raises(UsageError, match="multiples of 4"):
        _replicated(run, tmp_path, 6, lambda *a: None)


def test_default_and_tuned_picks(tune, tmp_path):
    s = Selector(read_tune(tune))
    small = s.pick("allreduce", 8, 64)          # 8 ranks: the rules of 4; 64 B: the default's reading at 8 B
    assert (small.default, small.tuned, small.ours_default, small.ours_tuned) == \
        ("recursive_doubling", "recursive_doubling", "recursive_doubling", "recursive_doubling")
    large = s.pick("allreduce", 8, 4096)        # rule ring from 1024 B; the default read nearest: 64 KiB
    assert (large.default, large.tuned, large.ours_default, large.ours_tuned) == \
        ("rabenseifner", "ring", "rabenseifner", "ring")
    pipe = s.pick("bcast", 2, 128)
    assert (pipe.default, pipe.tuned, pipe.ours_default) == ("pipeline", "binomial", None)
    assert "pipeline has no algorithm of ours" in pipe.note
    assert s.pick("bcast", 8, 128).ours_tuned == "binomial"   # 8 ranks: the rules of 4 keep the default
    assert s.pick("alltoall", 8, 64).note.startswith("not tuned")
    unread = Selector(read_tune(_tune(tmp_path / "t2", {"allreduce": {4: [(0, "ring")]}}, [])))
    x = unread.pick("allreduce", 4, 64)
    assert (x.tuned, x.ours_default, x.ours_tuned) == ("ring", None, None) and "not read" in x.note


def test_whatif_validation_and_scale(run, tmp_path):
    tune = _tune(tmp_path / "ring", {"allreduce": {4: [(0, "ring")]}, "bcast": {2: [(0, "default")]}},
                 [("allreduce", 4, 64, "recursive_doubling"), ("bcast", 2, 128, "binomial")], ps=(2, 4))
    # Free messages: the simulated communication is the barrier's traced time alone.
    free = whatif(run, tune, [8], SimCosts(), Extras())
    assert free.validation.default.median_s == pytest.approx(1e-4, rel=1e-6)
    assert free.traced_comm_s == pytest.approx(3.3e-4)
    assert free.error == pytest.approx(1e-4 / 3.3e-4 - 1, rel=1e-6)
    # Latency-bound: ring allreduce (tuned) needs 2(p-1) steps, recursive doubling lg p: tuned is slower.
    w = whatif(run, tune, [8, 16], SimCosts(alpha_s=1e-5), Extras(replicates=3, seed=5))
    assert [x.p for x in w.points] == [8, 16]
    for x in w.points:
        assert x.speedup.median < 1 and x.tuned.median_s > x.default.median_s
        assert x.default.low_s <= x.default.median_s <= x.default.high_s
    assert w.points[1].nops > w.points[0].nops
    used = {(s.collective, s.p): s for s in w.selections}
    assert used[("allreduce", 16)].ours_tuned == "ring" and used[("bcast", 2)].ours_default == "binomial"
    assert w.kept == [{"call": "MPI_Barrier", "traced_s": pytest.approx(1e-4), "share": pytest.approx(1e-4 / 3.3e-4)}]
    assert json.dumps(w.to_dict())


def test_cli_text_json_and_bad_input(run, tune, capsys):
    argv = ["sim", "whatif", "--from-trace", run, "--tune", tune, "-p", "8", "--alpha", "20us", "--beta", "1GB/s"]
    args = build_parser().parse_args([str(a) for a in argv + ["--json"]])
    assert args.func(args) == 0
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, json.loads((SCHEMAS / "sim-whatif.schema.json").read_text()),
                        cls=jsonschema.Draft202012Validator)
    assert doc["traced_p"] == 4 and [x["p"] for x in doc["points"]] == [8]
    args = build_parser().parse_args([str(a) for a in argv])
    assert args.func(args) == 0
    assert_snapshot("sim-whatif.txt", capsys.readouterr().out.replace(str(tune), "TUNE"))
    for bad, message in ((["-p", "6"], "give multiples of 4"), (["-p", "8,x"], "distinct rank counts")):
        args = build_parser().parse_args([str(a) for a in argv[:-6] + bad + argv[-4:]])
        with pytest.raises(UsageError, match=message):
            args.func(args)


def test_operation_estimate_and_the_limit(run, tmp_path):
    """Every rank runs as many operations as the ranks probed here, so the estimate is exact."""
    algs = {"allreduce": "recursive_doubling", "bcast": "binomial"}
    _, info = _replicated(run, tmp_path, 8, lambda bench, q, size: algs[bench])
    pattern = traced_pattern(run).pattern
    estimate = estimate_ops(pattern, 8, lambda bench, q, size: algs[bench],
                            lambda b, a, q, s: probe(b, a, q, s, 8192)["max_ops_probed"])
    assert estimate == info["nops"]
    with pytest.raises(UsageError, match="passes 10 operations"):
        write_schedule(pattern, 8, lambda *a: None, Algorithms(8192), tmp_path / "x.bin", 10)
