# SPDX-License-Identifier: BSD-3-Clause
"""Samples derived from per-rank rows: one value per measured repetition.

The rules are those of docs/reference/formats/raw-files.md, "Samples derived from rows".
A sample is valid when every rank that contributes to it is valid; invalid
samples are counted, never silently dropped. A sample whose value cannot be
computed (partner row missing after a crash, no clock model) counts as
invalid too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mpiscope.common.arrow_pandas import numpy_of
from mpiscope.common.errors import UsageError
from mpiscope.store import schema1
from mpiscope.store.run import Run

# Sample rules: how one series' rows become samples. The engine names each
# series' rule in its block and lists them all in `mpiscope-engine --describe`.
SLOWEST_RANK = "slowest_rank"  # one operation over all ranks: collectives, ring
ONE_WAY = "one_way"  # responder's global end - initiator's global start
PAIR_EXCHANGE = "pair_exchange"  # both directions of a pair, each a one-way time
BANDWIDTH_RULES = frozenset({"bandwidth", "bidirectional_bandwidth"})
# Durations measured on the timed rank alone (local timer differences, as
# OSU does), scaled by the messages a repetition carries.
_LOCAL_RULES = frozenset({"half_round_trip", "duration", "loop_half_round_trip", "per_message"} | BANDWIDTH_RULES)
RULES = frozenset({SLOWEST_RANK, ONE_WAY, PAIR_EXCHANGE} | _LOCAL_RULES)
DEFAULT_WINDOW_MSGS = 64
# Rules whose sample is one timed span as it is, or half of it, with the share
# of the timer interval each value holds: taking the interval off each span
# takes that share off each value, to the last bit (halving is exact).
TIMER_SHARE = {SLOWEST_RANK: 1.0, ONE_WAY: 1.0, PAIR_EXCHANGE: 1.0, "duration": 1.0, "half_round_trip": 0.5}

# Columns the derivations read.
COLUMNS = (
    "launch",
    "rep",
    "rank",
    "role",
    "peer",
    "t_start_local",
    "t_end_local",
    "t_start",
    "t_end",
    "t_sched",
    "valid",
)


def unit_of(rule: str) -> str:
    """Unit of a rule's sample values: seconds, or bytes per second for bandwidths."""
    return "B/s" if rule in BANDWIDTH_RULES else "s"


@dataclass
class Samples:
    """Valid sample values of one bench × size (one launch or all launches).

    `values[i]` was measured in launch `launch[i]`, repetition `rep[i]`, by
    the rank or pair named `source[i]`: a rank number ("3", for collectives
    the rank that finished last) or "a->b" (sender -> receiver, or
    initiator -> responder for round trips).
    """

    values: np.ndarray
    n_invalid: int
    rep: np.ndarray
    launch: np.ndarray
    source_a: np.ndarray
    source_b: np.ndarray  # -1 when the source is a single rank
    rule: str = SLOWEST_RANK

    @property
    def unit(self) -> str:
        return unit_of(self.rule)

    @property
    def collective(self) -> bool:
        """Summarized as one operation over all ranks (collectives, ring)."""
        return self.rule == SLOWEST_RANK

    @property
    def source(self) -> np.ndarray:
        return _labels(self.source_a, self.source_b)

    def __len__(self):
        return len(self.values)


def _labels(a, b):
    if len(a) == 0:
        return np.array([], dtype=object)
    # Few distinct sources: build each label once, then index.
    codes = a.astype(np.int64) * (1 << 32) + (b.astype(np.int64) + 1)
    uniq, inverse = np.unique(codes, return_inverse=True)
    names = []
    for code in uniq:
        ra, rb = int(code >> 32), int(code & 0xFFFFFFFF) - 1
        names.append(str(ra) if rb < 0 else f"{ra}->{rb}")
    return np.array(names, dtype=object)[inverse]


@dataclass
class Derived:
    """Every derived sample of a series, valid or not (`valid`), before the
    valid ones are selected; sources as in Samples (source_b -1: one rank)."""

    values: np.ndarray
    valid: np.ndarray
    rep: np.ndarray
    launch: np.ndarray
    source_a: np.ndarray
    source_b: np.ndarray

    def to_samples(self, rule) -> Samples:
        ok = self.valid & np.isfinite(self.values)
        return Samples(
            self.values[ok], int((~ok).sum()), self.rep[ok], self.launch[ok], self.source_a[ok], self.source_b[ok], rule
        )


