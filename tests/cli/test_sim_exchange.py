# SPDX-License-Identifier: BSD-3-Clause
"""Exchange messages: a send whose rank posts, with it, a receive from the
same peer (a sendrecv pair) is charged the measured exchange's time less
the pingpong's more (--exchange), on every model; any other message, a
one-way one or one answered after it arrived, as before. From a run: its
ring's floor less its pingpong's per size, used by `sim check` with
--exchange-from-ring. No MPI."""

import json

import numpy as np
import pytest

from mpiscope.common.errors import UsageError
from mpiscope.sim import binary
from mpiscope.sim.measured import exchange_shift

US = 1e-6

EXCHANGE = """num_ranks 2
rank 0 {
l0: send 1000b to 1 tag 0
l1: recv 1000b from 1 tag 0
}
rank 1 {
l0: send 1000b to 0 tag 0
l1: recv 1000b from 0 tag 0
}
"""

# The same two messages one after the other: rank 1 answers once rank 0's has arrived.
ANSWERED = """num_ranks 2
rank 0 {
l0: send 1000b to 1 tag 0
l1: recv 1000b from 1 tag 0
l1 requires l0
}
rank 1 {
l0: recv 1000b from 0 tag 0
l1: send 1000b to 0 tag 0
l1 requires l0
}
"""

# Every rank sends right and receives from the left at once: no pair exchanges.
RING3 = """num_ranks 3
""" + "".join(
    f"rank {r} {{\nl0: send 1000b to {(r + 1) % 3} tag 0\nl1: recv 1000b from {(r + 2) % 3} tag 0\n}}\n"
    for r in range(3)
)

HOCKNEY = ("--alpha-s", 10 * US, "--G", 1e-9)  # a lone 1000 B message: 11 us


def sim(tmp_path, text, *argv):
    path = tmp_path / "s.goal"
    path.write_text(text)
    return binary.simulate(["--schedule", path, *argv])["makespan_median_s"]


def shift_file(tmp_path, rows, name="exchange.txt"):
    path = tmp_path / name
    path.write_text("".join(f"{s} {d!r}\n" for s, d in rows))
    return path


def test_a_sendrecv_pair_is_charged_from_the_exchange_a_lone_message_is_not(tmp_path):
    x = shift_file(tmp_path, [(256, -3 * US), (4096, -5 * US)])
    at_1000 = -3 * US - 2 * US * (1000 - 256) / (4096 - 256)  # linear between the sizes
    assert sim(tmp_path, EXCHANGE, *HOCKNEY) == pytest.approx(11 * US, rel=1e-12)
    assert sim(tmp_path, EXCHANGE, *HOCKNEY, "--exchange", x) == pytest.approx(11 * US + at_1000, rel=1e-12)
    # an answered message and a ring's are lone messages: the pingpong's time each
    assert sim(tmp_path, ANSWERED, *HOCKNEY, "--exchange", x) == pytest.approx(22 * US, rel=1e-12)
    assert sim(tmp_path, RING3, *HOCKNEY, "--exchange", x) == sim(tmp_path, RING3, *HOCKNEY)
    # an exchange that costs more (large messages over TCP): its whole time grows, on every model
    more = shift_file(tmp_path, [(256, 4 * US)], "more.txt")
    assert sim(tmp_path, EXCHANGE, *HOCKNEY, "--exchange", more) == pytest.approx(15 * US, rel=1e-12)
    dist = tmp_path / "dist.txt"
    dist.write_text("3\n" + "".join(f"{s} 2e-5 2e-5 2e-5\n" for s in (8, 100000)))
    drawn = ("--dist", dist, "--G", 1e-9)
    assert sim(tmp_path, EXCHANGE, *drawn, "--exchange", x) == pytest.approx(20 * US + at_1000, rel=1e-12)
    assert sim(tmp_path, ANSWERED, *drawn, "--exchange", x) == pytest.approx(40 * US, rel=1e-12)
    shaped = ("--L", 30 * US, "--G", 1e-8, "--burst", 500)  # 30 us + 500 B at 10 ns/B
    assert sim(tmp_path, EXCHANGE, *shaped, "--exchange", x) == pytest.approx(35 * US + at_1000, rel=1e-12)


def test_bad_exchange_files_are_refused(tmp_path):
    for rows, why in (("256\n", "a size and a time"), ("4096 1e-6\n256 1e-6\n", "sizes must increase")):
        path = tmp_path / "bad.txt"
        path.write_text(rows)
        with pytest.raises(UsageError, match=why):
            sim(tmp_path, EXCHANGE, *HOCKNEY, "--exchange", path)


def test_a_runs_ring_gives_the_exchange_and_sim_check_uses_it(tmp_path, capsys):
    """A 2-rank run whose ring (an exchange at 2 ranks) takes 20 us less than
    its pingpong at every size, but for a stalled repetition: the shift is
    -20 us per size (the floors), and recursive
    doubling's 2-rank allgather (one exchange) is simulated 20 us below the
    pingpong's line with --exchange-from-ring, on it without."""
    from mpiscope.cli.main import build_parser
    from mpiscope.common.errors import UsageError
    from mpiscope.store.ingest import ingest
    from rawgen import RunBuilder, SeriesSpec, context_for

    alpha, beta = 50 * US, 80e-9
    out = tmp_path / "out"
    run_dir = out / "20240303-000000-abab"
    rb = RunBuilder(run_dir, nranks=2)
    for size in (256, 1024, 4096, 16384):
        rb.add(SeriesSpec("pingpong", size, [alpha + beta * size] * 5))
        rb.add(SeriesSpec("ring", size, [alpha + beta * size - 20 * US] * 9 + [0.01]))  # one repetition stalled
    rb.add(SeriesSpec("allgather", 1024, [1e-3] * 5, algo="recursive_doubling"))
    rb.write()
    ctx = context_for(run_id=run_dir.name, created="2024-03-03T00:00:00+00:00", np=2)
    (run_dir / "context.json").write_text(json.dumps(ctx))
    ingest(run_dir, ctx)
    sizes, shift = exchange_shift(run_dir)
    assert list(sizes) == [256, 1024, 4096, 16384]
    assert np.allclose(shift, -20 * US, rtol=1e-6)

    def check(*extra):
        args = build_parser().parse_args(["sim", "check", run_dir.name, "--out", str(out), "--json", *map(str, extra)])
        assert args.func(args) == 0
        return json.loads(capsys.readouterr().out)

    lone, exchanged = check(), check("--exchange-from-ring")
    assert (lone["exchange"], exchanged["exchange"]) == (False, True)
    line = alpha + beta * 1024
    assert lone["rows"][0]["simulated_s"] == pytest.approx(line, rel=1e-3)
    assert exchanged["rows"][0]["simulated_s"] == pytest.approx(line - 20 * US, rel=1e-3)
    # the shift needs the pingpong's costs: with --p2p ring every message is the ring's already
    args = build_parser().parse_args(
        ["sim", "check", run_dir.name, "--out", str(out), "--p2p", "ring", "--exchange-from-ring"]
    )
    with pytest.raises(UsageError, match="--p2p pingpong"):
        args.func(args)
    # drawn from the pingpong's times, an exchange shifted as much
    drawn = check("--sample", "--replicates", 3, "--exchange-from-ring")
    assert drawn["exchange"] is True
    assert drawn["rows"][0]["simulated_s"] == pytest.approx(line - 20 * US, rel=1e-9)
    assert check("--sample", "--replicates", 3)["rows"][0]["simulated_s"] == pytest.approx(line)
