# SPDX-License-Identifier: BSD-3-Clause
"""The HTML report of synthetic runs: every label taken from data is escaped,
and a mode one RTO_min above the main one is flagged as retransmission
timeouts."""

import json

from rawgen import RunBuilder, SeriesSpec, context_for

from mpiscope.cli.report import write_report
from mpiscope.stats.rto import as_rto
from mpiscope.store.ingest import ingest


def test_labels_from_data_are_escaped(tmp_path):
    evil = '<script>alert("x")</script>'
    run_dir = tmp_path / "20240101-000000-evil"
    rb = RunBuilder(run_dir, nranks=2, hosts={0: evil, 1: "n1"})
    rb.add(SeriesSpec("pingpong", 8, [1e-6, 1.1e-6, 0.9e-6]))
    rb.write()
    ctx = context_for(run_id=run_dir.name, benches=["pingpong"], command=["mpiscope", evil],
                      rto_min=as_rto(0.2))
    (run_dir / "context.json").write_text(json.dumps(ctx))
    ingest(run_dir, ctx)
    html = write_report([run_dir], tmp_path / "r.html").read_text()
    assert evil not in html
    assert "&lt;script&gt;alert(" in html


def test_retransmission_timeouts_are_flagged_in_the_report(tmp_path):
    # 95% of samples near 1 ms, 5% near 201 ms: the second mode is 1x RTO_min after the first.
    import numpy as np

    rng = np.random.default_rng(5)
    values = np.where(rng.random(400) < 0.05, 0.201, 0.001) * rng.lognormal(0, 0.02, 400)
    run_dir = tmp_path / "20240101-000000-rto0"
    rb = RunBuilder(run_dir, nranks=2)
    rb.add(SeriesSpec("pingpong", 262144, list(values)))
    rb.write()
    ctx = context_for(run_id=run_dir.name, benches=["pingpong"],
                      rto_min=as_rto(0.2))  # read on the measured host, as the runner records it
    (run_dir / "context.json").write_text(json.dumps(ctx))
    ingest(run_dir, ctx)
    html = write_report([run_dir], tmp_path / "r.html").read_text()
    assert "yes: 1× RTO_min" in html