def _empty():
    e = np.array([], dtype=np.float64)
    i = np.array([], dtype=np.int32)
    return Derived(e, np.array([], dtype=bool), i, i, i, i)


def _partner_index(cols, rows):
    """Index of the row of each row's peer at the same launch and rep (-1 if absent)."""
    launch = cols["launch"].astype(np.int64)
    rank = cols["rank"].astype(np.int64)
    rep = cols["rep"].astype(np.int64)
    nrep = int(rep.max()) + 1 if len(rep) else 1
    nrank = int(max(rank.max(), cols["peer"].max())) + 1 if len(rank) else 1
    keys = (launch * nrank + rank) * nrep + rep
    if np.all(keys[1:] > keys[:-1]):  # as ingest stores them: no sort needed
        order, sorted_keys = np.arange(len(keys)), keys
    else:
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
    peer = cols["peer"][rows].astype(np.int64)
    want = (launch[rows] * nrank + peer) * nrep + rep[rows]
    if len(sorted_keys) == 0:
        return np.full(len(rows), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(sorted_keys, want), len(sorted_keys) - 1)
    found = (peer >= 0) & (sorted_keys[pos] == want)
    return np.where(found, order[pos], -1)


def _take_or_nan(arr, idx):
    out = np.full(len(idx), np.nan)
    ok = idx >= 0
    out[ok] = arr[idx[ok]]
    return out


