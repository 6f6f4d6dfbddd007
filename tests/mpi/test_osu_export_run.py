# SPDX-License-Identifier: BSD-3-Clause
"""`export --format osu` of a real 2-rank Open MPI run, read by ReFrame's
sanity patterns: each printed number is the mean of the size's valid
samples, as OSU's programs print it."""

import pytest

from mpiscope.views.exporters import export
from osu_text import reframe_value


def test_a_real_run_read_by_reframe_gives_the_mean_of_its_samples(tmp_path):
    import mpiscope
    from runcli import run_ok

    run_dir, _ = run_ok("-n", 2, "--bench", "pingpong,bw,allreduce,reduce_scatter_block",
                        "--sizes", "1,4,64", "--reps-max", 60, "--time-budget", 0.2, out=tmp_path)
    valid = mpiscope.load_run(run_dir).samples().query("valid")
    # printed size per measured size; 1 B of an MPI_INT reduction is left out
    printed = {"pingpong": {1: 1, 4: 4, 64: 64}, "bw": {1: 1, 4: 4, 64: 64},
               "allreduce": {4: 4, 64: 64}, "reduce_scatter_block": {4: 8, 64: 128}}
    for bench, sizes in printed.items():
        text, notes = export(run_dir, "osu", bench)
        assert ("MPI_INT" if "reduce" in bench else "MPI_CHAR") in text.splitlines()[2]
        out = tmp_path / f"{bench}.out"
        out.write_text(text)
        for size, osu_size in sizes.items():
            v = valid[(valid.bench == bench) & (valid["size"] == size)].value.to_numpy()
            if len(v) == 0:  # every sample late on a loaded machine: noted, not printed
                assert any(f"{bench} {size} B: no valid sample" in n for n in notes)
                continue
            mean = len(v) / (1.0 / v).sum() / 1e6 if bench == "bw" else v.mean() * 1e6
            assert reframe_value(out, osu_size) == pytest.approx(mean, abs=0.0051), (bench, size)
        assert len(text.splitlines()) == 4 + len(sizes) - sum("no valid sample" in n for n in notes)
