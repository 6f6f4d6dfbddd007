# SPDX-License-Identifier: BSD-3-Clause
"""`export --format osu --bench B`: one benchmark, as its OSU 7.4 program prints it."""

import json
import math

import pytest

from mpiscope.common.errors import UsageError
from mpiscope.store.ingest import ingest
from mpiscope.views.exporters import export
from mpiscope.views.osu import osu_value
from mpiscope.views.show import show_rows
from osu_text import reframe_value
from rawgen import RunBuilder, SeriesSpec, context_for
from snapshot import assert_snapshot

US = 1e-6


def _run(path, specs, nranks=4):
    rb = RunBuilder(path, nranks=nranks)
    for spec in specs:
        rb.add(spec)
    rb.write()
    context = context_for(run_id=rb.run_dir.name, np=nranks)
    (rb.run_dir / "context.json").write_text(json.dumps(context))  # as the runner writes it
    ingest(rb.run_dir, context)
    return rb.run_dir


def test_snapshot_of_every_osu_benchmark_of_the_demo_run(demo):
    parts = []
    for bench in ("pingpong", "bw", "bibw", "allreduce", "barrier", "bcast"):
        text, notes = export(demo[1], "osu", bench)
        assert notes == []
        parts.append(f"=== --bench {bench}\n{text}")
    assert_snapshot("osu.txt", "".join(parts))


def test_the_strings_omb_7_4_prints(demo):
    """print_preamble, the datatype line, print_only_header and "%-10d%18.2f"
    (FIELD_WIDTH 18, FLOAT_PRECISION 2 from OMB's configure.ac)."""
    text, _ = export(demo[1], "osu", "pingpong")
    assert text.split("\n") == ["", "# OSU MPI Latency Test v7.4", "# Datatype: MPI_CHAR.",
                                "# Size       Avg Latency(us)",
                                "0                       0.20",
                                "8                       0.22",
                                "4194304               414.40", ""]
    text, _ = export(demo[1], "osu", "bw")
    assert "# Size      Bandwidth (MB/s)\n8                      30.32\n" in text
    # osu_barrier: no datatype, no size column, "%17.2f".
    assert export(demo[1], "osu", "barrier").text == \
        "\n# OSU MPI Barrier Latency Test v7.4\n# Avg Latency(us)\n             0.92\n"


def test_one_benchmark_only_never_another_or_our_own_algorithms(tmp_path):
    run = _run(tmp_path / "run", [
        SeriesSpec("allreduce", 8, [1 * US, 3 * US]),
        SeriesSpec("allreduce", 8, [5 * US], algo="ring"),
        SeriesSpec("bcast", 8, [7 * US]),
    ])
    text, notes = export(run, "osu", "allreduce")
    assert text == ("\n# OSU MPI Allreduce Latency Test v7.4\n# Datatype: MPI_INT.\n"
                    "# Size       Avg Latency(us)\n8                       2.00\n")
    assert notes == []


def test_int_reductions_start_at_4_bytes_and_reduce_scatter_block_counts_the_whole_buffer(tmp_path):
    sizes = (1, 2, 4, 8)
    run = _run(tmp_path / "run", [SeriesSpec(b, s, [float(s) * US]) for b in
                                  ("reduce", "reduce_scatter_block", "gather") for s in sizes],
               nranks=4)
    text, notes = export(run, "osu", "reduce")
    assert "# Datatype: MPI_INT.\n" in text
    assert [line.split()[0] for line in text.splitlines()[4:]] == ["4", "8"]
    assert notes == ["left out reduce 1 B: osu_reduce skips sizes below one MPI_INT (4 B)",
                     "left out reduce 2 B: osu_reduce skips sizes below one MPI_INT (4 B)"]
    # OSU's size is the whole send buffer: 4 ranks × a block of 1 or 2 ints.
    text, notes = export(run, "osu", "reduce_scatter_block")
    assert text.splitlines()[4:] == ["16                      4.00", "32                      8.00"]
    assert len(notes) == 2
    # MPI_CHAR collectives print every size from 1 B on.
    text, notes = export(run, "osu", "gather")
    assert "# Datatype: MPI_CHAR.\n" in text and notes == []
    assert [line.split()[0] for line in text.splitlines()[4:]] == ["1", "2", "4", "8"]


def test_zero_bytes_only_for_osu_latency(tmp_path):
    run = _run(tmp_path / "run", [SeriesSpec("pingpong", 0, [1 * US]), SeriesSpec("bw", 0, [1e6]),
                                  SeriesSpec("bw", 8, [2e6]), SeriesSpec("bcast", 0, [1 * US]),
                                  SeriesSpec("bcast", 1, [2 * US])], nranks=2)
    assert export(run, "osu", "pingpong").text.splitlines()[4] == "0                       1.00"
    text, notes = export(run, "osu", "bw")
    assert text.splitlines()[4:] == ["8                       2.00"]
    assert notes == ["left out bw 0 B: osu_bw skips sizes below one MPI_CHAR (1 B)"]
    text, notes = export(run, "osu", "bcast")
    assert text.splitlines()[4:] == ["1                       2.00"]
    assert notes == ["left out bcast 0 B: osu_bcast skips sizes below one MPI_CHAR (1 B)"]