def _local_values(rule, dur, window_msgs, launch, size):
    """Sample values of a local-duration rule from the timed rank's durations
    (`window_msgs` and each sample's `launch`: the messages a repetition carries)."""
    if rule == "half_round_trip":
        return dur / 2.0
    if rule == "duration":
        return dur
    msgs = _per_launch(window_msgs, launch)
    if rule == "loop_half_round_trip":
        return dur / (2.0 * msgs)
    if rule == "per_message":
        return dur / msgs
    nbytes = size * msgs * (2.0 if rule == "bidirectional_bandwidth" else 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(dur > 0, nbytes / dur, np.nan)


def _pair_samples(rule, cols, window_msgs, size, role="initiator", timer_s=0.0):
    rows = np.flatnonzero(cols["role"] == role)
    if len(rows) == 0:
        return _empty()
    partner = _partner_index(cols, rows)
    has_p = partner >= 0
    p_valid = np.where(has_p, cols["valid"][np.maximum(partner, 0)], True)
    a = cols["rank"][rows].astype(np.int32)
    b = cols["peer"][rows].astype(np.int32)
    launch = cols["launch"][rows].astype(np.int32)
    rep = cols["rep"][rows].astype(np.int32)

    if rule in _LOCAL_RULES:
        # Only the timed rank's own timer matters; its partner still
        # contributes (a late responder stretches the round trip).
        dur = cols["t_end_local"][rows] - cols["t_start_local"][rows] - timer_s
        valid = cols["valid"][rows] & p_valid
        values = _local_values(rule, dur, window_msgs, launch, size)
        return _sorted(Derived(values, valid, rep, launch, a, b))

    valid = cols["valid"][rows] & p_valid & has_p
    fwd = _take_or_nan(cols["t_end"], partner) - cols["t_start"][rows] - timer_s
    if rule == ONE_WAY:
        return _sorted(Derived(fwd, valid, rep, launch, a, b))
    # Pairwise exchange: the responder replies after its receive, so each
    # direction is one one-way time.
    bwd = cols["t_end"][rows] - _take_or_nan(cols["t_start"], partner) - timer_s
    raw = Derived(
        np.concatenate([fwd, bwd]),
        np.concatenate([valid, valid]),
        np.concatenate([rep, rep]),
        np.concatenate([launch, launch]),
        np.concatenate([a, b]),
        np.concatenate([b, a]),
    )
    return _sorted(raw)


def _in_order(*keys) -> bool:
    """Whether rows are already ordered by `keys` (the first the most significant)."""
    if len(keys[0]) < 2:
        return True
    before = np.zeros(len(keys[0]) - 1, dtype=bool)  # ordered by an earlier key
    tied = np.ones(len(keys[0]) - 1, dtype=bool)
    for k in keys:
        before |= tied & (k[:-1] < k[1:])
        tied &= k[:-1] == k[1:]
    return bool((before | tied).all())


def _lexsort_order(keys):
    """np.lexsort's order of rows by `keys` (the first the most significant):
    a stable sort of one integer made of them when it fits in 63 bits, which
    merges the sorted runs a pair's rows come in instead of sorting four keys."""
    combined, span = np.zeros(len(keys[0]), dtype=np.int64), 1
    for k in keys:
        low, high = int(k.min()), int(k.max())
        span *= high - low + 1
        if span >= 1 << 62:
            return np.lexsort(keys[::-1])
        combined *= high - low + 1
        combined += k - low
    return np.argsort(combined, kind="stable")


def _sorted(raw):
    # As ingest stores a single pair's rows, they are often in order already.
    keys = (raw.launch, raw.rep, raw.source_a, raw.source_b)
    if _in_order(*keys):
        return raw
    order = _lexsort_order(keys)
    return Derived(
        raw.values[order], raw.valid[order], raw.rep[order], raw.launch[order], raw.source_a[order], raw.source_b[order]
    )


def _launch_grids(cols):
    """[(launch, first row, ranks, reps)] when each launch's rows form a rank x
    repetition grid as ingest stores them: launches ascending, then ranks
    ascending, every rank with repetitions 0..reps-1. None otherwise."""
    launch, rank, rep = cols["launch"], cols["rank"], cols["rep"]
    changes = np.flatnonzero(launch[1:] != launch[:-1]) + 1  # where the next launch's rows start
    if (launch[changes] <= launch[changes - 1]).any():
        return None
    bounds = [0, *changes.tolist(), len(launch)]
    grids = []
    for first, end in zip(bounds, bounds[1:]):
        reps = int(rep[end - 1]) + 1
        if reps < 1 or (end - first) % reps:
            return None
        ranks = rank[first:end].reshape(-1, reps)
        if (
            (rep[first:end].reshape(-1, reps) != np.arange(reps)).any()
            or (ranks != ranks[:, :1]).any()
            or (ranks[1:, 0] <= ranks[:-1, 0]).any()
        ):
            return None
        grids.append((int(launch[first]), first, ranks[:, 0], reps))
    return grids


def _grid_collective_samples(cols, grids):
    """_collective_samples on launch grids: each repetition is a column of a
    (ranks, reps) view, so no sorting or gathering is needed."""
    parts = []
    for launch, first, ranks, reps in grids:
        rows, shape = slice(first, first + len(ranks) * reps), (len(ranks), reps)
        sched = cols["t_sched"][first : first + reps]  # the lowest rank's row
        window = np.isfinite(sched)
        metric = cols["t_end"][rows].reshape(shape)
        if not window.all():
            local = cols["t_end_local"][rows] - cols["t_start_local"][rows]
            metric = np.where(window, metric, local.reshape(shape))
        # max and argmax both let a NaN win, and argmax takes the lowest rank.
        gmax = metric.max(axis=0)
        parts.append(
            Derived(
                np.where(window, gmax - sched, gmax),
                cols["valid"][rows].reshape(shape).all(axis=0),
                np.arange(reps, dtype=np.int32),
                np.full(reps, launch, dtype=np.int32),
                ranks[metric.argmax(axis=0)].astype(np.int32),
                np.full(reps, -1, dtype=np.int32),
            )
        )
    if len(parts) == 1:  # one launch: nothing to join
        return parts[0]
    return Derived(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(Derived)))


