"""The verification's defence against a busy node (no MPI): launches are
replaced by draws from known costs, and one tuned launch runs everything
several times slower, as happened when other work shared the node. Compared
with the other tuned launches it must stand out, be set aside and launched
again, and the verdicts must then be about the rules alone."""

import numpy as np
import pytest

from mpiscope.tune import tuner as T, verify as V
from mpiscope.tune.discover import DEFAULT
from mpiscope.tune.measure import TUNED, Samples
from mpiscope.tune.rules import chosen
from test_tune_search import SIZES, cost, fake_measure, ompi_catalog, plan


def fake_launches(monkeypatch, table, slow, seed=5):
    """Every launch draws its cells' times from cost() (a tuned one: of the
    algorithm `table`'s rule names); the launches numbered in `slow` (counted
    from 1) run everything 4x slower."""
    rng = np.random.default_rng(seed)
    done = []

    def launch(plan_, catalog, cells, label, samples, names, extra=None, plain=False):
        done.append(label)
        k = len(samples.runs) + 1
        samples.runs.append(f"run-{k}")
        factor = 4.0 if k in slow else 1.0
        for c, sizes in cells.items():
            for s in sizes:
                name = names[c]
                alg = chosen(table[c][plan_.np], s) if name == TUNED else name
                samples.add(c, name, s, factor * cost(alg, s, plan_.np) *
                            rng.lognormal(0, 0.03, 40), k)
    monkeypatch.setattr(T, "launch", launch)
    monkeypatch.setattr(T.Tuner, "_debugger_check", lambda *a: None)
    return done


def verified(monkeypatch, tmp_path, slow):
    fake_measure(monkeypatch)
    cfg = T.TuneConfig(collectives=["allreduce"], sizes=SIZES, verify_repeat=3)
    t = T.Tuning([plan(4)], ompi_catalog(), cfg, tmp_path, say=lambda *_: None)
    t.tuners[0].search()
    table, _ = t.table()
    done = fake_launches(monkeypatch, table, slow)
    rows, _, _ = t.tuners[0].verify(table, t.tuners[0].write_files(table))
    return t.tuners[0], rows, done


def test_a_busy_launch_is_set_aside_and_launched_again(monkeypatch, tmp_path):
    tuner, rows, done = verified(monkeypatch, tmp_path, slow={2})  # D T T D D T: the first tuned
    assert [(d["kind"], d["run"]) for d in tuner.disturbed] == [("tuned", "run-2")]
    assert tuner.disturbed[0]["factor"] == pytest.approx(4.0, rel=0.1)
    assert done.count("verify tuned") == 4 and done.count("verify default") == 3
    # what remains is about the rules: default-keeping cells agree, the ruled ones are faster
    assert all(r["verdict"] == "same" for r in rows if r["rule"] == DEFAULT)
    assert all(r["verdict"] == "tuned faster" for r in rows if r["rule"] != DEFAULT)


def test_without_a_busy_launch_nothing_is_set_aside(monkeypatch, tmp_path):
    tuner, rows, done = verified(monkeypatch, tmp_path, slow=set())
    assert tuner.disturbed == [] and done.count("verify tuned") == 3


def test_a_node_busy_throughout_is_not_relaunched_forever(monkeypatch, tmp_path):
    """Every relaunch of the tuned launch (8, 9, 10; 7 is the forced one) is
    slow again: verify_repeat relaunches at most."""
    tuner, rows, done = verified(monkeypatch, tmp_path, slow={2, 8, 9, 10})
    assert len(tuner.disturbed) == 3 and done.count("verify tuned") == 6


def test_launches_are_judged_against_their_own_kind():
    """Tuned 3x faster than default everywhere is a result, not a disturbance;
    one default launch 3x slower than the other two is one."""
    s = Samples()
    for k, (name, f) in enumerate([(DEFAULT, 1.0), (TUNED, 1 / 3), (TUNED, 1 / 3), (DEFAULT, 1.05),
                                   (DEFAULT, 3.0), (TUNED, 0.35)], 1):
        for size in (8, 16, 32):
            s.add("c", name, size, np.full(5, f * 1e-5), k)
    d, t = V.launch_factors(s, DEFAULT), V.launch_factors(s, TUNED)
    assert d[5] == pytest.approx(3.0 / 1.05) and d[1] == pytest.approx(1 / 1.05)
    assert max(t.values()) < 1.1
    s.drop_launch(5)
    assert V.launch_factors(s, DEFAULT) == {}   # two default launches left: not judged