def test_series_without_valid_samples_are_left_out_with_a_note(tmp_path):
    run = _run(tmp_path / "run", [SeriesSpec("allreduce", 8, [1 * US], late=((1, 0),)),
                                  SeriesSpec("allreduce", 16, [2 * US]),
                                  SeriesSpec("barrier", 0, [1 * US, 2 * US], late=((0, 0), (1, 1)))])
    text, notes = export(run, "osu", "allreduce")
    assert "nan" not in text.lower()
    assert text.splitlines()[4:] == ["16                      2.00"]
    assert notes == ["left out allreduce 8 B: no valid sample (1 invalid)"]
    text, notes = export(run, "osu", "barrier")
    assert text == "\n# OSU MPI Barrier Latency Test v7.4\n# Avg Latency(us)\n"
    assert notes == ["left out barrier: no valid sample (2 invalid)"]


def test_refusals_say_what_to_do(demo, tmp_path):
    with pytest.raises(UsageError, match=r"add --bench with one of pingpong \(osu_latency\), "
                                         r"bw \(osu_bw\)"):
        export(demo[1], "osu")
    with pytest.raises(UsageError, match="oneway: OSU has no counterpart"):
        export(demo[1], "osu", "oneway")
    with pytest.raises(UsageError, match="gather: the run did not measure it"):
        export(demo[1], "osu", "gather")
    with pytest.raises(UsageError, match="--format csv exports every benchmark"):
        export(demo[1], "csv", "pingpong")
    own = _run(tmp_path / "own", [SeriesSpec("allreduce", 8, [1 * US], algo="ring")])
    with pytest.raises(UsageError, match=r"only mpiscope's own algorithms were measured \(ring\)"):
        export(own, "osu", "allreduce")


def test_osu_value_is_a_mean():
    assert osu_value("s", [1e-6, 2e-6, 6e-6]) == pytest.approx(3.0)
    # bw: total bytes / total time = harmonic mean of the bandwidths, in MB/s.
    assert osu_value("B/s", [1e9, 3e9]) == pytest.approx(1500.0)
    assert math.isnan(osu_value("B/s", []))


# ---------------------------------------------------------------- ReFrame reads it
#
# ReFrame's OSU checks (reframe-hpc/reframe, hpctestlib/microbenchmarks/mpi/osu.py,
# class osu_benchmark) find a size with sn.assert_found(rf'^{message_size}', stdout)
# and read its number with sn.extractsingle(rf'^{message_size}\s+(\S+)', stdout, 1,
# float). The same patterns, evaluated by ReFrame's own sanity functions:

def test_reframe_patterns_read_the_numbers_show_reports(tmp_path):
    # Every benchmark at the same sizes (a parser of a mixed stream would read
    # the first table's). Sample sets are symmetric (latencies) or constant
    # (bandwidths), so OSU's mean equals show's median.
    sizes = (8, 1024, 65536)
    specs = []
    for k, bench in enumerate(("pingpong", "allreduce", "alltoall")):
        specs += [SeriesSpec(bench, s, [(k + 1 + i) * 0.7 * US * (1 + s / 1024) for i in (0, 1, 2)])
                  for s in sizes]
    specs += [SeriesSpec("bw", s, [s * 1e4 + 3.3e6] * 3) for s in sizes]
    run = _run(tmp_path / "run", specs, nranks=2)
    rows = show_rows(run)
    checked = 0
    for bench in ("pingpong", "allreduce", "alltoall", "bw"):
        text, notes = export(run, "osu", bench)
        assert notes == []
        out = tmp_path / f"{bench}.out"
        out.write_text(text)
        for r in (r for r in rows if r["bench"] == bench):
            shown = r["median"] * 1e6 if r["unit"] == "s" else r["median"] / 1e6
            assert reframe_value(out, r["size"]) == float(f"{shown:.2f}"), (bench, r["size"])
            checked += 1
    assert checked == 4 * len(sizes)


def test_cli_prints_the_notes_on_stderr(tmp_path, capsys):
    from mpiscope.cli.main import build_parser

    out = tmp_path / "out"
    _run(out / "20240101-000000-abcd", [SeriesSpec("allreduce", 8, [1 * US], late=((1, 0),)),
                                        SeriesSpec("allreduce", 16, [2 * US])])
    args = build_parser().parse_args(["export", "latest", "--format", "osu", "--bench", "allreduce",
                                      "--out", str(out)])
    assert args.func(args) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("\n# OSU MPI Allreduce Latency Test v7.4\n")
    assert captured.err == "mpiscope: note: left out allreduce 8 B: no valid sample (1 invalid)\n"