def _collective_samples(cols):
    member = np.flatnonzero(cols["role"] != "idle")
    if len(member) == 0:
        return _empty()
    grids = _launch_grids(cols) if len(member) == len(cols["role"]) else None
    if grids is not None:
        return _grid_collective_samples(cols, grids)
    launch = cols["launch"][member]
    rep = cols["rep"][member]
    rank = cols["rank"][member]
    order = np.lexsort((rank, rep, launch))
    idx = member[order]
    launch, rep, rank = launch[order], rep[order], rank[order]
    new_group = np.ones(len(idx), dtype=bool)
    new_group[1:] = (launch[1:] != launch[:-1]) | (rep[1:] != rep[:-1])
    starts = np.flatnonzero(new_group)
    group = np.cumsum(new_group) - 1

    # Rows are sorted by rank within a group, so a group's first row is its
    # lowest rank: rank 0 when present, whose t_sched is the agreed start.
    sched = cols["t_sched"][idx[starts]]
    window = np.isfinite(sched)
    # Window sync: latest global end - agreed global start.
    # Barrier sync: the longest per-rank local duration.
    metric = cols["t_end"][idx]
    if not window.all():  # local durations only when some group needs them
        local_dur = cols["t_end_local"][idx] - cols["t_start_local"][idx]
        metric = np.where(window[group], metric, local_dur)
    # NaN (no clock model) must win the max so the sample is not trusted.
    gmax = np.maximum.reduceat(metric, starts)
    values = np.where(window, gmax - sched, gmax)
    valid = np.logical_and.reduceat(cols["valid"][idx], starts)

    top = gmax[group]
    hits = np.flatnonzero((metric == top) | (np.isnan(metric) & np.isnan(top)))
    # Groups ascend along the rows, so each group's first hit is where the
    # group number changes: its lowest rank reaching the maximum.
    hit_group = group[hits]
    first = np.flatnonzero(np.diff(hit_group, prepend=-1))
    src = np.full(len(starts), -1, dtype=np.int32)
    src[hit_group[first]] = rank[hits[first]]
    return Derived(
        values,
        valid,
        rep[starts].astype(np.int32),
        launch[starts].astype(np.int32),
        src,
        np.full(len(starts), -1, dtype=np.int32),
    )


def _per_launch(window_msgs, launch):
    if isinstance(window_msgs, dict):
        out = np.full(len(launch), float(DEFAULT_WINDOW_MSGS))
        for k in np.unique(launch):
            out[launch == k] = window_msgs.get(int(k)) or DEFAULT_WINDOW_MSGS
        return out
    return np.full(len(launch), float(window_msgs if window_msgs else DEFAULT_WINDOW_MSGS))


def derive(
    rule: str,
    size: int,
    cols: dict,
    window_msgs=DEFAULT_WINDOW_MSGS,
    timed_role: str = "initiator",
    timer_s: float = 0.0,
) -> Samples:
    """Derive samples from the rows of one series by its sample `rule`.

    `cols` maps the names in COLUMNS to numpy arrays (rows of any launches).
    `window_msgs` is a number or a dict launch -> number; `timed_role` is
    the role whose timer a local-duration rule reads. `timer_s` is taken off
    every timed span first: the timer interval (the time two back-to-back
    reads measure) that each span contains besides the operation.
    """
    return _derive_raw(rule, size, cols, window_msgs, timed_role, timer_s).to_samples(rule)


def _derive_raw(rule, size, cols, window_msgs, timed_role="initiator", timer_s=0.0):
    if rule not in RULES:
        raise UsageError(
            f"unknown sample rule '{rule}': the run was measured by a newer engine "
            "than this mpiscope knows; update mpiscope to read it"
        )
    if len(cols["rank"]) == 0:
        return _empty()
    if rule == SLOWEST_RANK:
        raw = _collective_samples(cols)
        return replace(raw, values=raw.values - timer_s) if timer_s else raw
    return _pair_samples(rule, cols, window_msgs, size, timed_role, timer_s)


def table_context(table: pa.Table) -> dict:
    """The context JSON stored in a samples table's schema metadata ({} if none)."""
    meta = table.schema.metadata or {}
    raw = meta.get(b"mpiscope.context")
    return json.loads(raw) if raw else {}


def _single(column):
    """One array of a column (chunks combined)."""
    if isinstance(column, pa.ChunkedArray):
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column


def _codes_of(column):
    """(codes, names) of a dictionary column whose names are distinct and
    values never null, else None: equal values then have equal codes."""
    arr = _single(column)
    if not pa.types.is_dictionary(arr.type) or arr.null_count:
        return None
    names = arr.dictionary.to_pylist()
    if len(set(names)) != len(names):
        return None
    return numpy_of(arr.indices), names


