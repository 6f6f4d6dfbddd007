# SPDX-License-Identifier: BSD-3-Clause
"""One benchmark of a run as the matching OSU Micro-Benchmarks 7.4 program prints
its results (`export --format osu --bench B`; OMB's c/util/osu_util_mpi.c and
its pt2pt and collective programs): a blank line, "# OSU MPI <name> Test v7.4",
"# Datatype: MPI_CHAR." (MPI_INT for reductions, as mpiscope performs them; none
for osu_barrier), the header "%-10s%18s" and one "%-10d%18.2f" line per size,
ascending (osu_barrier: "%17.2f", no size). Sizes as OSU counts them: a size of 0
elements is skipped but osu_latency's 0 B, and osu_reduce_scatter_block's size is
the whole buffer (mpiscope's block × ranks). Sizes OSU would not print and series
without a valid sample are left out, each with a note."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mpiscope.common.errors import UsageError
from mpiscope.store.series import all_series_samples, series_keys

OSU_VERSION = "7.4"
FIELD_WIDTH = 18
FLOAT_PRECISION = 2
BARRIER_WIDTH = 17  # print_stats without a size column


@dataclass(frozen=True)
class OsuProgram:
    program: str
    title: str


# mpiscope benchmark -> the OSU program measuring the same operation.
OSU_PROGRAMS = {
    "pingpong": OsuProgram("osu_latency", "OSU MPI Latency Test"),
    "bw": OsuProgram("osu_bw", "OSU MPI Bandwidth Test"),
    "bibw": OsuProgram("osu_bibw", "OSU MPI Bi-Directional Bandwidth Test"),
    "barrier": OsuProgram("osu_barrier", "OSU MPI Barrier Latency Test"),
    "bcast": OsuProgram("osu_bcast", "OSU MPI Broadcast Latency Test"),
    "reduce": OsuProgram("osu_reduce", "OSU MPI Reduce Latency Test"),
    "allreduce": OsuProgram("osu_allreduce", "OSU MPI Allreduce Latency Test"),
    "allgather": OsuProgram("osu_allgather", "OSU MPI Allgather Latency Test"),
    "gather": OsuProgram("osu_gather", "OSU MPI Gather Latency Test"),
    "scatter": OsuProgram("osu_scatter", "OSU MPI Scatter Latency Test"),
    "alltoall": OsuProgram("osu_alltoall", "OSU MPI All-to-All Personalized Exchange Latency Test"),
    "reduce_scatter_block": OsuProgram("osu_reduce_scatter_block", "OSU MPI Reduce_scatter_block Latency Test"),
}
# The engine's datatypes as OSU names them: MPI_BYTE and MPI_CHAR both move
# bytes untouched; OSU's default is MPI_CHAR.
OSU_DATATYPE = {"MPI_BYTE": "MPI_CHAR", "MPI_CHAR": "MPI_CHAR", "MPI_INT": "MPI_INT"}
DATATYPE_BYTES = {"MPI_CHAR": 1, "MPI_INT": 4}
# Runs whose series records name no datatype: what the engine always used.
_REDUCTIONS = ("reduce", "allreduce", "reduce_scatter_block")


def osu_value(unit, values):
    """The number OSU would print for these samples.

    OSU reports averages, so this is a mean, not the median mpiscope shows:
    for latencies the mean sample time in microseconds; for bw/bibw total
    bytes over total time, in MB/s (1e6 B/s) — OSU's definition, which is
    the harmonic mean of the per-repetition bandwidths. Collective samples
    are per-repetition times of the slowest rank, where OSU averages each
    rank's own time: expect mpiscope's numbers to be somewhat higher.
    """
    v = np.asarray(values, dtype=np.float64)
    if len(v) == 0:
        return math.nan
    if unit == "B/s":
        return float(len(v) / np.sum(1.0 / v)) / 1e6
    return float(np.mean(v)) * 1e6


def _choices(series_keys) -> str:
    named = [
        f"{b} ({OSU_PROGRAMS[b].program})" for b in dict.fromkeys(b for b, _, _ in series_keys) if b in OSU_PROGRAMS
    ]
    return ", ".join(named) if named else "none: the run measured no benchmark OSU has"


def _check_bench(bench, keys):
    if bench is None:
        raise UsageError(f"--format osu prints one benchmark: add --bench with one of {_choices(keys)}")
    if bench not in OSU_PROGRAMS:
        raise UsageError(f"--bench {bench}: OSU has no counterpart of it; this run has {_choices(keys)}")
    measured = {a for b, a, _ in keys if b == bench}
    if not measured:
        raise UsageError(f"--bench {bench}: the run did not measure it; it has {_choices(keys)}")
    if "mpi" not in measured:
        raise UsageError(
            f"--bench {bench}: only mpiscope's own algorithms were measured "
            f"({', '.join(sorted(measured))}); OSU measures the MPI library's "
            "own (measure it with --algo mpi)"
        )


def _datatype(bench, records) -> str | None:
    """The datatype OSU would name for this benchmark (None: osu_barrier names none)."""
    if bench == "barrier":
        return None
    recorded = next((r.datatype for r in records if r.datatype), None)
    if recorded is None:
        return "MPI_INT" if bench in _REDUCTIONS else "MPI_CHAR"
    if recorded not in OSU_DATATYPE:
        raise UsageError(f"{bench} was measured on {recorded}, which OSU does not offer")
    return OSU_DATATYPE[recorded]


def _ranks(run) -> int:
    """Ranks of the job, as the raw files recorded them (else as asked)."""
    if run.ranks:
        return len(next(iter(run.ranks.values())))
    if run.np:
        return int(run.np)
    raise UsageError(
        "the run records no number of ranks: reduce_scatter_block cannot be given OSU's size (the whole buffer)"
    )


def _osu_size(bench, size, datatype, run) -> tuple[int | None, str]:
    """(the size OSU prints for mpiscope's `size`, or None and why OSU prints none)."""
    elements = size // DATATYPE_BYTES[datatype]
    if elements == 0 and bench != "pingpong":
        return None, (f"{OSU_PROGRAMS[bench].program} skips sizes below one {datatype} ({DATATYPE_BYTES[datatype]} B)")
    if bench == "reduce_scatter_block":
        return size * _ranks(run), ""
    return size, ""


def osu_text(table, run, bench) -> tuple[str, list[str]]:
    """(`bench` of the run as its OSU 7.4 program prints it, notes on what was left out)."""
    keys = series_keys(run)
    _check_bench(bench, keys)
    series = all_series_samples(table, run, {k for k in keys if k[:2] == (bench, "mpi")})
    program = OSU_PROGRAMS[bench]
    datatype = _datatype(bench, run.entries(bench, algo="mpi"))
    rows, notes = [], []
    for _, _, size, s in series:
        what = bench if bench == "barrier" else f"{bench} {size} B"
        printed, why = (0, "") if bench == "barrier" else _osu_size(bench, size, datatype, run)
        if printed is None:
            notes.append(f"left out {what}: {why}")
        elif len(s) == 0:
            notes.append(f"left out {what}: no valid sample ({s.n_invalid} invalid)")
        else:
            rows.append((printed, osu_value(s.unit, s.values)))
    out = ["\n", f"# {program.title} v{OSU_VERSION}\n"]  # print_preamble starts with a newline
    if bench == "barrier":
        out.append("# Avg Latency(us)\n")
        out += ["%*.*f\n" % (BARRIER_WIDTH, FLOAT_PRECISION, value) for _, value in rows]
        return "".join(out), notes
    out.append(f"# Datatype: {datatype}.\n")
    column = "Bandwidth (MB/s)" if bench in ("bw", "bibw") else "Avg Latency(us)"
    out.append("%-*s%*s\n" % (10, "# Size", FIELD_WIDTH, column))
    for printed, value in sorted(rows):
        out.append("%-*d%*.*f\n" % (10, printed, FIELD_WIDTH, FLOAT_PRECISION, value))
    return "".join(out), notes
