# SPDX-License-Identifier: BSD-3-Clause
"""The simulator's model on hand-written GOAL schedules (LogGP terms, MPI
matching, rendezvous, CPU overlap, uplinks, sampling), the schedule formats,
and the `mpiscope sim` commands' errors. No MPI."""

import json

import numpy as np
import pytest

from mpiscope.common.errors import UsageError
from mpiscope.sim import binary
from runcli import mpiscope

US = 1e-6


def goal(tmp_path, text, name="s.goal"):
    path = tmp_path / name
    path.write_text(text)
    return path


def sim(path, *argv):
    return binary.simulate(["--schedule", path, *argv])


ONE_MESSAGE = """num_ranks 2
rank 0 {
l0: send 1000b to 1 tag 5
}
rank 1 {
l0: recv 1000b from 0 tag 5
}
"""

def test_one_message_costs_loggp_terms(tmp_path):
    path = goal(tmp_path, ONE_MESSAGE)
    d = sim(path, "--L", 3e-6, "--o-s", 1e-6, "--o-r", 2e-6, "--G", 1e-9)
    assert d["makespan_median_s"] == pytest.approx(1e-6 + 1000e-9 + 3e-6 + 2e-6, rel=1e-12)
    # rendezvous: request L, clear-to-send L, then the data and L again
    d = sim(path, "--L", 3e-6, "--o-s", 1e-6, "--o-r", 2e-6, "--G", 1e-9, "--S", 100)
    assert d["replicates"][0]["rendezvous"] == 1
    assert d["makespan_median_s"] == pytest.approx(1e-6 + 3 * 3e-6 + 1000e-9 + 2e-6, rel=1e-12)


def test_matching_by_tag_with_an_unexpected_message(tmp_path):
    # rank 1 waits for tag 2 first, so tag 1 arrives unexpected; no deadlock
    path = goal(tmp_path, """num_ranks 2
rank 0 {
l0: send 8b to 1 tag 1
l1: send 8b to 1 tag 2
l1 requires l0
}
rank 1 {
l0: recv 8b from 0 tag 2
l1: recv 8b from 0 tag 1
l1 requires l0
}
""")
    d = sim(path, "--alpha-s", 1e-6)
    assert d["replicates"][0]["unexpected"] == 1
    assert d["makespan_median_s"] == pytest.approx(2e-6)


def test_a_receive_without_its_send_deadlocks_with_a_clear_error(tmp_path):
    bad = goal(tmp_path, ONE_MESSAGE.replace("from 0 tag 5", "from 0 tag 7"))
    with pytest.raises(UsageError, match="deadlock"):
        sim(bad)


UNEVEN = """num_ranks 3
rank 0 {
l0: send 8b to 1 tag 0
l1: send 8b to 2 tag 0
l1 requires l0
}
rank 1 {
l0: recv 8b from 0 tag 0
l1: calc 3000
l2: send 8b to 2 tag 1
l1 requires l0
l2 requires l1
}
rank 2 {
l0: recv 8b from 0 tag 0
l1: recv 8b from 1 tag 1
l1 requires l0
}
"""


def test_trace_and_critical_path_name_each_ranks_own_operations(tmp_path):
    """Ranks with different numbers of operations (the simulator holds the
    k-th operations of all ranks side by side): the trace lists them rank by
    rank in their order, and of the two operations that end last (rank 1's
    send and rank 2's receive, both at 5 µs) the path starts at the first
    in rank order."""
    path = goal(tmp_path, UNEVEN)
    d = binary.simulate(["--schedule", path, "--alpha-s", 1e-6, "--critical-path", 10,
                         "--trace", tmp_path / "t.csv"])
    assert d["makespan_median_s"] == pytest.approx(5e-6)
    rows = [r.split(",") for r in (tmp_path / "t.csv").read_text().splitlines()[1:]]
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        ("0", "0", "0", "1", "0"), ("0", "1", "0", "2", "0"), ("1", "0", "1", "0", "0"),
        ("1", "1", "0", "2", "1"), ("2", "0", "1", "0", "0"), ("2", "1", "1", "1", "1")]
    assert [float(r[7]) / US for r in rows] == pytest.approx([1, 2, 1, 5, 2, 5])
    assert [(c["rank"], c["index"], c["op"]) for c in d["critical_path"]] == [
        (1, 2, "send"), (1, 1, "calc"), (1, 0, "recv"), (0, 0, "send")]