def _changes(column) -> np.ndarray:
    """Rows whose value differs from the row before (a null counts as a change).

    Neighbours are compared in place: cheaper than hashing every value, and
    a series' rows come in long runs of equal values (one per rank and launch).
    Dictionary and numeric columns compare their codes or values in numpy.
    """
    if len(column) < 2:
        return np.array([], dtype=np.int64)
    arr = _single(column)
    coded = _codes_of(arr)
    if coded is not None or (not arr.null_count and arr.type in _NUMERIC):
        values = coded[0] if coded is not None else numpy_of(arr)
        return np.flatnonzero(values[1:] != values[:-1]) + 1
    differs = pc.fill_null(pc.not_equal(arr.slice(1), arr.slice(0, len(arr) - 1)), True)
    return np.flatnonzero(numpy_of(differs)) + 1


_NUMERIC = (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float64())


class Coded:
    """A string column as codes into its names: compared with a name a
    whole column at a time on the codes (4 bytes a row, no string per row),
    sliced like a numpy array."""

    __slots__ = ("codes", "names")

    def __init__(self, codes, names):
        self.codes, self.names = codes, list(names)

    def __len__(self):
        return len(self.codes)

    def __getitem__(self, rows):
        return Coded(self.codes[rows], self.names)

    def __eq__(self, name):  # type: ignore[override]
        found = [i for i, n in enumerate(self.names) if n == name]
        if len(found) == 1:
            return self.codes == found[0]
        if not found:  # a name the column lacks ("idle" in most series)
            return np.zeros(len(self.codes), dtype=bool)
        return np.isin(self.codes, found)

    def __ne__(self, name):  # type: ignore[override]
        return ~(self == name)

    __hash__ = None  # type: ignore[assignment]

    def strings(self) -> np.ndarray:
        """The values as numpy strings."""
        return np.array(self.names, dtype=str)[self.codes]


def _coded(column) -> Coded:
    """A string column as Coded: a dictionary column's own codes, else each
    run of equal values converted once."""
    coded = _codes_of(column)
    if coded is not None:
        return Coded(*coded)
    if len(column) == 0:
        return Coded(np.array([], dtype=np.int32), [])
    starts = np.concatenate([[0], _changes(column)])
    names, codes = np.unique(np.array(column.take(starts).to_pylist(), dtype=str), return_inverse=True)
    return Coded(np.repeat(codes.astype(np.int32), np.diff(np.append(starts, len(column)))), names.tolist())


def _columns(table):
    cols = {}
    for name in COLUMNS:
        arr = table[name]
        if name == "role":
            cols[name] = _coded(arr)
        else:
            cols[name] = numpy_of(arr)
    return cols


def _series_spans(table: pa.Table) -> dict:
    """{(bench, algo, size): [(first row, end row)]}, in table order, in one pass."""
    if table.num_rows == 0:
        return {}
    cut = np.union1d(np.union1d(_changes(table["bench"]), _changes(table["algo"])), _changes(table["size"]))
    starts = np.concatenate([[0], cut]).astype(np.int64)
    ends = np.concatenate([cut, [table.num_rows]]).astype(np.int64)
    keys = zip(*(table[name].take(starts).to_pylist() for name in ("bench", "algo", "size")))
    runs = {}
    for (bench, algo, size), start, end in zip(keys, starts.tolist(), ends.tolist()):
        runs.setdefault((bench, algo, int(size)), []).append((start, end))
    return runs


def _rows_of(spans):
    """The rows of a series' spans: a slice when they are one run, else their indices."""
    if len(spans) == 1:
        return slice(*spans[0])
    return np.concatenate([np.arange(s, e) for s, e in spans])


def split_series(table: pa.Table) -> dict:
    """{(bench, algo, size): its rows}, in table order, in one pass.

    ingest writes each series contiguously, so this slices; rows of a
    series that are scattered (a table built otherwise) are gathered.
    """
    out = {}
    for key, spans in _series_spans(table).items():
        rows = _rows_of(spans)
        out[key] = table.slice(rows.start, rows.stop - rows.start) if isinstance(rows, slice) else table.take(rows)
    return out


