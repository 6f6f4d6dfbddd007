# SPDX-License-Identifier: BSD-3-Clause
"""Simulated against measured on an emulated cluster (4 hosts at Fast
Ethernet), costs fitted from the same run's point-to-point data: two
allgather algorithms whose times differ several-fold, at four sizes (a
shaped link is fitted to pingpong at four or more). What holds on any
machine: every measured cell is simulated with a finite, positive time from
the run's own costs, by times drawn from its ring and by a shaped link
fitted to its pingpong; where the link decides (16 and 64 KiB) the shaped
link ranks ring first (fan-in-fan-out's root sends four times the bytes of
a ring rank) and its time is within 4× of measured (a loose bound). How
close simulated comes to measured depends on the machine's load (its CPUs
carry the links' emulation too), so the 15% goal lives in
bench/sim_validate.py. Needs root."""

import json
import os

import pytest

from runcli import mpiscope

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="emulated clusters need root")


def test_simulated_allgather_tracks_the_cluster(tmp_path):
    name = f"sc{os.getpid() % 100000}"
    r = mpiscope("cluster", "up", name, "--hosts", 4, "--preset", "fast-ethernet")
    assert r.returncode == 0, r.stderr
    try:
        r = mpiscope("run", "--cluster", name, "-n", 4, "--bench", "pingpong,ring,allgather",
                     "--algo", "ring,fan_in_fan_out", "--sizes", "1K,4K,16K,64K", "--reps-min", 5,
                     "--reps-max", 10, "--time-budget", 1, out=tmp_path)
        assert r.returncode == 0, r.stderr[-3000:]
    finally:
        mpiscope("cluster", "down", name)
    r = mpiscope("sim", "check", "latest", "--p2p", "ring", "--sample", "--replicates", 9, "--json",
                 out=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    cells = {(c["algo"], c["size"]): c for c in doc["rows"]}
    assert set(cells) == {(a, s) for a in ("ring", "fan_in_fan_out") for s in (1024, 4096, 16384, 65536)}
    for c in cells.values():
        assert 0 < c["simulated_s"] < float("inf") and 0 < c["measured_s"] < float("inf"), c
        assert c["low_s"] <= c["simulated_s"] <= c["high_s"], c
    # each size's ranking is the one its rows give. Which algorithm the drawn times rank first is not
    # asserted: it follows the run's ring samples. Ring first at 16 KiB needs a 16 KiB ring message to take
    # less than about 1.5× a 64 KiB one, which the run's samples do not always give
    assert {rk["size"] for rk in doc["rankings"]} == {1024, 4096, 16384, 65536}
    for rk in doc["rankings"]:
        rows = [c for c in doc["rows"] if c["size"] == rk["size"]]
        assert rk["best_measured"] == min(rows, key=lambda c: c["measured_s"])["algo"], rk
        assert rk["best_simulated"] == min(rows, key=lambda c: c["simulated_s"])["algo"], rk
        assert rk["kendall_tau"] == (1.0 if rk["best_measured"] == rk["best_simulated"] else -1.0), rk
    # the same with a shaped link fitted to the run's pingpong: a bucket and a rate were found
    r = mpiscope("sim", "check", "latest", "--shaped-link", "--p2p", "ring", "--json", out=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["costs"]["G"] > 0 and doc["costs"]["burst"] >= 0, doc["costs"]
    assert all(0 < c["simulated_s"] < float("inf") for c in doc["rows"])
    for rk in doc["rankings"]:
        if rk["size"] >= 16384:
            assert rk["best_simulated"] == "ring", rk
    # a loose bound where the link decides (16 and 64 KiB): within 4× of measured. Seen: 0.7–0.95 on a
    # quiet machine, 0.51–0.77 beside a CPU hog (the hog slows the collectives more than the pingpong)
    for c in doc["rows"]:
        if c["size"] >= 16384:
            assert 0.25 <= c["simulated_s"] / c["measured_s"] <= 4, c