def test_a_deadlock_names_the_first_stuck_operation_in_rank_order(tmp_path):
    # stuck: rank 0's 4th operation and rank 1's 2nd (held first: its step is earlier)
    path = goal(tmp_path, """num_ranks 2
rank 0 {
l0: calc 1
l1: calc 1
l2: recv 8b from 1 tag 9
l3: calc 1
l3 requires l2
}
rank 1 {
l0: recv 8b from 0 tag 8
l1: calc 1
l1 requires l0
}
""")
    with pytest.raises(UsageError, match="operation 3 of rank 0 .* never starts"):
        sim(path, "--alpha-s", 1e-6)


def test_cpu_is_shared_by_sends_and_computation(tmp_path):
    # two sends after a 5 µs computation on one CPU: o_s each, one after the other
    path = goal(tmp_path, """num_ranks 3
rank 0 {
l0: calc 5000
l1: send 8b to 1 tag 0
l1 requires l0
l2: send 8b to 2 tag 0
l2 requires l0
}
rank 1 {
l0: recv 8b from 0 tag 0
}
rank 2 {
l0: recv 8b from 0 tag 0
}
""")
    d = sim(path, "--o-s", 1e-6, "--per-rank")
    assert d["finish_s"][1] == pytest.approx(6e-6) and d["finish_s"][2] == pytest.approx(7e-6)


def test_text_and_binary_schedules_simulate_alike(tmp_path):
    for fmt in ("goal", "bin"):
        binary.schedule(["--bench", "allgather", "--algo", "bruck", "-p", 7, "--size", 100, "--format", fmt,
                         "-o", tmp_path / f"s.{fmt}"])
    a, b = (sim(tmp_path / f"s.{f}", "--alpha-s", 1e-6, "--beta-s", 1e-9, "--L", 1e-7)["makespan_median_s"]
            for f in ("goal", "bin"))
    assert a == b > 0
    assert (tmp_path / "s.bin").read_bytes()[:8] == b"MPSIMSC1"


def test_uplink_shared_by_traffic_between_switches(tmp_path):
    # ranks 0, 1 on switch 0 send at once to ranks 2, 3 on switch 1
    path = goal(tmp_path, """num_ranks 4
rank 0 {
l0: send 1000b to 2 tag 0
}
rank 1 {
l0: send 1000b to 3 tag 0
}
rank 2 {
l0: recv 1000b from 0 tag 0
}
rank 3 {
l0: recv 1000b from 1 tag 0
}
""")
    flat = sim(path, "--G", 1e-9)["makespan_median_s"]
    shared = sim(path, "--G", 1e-9, "--ranks-per-host", 1, "--hosts-per-switch", 2, "--uplink-G", 1e-9)
    assert flat == pytest.approx(1e-6)
    assert shared["makespan_median_s"] == pytest.approx(2e-6)  # the second waits for the uplink


def test_sampled_costs_are_seeded_and_give_an_interval(tmp_path):
    binary.schedule(["--bench", "allreduce", "--algo", "ring", "-p", 6, "--size", 4096, "--format", "bin",
                     "-o", tmp_path / "r.bin"])
    dist = tmp_path / "dist.txt"
    q = np.linspace(1, 3, 11) * US
    dist.write_text("11\n8 " + " ".join(map(str, q)) + "\n65536 " + " ".join(map(str, q * 10)) + "\n")
    run = lambda seed: sim(tmp_path / "r.bin", "--dist", dist, "--replicates", 9, "--seed", seed)  # noqa: E731
    a, b, c = run(1), run(1), run(2)
    spans = [r["makespan_s"] for r in a["replicates"]]
    assert spans == [r["makespan_s"] for r in b["replicates"]]
    assert spans != [r["makespan_s"] for r in c["replicates"]]
    assert len(set(spans)) > 1
    # 10 sequential steps of one message each: between all-fastest and all-slowest
    per = (1 + (4096 / 6 - 8) / (65536 - 8) * 9)
    assert 10 * per * 1 * US < min(spans) and max(spans) < 10 * per * 3 * US