def series_columns(table: pa.Table) -> dict:
    """{(bench, algo, size): its rows as numpy columns (COLUMNS)}, as
    split_series splits them; the table is converted once, not per series."""
    cols = _columns(table)
    return {
        key: {name: col[_rows_of(spans)] for name, col in cols.items()} for key, spans in _series_spans(table).items()
    }


def no_rows(table: pa.Table) -> dict:
    """The numpy columns (COLUMNS) of none of `table`'s rows: a series it lacks."""
    return _columns(table.slice(0, 0))


def algos_of_bench(table: pa.Table, bench: str) -> list[str]:
    """The variants (algorithms, parameters) measured for `bench`."""
    return sorted(pc.unique(table.filter(pc.equal(table["bench"], bench))["algo"]).to_pylist())


def sample_values(
    table: pa.Table, bench: str, size: int, launch=None, algo=None, run: Run | None = None, remove_timer=False
) -> Samples:
    """Valid samples of `bench` at `size` (all launches, or only `launch`).

    `algo` selects the algorithm when the run measured several for this
    bench; by default the only one present. `run` defaults to the context
    stored in the table's metadata (its series records hold rule and window).
    `remove_timer` takes the run's timer interval off every timed span.
    """
    if run is None:
        run = Run.from_context(table_context(table))
    mask = pc.and_(pc.equal(table["bench"], bench), pc.equal(table["size"], int(size)))
    if launch is not None:
        mask = pc.and_(mask, pc.equal(table["launch"], int(launch)))
    sub = table.filter(mask)
    if algo is None:
        present = sorted(pc.unique(sub["algo"]).to_pylist())
        if len(present) > 1:
            raise UsageError(
                f"{bench} at {size} B was measured with several algorithms ({', '.join(present)}); choose one"
            )
        algo = present[0] if present else None
    if algo is not None:
        sub = sub.filter(pc.equal(sub["algo"], algo))
    return series_samples(sub, bench, size, algo, run, remove_timer)


def series_rule(run: Run, bench, size, algo=None) -> tuple[str, str, dict]:
    """(rule, timed role, {launch: window_msgs}) of one series, as its records say."""
    records = run.entries(bench, size, algo)
    first = records[0] if records else None
    window_msgs = {s.launch: s.window_msgs or DEFAULT_WINDOW_MSGS for s in records}
    return rule_of(first.rule if first else None, first.timed_role if first else None, bench, algo) + (window_msgs,)


def rule_of(rule, timed_role, bench, algo) -> tuple[str, str]:
    """(rule, timed role) as recorded; runs recorded before the engine named
    rules get the ones that engine applied (store/schema1.py)."""
    if rule:
        return rule, timed_role or "initiator"
    return schema1.rule(bench), schema1.timed_role(bench, algo)


def timer_interval(run: Run) -> float:
    """The calibrated timer interval the engine recorded (0 when the run records none)."""
    return float((run.timer or {}).get("interval_s") or 0.0)


def series_derived(rows: pa.Table, bench, size, algo, run: Run) -> tuple[str, Derived]:
    """(rule, every sample) of `rows`, exactly one series' rows; a sample is
    valid when its `valid` is set and its value finite (what Samples keeps)."""
    rule, timed_role, window_msgs = series_rule(run, bench, size, algo)
    derived = _derive_raw(rule, int(size), _columns(rows), window_msgs, timed_role)
    derived.valid = derived.valid & np.isfinite(derived.values)
    return rule, derived


def series_samples(rows: pa.Table, bench, size, algo, run: Run, remove_timer=False) -> Samples:
    """Samples from `rows` that are already exactly one series' rows (no
    filtering); with `remove_timer`, the run's timer interval is taken off
    every timed span (the stored rows are unchanged)."""
    return columns_samples(_columns(rows), bench, size, algo, run, remove_timer)


def columns_samples(cols: dict, bench, size, algo, run: Run, remove_timer=False) -> Samples:
    """series_samples of one series' rows as numpy columns (series_columns)."""
    rule, timed_role, window_msgs = series_rule(run, bench, size, algo)
    return derive(rule, int(size), cols, window_msgs, timed_role, timer_interval(run) if remove_timer else 0.0)
