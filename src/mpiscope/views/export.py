"""Export a run as CSV (every valid sample), JSON (summaries + context), or
text in the layout of the OSU Micro-Benchmarks.

The OSU layout follows OMB 7.4 (c/util/osu_util_mpi.c print_preamble /
print_only_header / print_stats, c/mpi/pt2pt/standard/osu_latency.c):
a blank line, "# <benchmark name> v7.4", "# Datatype: MPI_CHAR." (OSU always
passes MPI_CHAR; mpiscope prints the datatype the engine passed; not for
barrier), then the column header printed as "%-10s%*s" and each size as
"%-10d%*.*f". FIELD_WIDTH is 18 and FLOAT_PRECISION 2: OMB's configure.ac
defines them (AC_DEFINE, passed as -D flags), overriding osu_util.h's
fallback of 20. osu_barrier prints no size column: header "# Avg
Latency(us)", values "%17.2f".
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np

from mpiscope.common.errors import UsageError
from mpiscope.views import EXPORT_FORMATS
from mpiscope.common.jsonable import plain
from mpiscope.store.ingest import SAMPLES_FILE, load
from mpiscope.views.show import quality_summary, show_rows
from mpiscope.store.run import Run
from mpiscope.store.series import all_series_samples, bench_label, open_run


OSU_VERSION = "7.4"
FIELD_WIDTH = 18
FLOAT_PRECISION = 2
OSU_TITLES = {
    "pingpong": "OSU MPI Latency Test",
    "bw": "OSU MPI Bandwidth Test",
    "bibw": "OSU MPI Bi-Directional Bandwidth Test",
    "barrier": "OSU MPI Barrier Latency Test",
    "bcast": "OSU MPI Broadcast Latency Test",
    "reduce": "OSU MPI Reduce Latency Test",
    "allreduce": "OSU MPI Allreduce Latency Test",
    "allgather": "OSU MPI Allgather Latency Test",
    "gather": "OSU MPI Gather Latency Test",
    "scatter": "OSU MPI Scatter Latency Test",
    "alltoall": "OSU MPI All-to-All Personalized Exchange Latency Test",
    "reduce_scatter_block": "OSU MPI Reduce_scatter_block Latency Test",
}


def _csv(run_dir):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["bench", "algo", "size", "launch", "rep", "source", "value", "unit"])
    if not (Path(run_dir) / SAMPLES_FILE).exists():
        return buf.getvalue()
    table, run = load(run_dir)
    for bench, algo, size, s in all_series_samples(table, run):
        u = s.unit
        for launch, rep, src, value in zip(s.launch.tolist(), s.rep.tolist(),
                                           s.source.tolist(), s.values.tolist()):
            w.writerow([bench, algo, size, launch, rep, src, repr(value), u])
    return buf.getvalue()


def show_json(rows, run: Run) -> str:
    """`show`'s rows (each with its quality verdict), the quality summary and
    the run context as JSON (show --json, export json)."""
    doc = {"schema_version": 1, "context": run.context, "quality": quality_summary(rows, run),
           "rows": rows}
    return json.dumps(plain(doc), indent=2) + "\n"


def _json(run_dir):
    return show_json(show_rows(run_dir), open_run(run_dir))


def osu_value(unit, values):
    """The number OSU would print for these samples.

    OSU reports averages, so this is a mean, not the median mpiscope shows:
    for latencies the mean sample time in microseconds; for bw/bibw total
    bytes over total time, in MB/s (1e6 B/s) — OSU's definition, which is
    the harmonic mean of the per-repetition bandwidths. Note the collective
    samples are per-repetition times over all ranks (max over ranks), where
    OSU averages each rank's own time: expect mpiscope's numbers to be
    somewhat higher for the same operation.
    """
    v = np.asarray(values, dtype=np.float64)
    if len(v) == 0:
        return math.nan
    if unit == "B/s":
        return float(len(v) / np.sum(1.0 / v)) / 1e6
    return float(np.mean(v)) * 1e6


def _osu_table(bench, algo, unit, sizes_values, datatype):
    osu = algo in (None, "mpi") and bench in OSU_TITLES
    if osu:
        title = f"{OSU_TITLES[bench]} v{OSU_VERSION}"
    else:
        title = f"mpiscope {bench_label(bench, algo)} (OSU layout)"
    out = ["\n", f"# {title}\n"]          # print_preamble starts with a newline
    if osu and bench == "barrier":
        out.append("# Avg Latency(us)\n")
        for _, value in sizes_values:
            out.append("%*.*f\n" % (17, FLOAT_PRECISION, value))
        return "".join(out)
    if datatype != "none":  # the engine's word for "no data passed"
        out.append(f"# Datatype: {datatype}.\n")
    column = "Bandwidth (MB/s)" if unit == "B/s" else "Avg Latency(us)"
    out.append("%-*s%*s\n" % (10, "# Size", FIELD_WIDTH, column))
    for size, value in sizes_values:
        out.append("%-*d%*.*f\n" % (10, size, FIELD_WIDTH, FLOAT_PRECISION, value))
    return "".join(out)


def _osu(run_dir):
    if not (Path(run_dir) / SAMPLES_FILE).exists():
        return ""
    table, run = load(run_dir)
    groups = {}  # (bench, algo, unit) -> [(size, value)], run order
    for bench, algo, size, s in all_series_samples(table, run):
        groups.setdefault((bench, algo, s.unit), []).append((size, osu_value(s.unit, s.values)))
    tables = []
    for (bench, algo, unit), sizes_values in groups.items():
        datatype = next((x.datatype for x in run.entries(bench) if x.datatype), None) or "MPI_CHAR"
        tables.append(_osu_table(bench, algo, unit, sizes_values, datatype))
    # Each table starts with OSU's blank line, so tables are separated by one.
    return "".join(tables)


def export(run_dir, fmt: str) -> str:
    """The run at `run_dir` as text in format `fmt` ("csv", "json" or "osu").

    csv: one line per valid sample (bench, algo, size, launch, rep, source,
    value, unit; values in s or B/s, full precision). json: the `show` rows
    and the run context. osu: one OSU-style table per benchmark (see
    osu_value for what the number is).
    """
    if fmt == "csv":
        return _csv(run_dir)
    if fmt == "json":
        return _json(run_dir)
    if fmt == "osu":
        return _osu(run_dir)
    raise UsageError(f"unknown export format '{fmt}': choose one of {', '.join(EXPORT_FORMATS)}")