def test_bad_schedules_are_refused(tmp_path):
    for text, what in (("rank 0 {\n}\n", "num_ranks"),
                       ("num_ranks 1\nrank 0 {\nl0: jump 3b\n}\n", "unknown operation"),
                       ("num_ranks 2\nrank 0 {\nl0: send 8b to 5 tag 0\n}\nrank 1 {\n}\n", "rank 5"),
                       ("num_ranks 1\nrank 0 {\nl1 requires l0\n}\n", "label")):
        with pytest.raises(UsageError, match=what):
            sim(goal(tmp_path, text))


@pytest.mark.parametrize("op", ["send 18446744073709551617b to 0 tag 0", "send 9007199254740994b to 0 tag 0",
                                "send nanb to 0 tag 0", "recv 1e999b from 0 tag 0", "calc nan", "calc inf",
                                "calc -1", "calc 1e999"])
def test_sizes_and_times_beyond_a_double_or_not_numbers_are_refused(op, tmp_path):
    """Sizes and computations from 0 to 2^53 (a double's exact whole numbers); NaN,
    infinities, negative or larger numbers are no schedule."""
    with pytest.raises(UsageError, match=r"line 3: .* is not a size: a number from 0 to 2\^53"):
        sim(goal(tmp_path, f"num_ranks 1\nrank 0 {{\nl0: {op}\n}}\n"))


def test_the_largest_size_is_taken(tmp_path):
    d = sim(goal(tmp_path, "num_ranks 1\nrank 0 {\nl0: calc 9007199254740992\n}\n"))
    assert d["makespan_median_s"] == pytest.approx(9007199254740992e-9)


def test_cli_schedule_run_and_errors(tmp_path):
    out = tmp_path / "ring.goal"
    r = mpiscope("sim", "schedule", "--bench", "allgather", "--algo", "ring", "-p", 5, "--size", "1K",
                 "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_text().startswith("num_ranks 5\n")
    r = mpiscope("sim", "schedule", "--bench", "allgather", "--algo", "ring", "-p", 5, "--size", "1K",
                 "-o", out)
    assert r.returncode == 2 and "exists" in r.stderr
    r = mpiscope("sim", "schedule", "--bench", "allgather", "--algo", "nope", "-p", 5, "--size", "1K",
                 "-o", tmp_path / "x.goal")
    assert r.returncode == 2 and "ring" in r.stderr and not (tmp_path / "x.goal").exists()
    r = mpiscope("sim", "run", out, "--alpha", "1us", "--beta", "1ns/B", "--json", "--critical-path", 3,
                 "--chart", tmp_path / "c.svg")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["median_s"] == pytest.approx(4 * (1e-6 + 1024e-9))
    assert len(doc["critical_path"]) == 3 and (tmp_path / "c.svg").read_text().count("<svg") == 1
    r = mpiscope("sim", "run", out)
    assert r.returncode == 2 and "costs" in r.stderr


def test_report_section_simulates_a_runs_algorithms(tmp_path):
    """A synthetic run (no MPI): pingpong α + β·m and two allgather
    algorithms measured at exactly their Hockney times; the report's
    simulation section puts them side by side (errors ~0) with a chart."""
    from mpiscope.report.sim_data import sim_views
    from mpiscope.store.ingest import ingest, load
    from mpiscope.store.series import all_series_samples
    from rawgen import RunBuilder, SeriesSpec, context_for

    alpha, beta, p = 20 * US, 1e-9, 4
    run_dir = tmp_path / "20240303-000000-cccc"
    rb = RunBuilder(run_dir, nranks=p)
    for size in (8, 1024, 65536):
        rb.add(SeriesSpec("pingpong", size, [alpha + beta * size] * 6))
        # ring: (p − 1) messages; fan_in_fan_out slower: measured twice the ring's
        rb.add(SeriesSpec("allgather", size, [(p - 1) * (alpha + beta * size)] * 6, algo="ring"))
        rb.add(SeriesSpec("allgather", size, [6 * (p - 1) * (alpha + beta * size)] * 6, algo="fan_in_fan_out"))
    rb.write()
    ctx = context_for(run_id=run_dir.name, created="2024-03-03T00:00:00+00:00", np=p)
    (run_dir / "context.json").write_text(json.dumps(ctx))
    ingest(run_dir, ctx)
    table, run = load(run_dir)
    views = sim_views([("A", run_dir, table, run)], {"A": all_series_samples(table, run)})
    assert len(views) == 1
    v = views[0]
    ring = [r for r in v["rows"] if r["algo"] == "ring"]
    assert len(ring) == 3 and all(abs(r["rel_error"]) < 0.02 for r in ring), ring
    assert all(k["best_measured"] == k["best_simulated"] == "ring" for k in v["rankings"])
    assert v["chart"]["svg"].count("<svg") == 1


def test_a_traced_repetition_becomes_a_schedule_with_its_gaps(tmp_path):
    """Two ranks as traced (µs): rank 0 sends at 1, completes at 2, posts its
    receive at 2.5; rank 1 receives from 0 to 2, then sends at 3. With free
    messages the schedule replays the gaps: 1 µs to the first send, 0.5 µs
    after the send before the receive, 1 µs after the receive before rank
    1's send: rank 1 sends at 2 µs, so rank 0's receive ends at 2 µs."""
    import pyarrow as pa

    from mpiscope.sim.from_trace import goal_from_events, write_goal

    ev = pa.table({"rank": [0, 0, 1, 1], "seq": [0, 1, 0, 1], "op": ["send", "recv", "recv", "send"],
                   "peer": [1, 1, 0, 0], "tag": [100, 100, 100, 100], "bytes": [64] * 4,
                   "t_post": [1e-6, 2.5e-6, 0.0, 3e-6], "t_done": [2e-6, 4e-6, 2e-6, 3.5e-6]})
    text = goal_from_events(ev, 2)
    assert "l0: calc 1000\nl1: send 64b to 1 tag 100\nl1 requires l0\nl2: calc 500\nl2 requires l1" in text
    path = write_goal(text, tmp_path / "t.goal")
    d = sim(path, "--per-rank")
    assert d["finish_s"] == pytest.approx([2e-6, 2e-6])


def test_costs_drawn_from_a_run_and_its_arrival_skew(tmp_path, capsys):
    """--from-run with --sample draws message times from the run's pingpong
    (between 10 and 30 µs here), --skew-from-run each rank's start from the
    run's arrival skew; both through the command line, in process."""
    from mpiscope.cli.main import build_parser
    from mpiscope.store.ingest import ingest
    from rawgen import RunBuilder, SeriesSpec, context_for

    out = tmp_path / "out"
    run_dir = out / "20240303-000000-dddd"
    rb = RunBuilder(run_dir, nranks=4)
    rng = np.random.default_rng(5)
    for size in (8, 4096):
        rb.add(SeriesSpec("pingpong", size, list(rng.uniform(10, 30, 12) * US)))
        rb.add(SeriesSpec("allgather", size, [50 * US] * 6, algo="ring"))
    rb.write()
    ctx = context_for(run_id=run_dir.name, created="2024-03-03T00:00:00+00:00", np=4)
    (run_dir / "context.json").write_text(json.dumps(ctx))
    ingest(run_dir, ctx)
    sched = tmp_path / "ring.bin"
    binary.schedule(["--bench", "allgather", "--algo", "ring", "-p", 4, "--size", 8, "--format", "bin",
                     "-o", sched])

    def run(*extra):
        args = build_parser().parse_args(["sim", "run", str(sched), "--from-run", run_dir.name, "--out",
                                          str(out), "--json", *map(str, extra)])
        assert args.func(args) == 0
        return json.loads(capsys.readouterr().out)

    doc = run("--sample", "--replicates", 15, "--seed", 3)
    spans = doc["makespans_s"]
    assert len(set(spans)) > 1 and doc["low_s"] <= doc["median_s"] <= doc["high_s"]
    assert all(3 * 10 * US <= t <= 3 * 30 * US for t in spans)  # three steps of one drawn message each
    assert run("--sample", "--replicates", 15, "--seed", 3)["makespans_s"] == spans
    plain = run()["median_s"]
    skewed = run("--skew-from-run", "--replicates", 5)
    assert min(skewed["makespans_s"]) >= plain

    def check(*extra):
        args = build_parser().parse_args(["sim", "check", run_dir.name, "--out", str(out), "--json",
                                          *map(str, extra)])
        assert args.func(args) == 0
        return json.loads(capsys.readouterr().out)

    # costs named by --from-run (here the same run) equal the run's own; its lateness only delays
    own = check("--sample", "--replicates", 5)
    named = check("--from-run", run_dir.name, "--sample", "--replicates", 5)
    assert [r["simulated_s"] for r in own["rows"]] == [r["simulated_s"] for r in named["rows"]]
    late, fitted = check("--replicates", 5, "--skew-from-run"), check()
    assert all(a["simulated_s"] >= b["simulated_s"] > 0 for a, b in zip(late["rows"], fitted["rows"]))


FAN_OUT = """num_ranks 3
rank 0 {
l0: send 1000b to 1 tag 0
l1: send 1000b to 2 tag 0
}
rank 1 {
l0: recv 1000b from 0 tag 0
}
rank 2 {
l0: recv 1000b from 0 tag 0
}
"""


def test_drawn_times_are_latency_beyond_the_bytes_on_the_wire(tmp_path):
    """A drawn time is a message's whole one-way time; with G only G·m of it
    keeps the sender's channel busy: rank 0's second message leaves 1 µs
    (1000 B × 1 ns/B) after the first and lands 5 µs after leaving."""
    path = goal(tmp_path, FAN_OUT)
    dist = tmp_path / "dist.txt"
    dist.write_text("3\n" + "\n".join(f"{s} 5e-6 5e-6 5e-6" for s in (8, 100000)) + "\n")
    d = sim(path, "--dist", dist, "--G", 1e-9, "--per-rank")
    assert d["finish_s"][1] == pytest.approx(5e-6, rel=1e-12)
    assert d["finish_s"][2] == pytest.approx(6e-6, rel=1e-12)
    assert d["finish_s"][0] == pytest.approx(2e-6, rel=1e-12)  # its sends end with their bytes
    # without G the whole drawn time holds the channel: one message after the other
    assert sim(path, "--dist", dist, "--per-rank")["finish_s"][2] == pytest.approx(10e-6, rel=1e-12)
    # a drawn time shorter than G·m (a link's burst let it through) holds the sender's channel and the
    # receiver's link no longer than itself: rank 0's two messages land at 0.5 and 1 µs, and two in a row
    # into one rank end at 1 µs
    dist.write_text("3\n" + "\n".join(f"{s} 5e-7 5e-7 5e-7" for s in (8, 100000)) + "\n")
    assert sim(path, "--dist", dist, "--G", 1e-9, "--per-rank")["finish_s"][1:] == pytest.approx([5e-7, 1e-6],
                                                                                                  rel=1e-12)
    chain = goal(tmp_path, ONE_MESSAGE.replace("l0: send 1000b to 1 tag 5", "l0: send 1000b to 1 tag 5\n"
                                               "l1: send 1000b to 1 tag 6\nl1 requires l0")
                 .replace("l0: recv 1000b from 0 tag 5", "l0: recv 1000b from 0 tag 5\nl1: recv 1000b from 0 tag 6"),
                 "chain.goal")
    assert sim(chain, "--dist", dist, "--G", 1e-9, "--per-rank")["finish_s"][1] == pytest.approx(1e-6, rel=1e-12)


def test_fair_sharing_of_a_send_channel(tmp_path):
    """With --fair a rank's messages in flight share its channel equally:
    two 1000 B sends at 1 ns/B both end at 2 µs (one after the other: 1 and
    2 µs); a second send 0.5 µs after the first leaves the first 1 µs more."""
    path = goal(tmp_path, FAN_OUT)
    fifo = sim(path, "--G", 1e-9, "--per-rank")["finish_s"]
    fair = sim(path, "--G", 1e-9, "--fair", "--per-rank")["finish_s"]
    assert fifo[1:] == pytest.approx([1e-6, 2e-6], rel=1e-12)
    assert fair[1:] == pytest.approx([2e-6, 2e-6], rel=1e-12)
    late = goal(tmp_path, FAN_OUT.replace("l1: send 1000b to 2 tag 0", "l1: send 1000b to 2 tag 0\nl2: calc 500\nl1 requires l2"),
                "late.goal")
    d = sim(late, "--G", 1e-9, "--L", 1e-6, "--fair", "--per-rank")["finish_s"]
    assert d[1:] == pytest.approx([1.5e-6 + 1e-6, 2e-6 + 1e-6], rel=1e-12)
    # with drawn times the latency beyond the bytes follows the shared channel
    dist = tmp_path / "dist.txt"
    dist.write_text("3\n" + "\n".join(f"{s} 5e-6 5e-6 5e-6" for s in (8, 100000)) + "\n")
    d = sim(path, "--dist", dist, "--G", 1e-9, "--fair", "--per-rank")["finish_s"]
    assert d[1:] == pytest.approx([6e-6, 6e-6], rel=1e-12)


def test_rendezvous_that_carries_its_first_part(tmp_path):
    """--S-first: a rendezvous message sends its first part with the request
    and the rest after the answer, behind what the channel took meanwhile
    (Open MPI's TCP): rank 0's first 1000 B message waits for the second's
    900 B part, so it ends at 1.9 µs (1.0 µs when the request carries nothing)."""
    path = goal(tmp_path, FAN_OUT)
    plain = sim(path, "--G", 1e-9, "--S", 100, "--per-rank")
    first = sim(path, "--G", 1e-9, "--S", 100, "--S-first", 900, "--per-rank")
    assert plain["finish_s"][1:] == pytest.approx([1e-6, 2e-6], rel=1e-12)
    assert first["finish_s"][1:] == pytest.approx([1.9e-6, 2e-6], rel=1e-12)
    assert first["replicates"][0]["rendezvous"] == 2
    # one message alone: request with 600 B (L), answer (L), the other 400 B (L): as with a bare request
    one = goal(tmp_path, ONE_MESSAGE, "one.goal")
    d = sim(one, "--L", 3e-6, "--o-s", 1e-6, "--o-r", 2e-6, "--G", 1e-9, "--S", 100, "--S-first", 600)
    assert d["makespan_median_s"] == pytest.approx(1e-6 + 3 * 3e-6 + 1000e-9 + 2e-6, rel=1e-12)
    with pytest.raises(UsageError, match="--fair"):
        sim(path, "--G", 1e-9, "--S", 100, "--S-first", 900, "--fair")


FAN_IN = """num_ranks 3
rank 0 {
l0: send 1000b to 2 tag 0
}
rank 1 {
l0: send 1000b to 2 tag 0
}
rank 2 {
l0: recv 1000b from 0 tag 0
l1: recv 1000b from 1 tag 0
}
"""


def test_a_shaped_link_lets_a_burst_through_an_idle_link_only(tmp_path):
    """--burst 600 at 1 ns/B: a lone 1000 B message passes 600 B at once and
    400 B at the rate (0.4 µs + L); sent right after it, a second finds the
    bucket empty (1 µs more); after 1 µs of idle the bucket is full again."""
    one = goal(tmp_path, ONE_MESSAGE, "one.goal")
    assert sim(one, "--G", 1e-9, "--L", 3e-6, "--burst", 600)["makespan_median_s"] == pytest.approx(3.4e-6, rel=1e-12)
    assert sim(one, "--G", 1e-9, "--L", 3e-6, "--burst", 2000)["makespan_median_s"] == pytest.approx(3e-6, rel=1e-12)
    two = ONE_MESSAGE.replace("l0: send 1000b to 1 tag 5", "l0: send 1000b to 1 tag 5\nl1: send 1000b to 1 tag 6\n"
                              "GAP").replace("l0: recv 1000b from 0 tag 5",
                                             "l0: recv 1000b from 0 tag 5\nl1: recv 1000b from 0 tag 6")
    chain = goal(tmp_path, two.replace("GAP", "l1 requires l0"), "chain.goal")
    d = sim(chain, "--G", 1e-9, "--L", 3e-6, "--burst", 600, "--per-rank")
    assert d["finish_s"][1] == pytest.approx(0.4e-6 + 1e-6 + 3e-6, rel=1e-12)
    idle = goal(tmp_path, two.replace("GAP", "l2: calc 1000\nl2 requires l0\nl1 requires l2"), "idle.goal")
    d = sim(idle, "--G", 1e-9, "--L", 3e-6, "--burst", 600, "--per-rank")
    assert d["finish_s"][1] == pytest.approx(0.4e-6 + 1e-6 + 0.4e-6 + 3e-6, rel=1e-12)
    # two senders into one receiver: its link passes its bucket at once, then one rate for both
    d = sim(goal(tmp_path, FAN_IN, "in.goal"), "--G", 1e-9, "--burst", 600, "--per-rank")
    assert d["finish_s"][2] == pytest.approx(1.4e-6, rel=1e-12)
    assert sim(goal(tmp_path, FAN_IN, "in.goal"), "--G", 1e-9, "--per-rank")["finish_s"][2] == pytest.approx(2e-6)
    for bad in (("--burst", 600), ("--G", 1e-9, "--burst", 600, "--fair")):
        with pytest.raises(UsageError, match="--burst needs --G"):
            sim(one, *bad)


def test_a_shaped_link_is_fitted_to_pingpong(tmp_path, capsys):
    """--shaped-link: pingpong medians of L + G·max(0, m − burst) (10 µs, 80
    ns/B, 3000 B) give back G and the burst from the line through the larger
    half of the sizes, and L from the smallest; --p2p ring takes L from ring."""
    from mpiscope.cli.main import build_parser
    from mpiscope.store.ingest import ingest
    from rawgen import RunBuilder, SeriesSpec, context_for

    L, G, B = 10 * US, 80e-9, 3000
    out = tmp_path / "out"

    def make_run(name, pingpong):
        run_dir = out / name
        rb = RunBuilder(run_dir, nranks=4)
        for size, t in pingpong.items():
            rb.add(SeriesSpec("pingpong", size, [t] * 5))
            rb.add(SeriesSpec("ring", size, [3 * L + G * size] * 5))
        rb.add(SeriesSpec("allgather", 16384, [1e-3] * 5, algo="ring"))
        rb.write()
        ctx = context_for(run_id=run_dir.name, created="2024-03-03T00:00:00+00:00", np=4)
        (run_dir / "context.json").write_text(json.dumps(ctx))
        ingest(run_dir, ctx)
        return run_dir

    run_dir = make_run("20240303-000000-eeee", {m: L + G * max(0, m - B) for m in (256, 1024, 4096, 16384, 65536)})

    def check(*extra, run=run_dir.name):
        args = build_parser().parse_args(["sim", "check", run, "--out", str(out), "--json",
                                          "--shaped-link", *map(str, extra)])
        assert args.func(args) == 0
        return json.loads(capsys.readouterr().out)["costs"]

    c = check()
    assert (c["L"], c["G"], c["burst"], c["alpha_s"]) == pytest.approx((L, G, B, 0), rel=1e-6, abs=1e-12)
    assert check("--p2p", "ring")["L"] == pytest.approx(3 * L + G * 256)
    assert check("--burst", 100)["burst"] == 100
    # ten sizes: the line goes through the larger five, and one of them stalled 3x does not move it
    stalled = {256 * 2**k: L + G * max(0, 256 * 2**k - B) for k in range(10)}
    stalled[65536] *= 3
    c = check(run=make_run("20240303-000000-dddd", stalled).name)
    assert (c["G"], c["burst"]) == pytest.approx((G, B), rel=0.02)
    few = make_run("20240303-000000-ffff", {256: L, 4096: L + G * 1096, 65536: L + G * 62536})
    with pytest.raises(UsageError, match="at 4 sizes or more, the run has 3"):
        check(run=few.name)
    flat = make_run("20240303-000000-aaaa", {256: L, 1024: L, 4096: L, 16384: L})
    with pytest.raises(UsageError, match="does not grow"):
        check(run=flat.name)
    machine = tmp_path / "machine.json"
    machine.write_text(json.dumps({"alpha": L, "beta": G}))
    for bad, why in ((("--sample",), "not with --sample"), (("--machine", machine), "not both")):
        args = build_parser().parse_args(["sim", "check", run_dir.name, "--out", str(out), "--shaped-link",
                                          "--from-run", run_dir.name, *map(str, bad)])
        with pytest.raises(UsageError, match=why):
            args.func(args)


def test_a_rendezvous_answer_waits_behind_what_the_receiver_is_sending(tmp_path):
    """The clear-to-send leaves the receiver's channel after the data queued
    there (a FIFO queue, as a host's transmit queue): rank 1 answers rank 0's
    request (at 0.1 µs) only once its own 500 B are out (0.5 µs), so rank 0's
    1000 B arrive at 0.5 + 0.1 + 1 + 0.1 = 1.7 µs, alike when the channel is
    shared fairly."""
    path = goal(tmp_path, """num_ranks 3
rank 0 {
l0: send 1000b to 1 tag 0
}
rank 1 {
l0: recv 1000b from 0 tag 0
l1: send 500b to 2 tag 1
}
rank 2 {
l0: recv 500b from 1 tag 1
}
""")
    for mode in ((), ("--fair",)):
        d = sim(path, "--G", 1e-9, "--L", 1e-7, "--S", 600, "--per-rank", *mode)
        assert d["finish_s"][1] == pytest.approx(1.7e-6, rel=1e-12), mode
