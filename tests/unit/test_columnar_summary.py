# SPDX-License-Identifier: BSD-3-Clause
"""The shortcuts of ingest and the summary give what the plain computation gives:
codes instead of strings, one sort per series, rows in order left unsorted,
row groups written as they are filled, spans less the timer interval."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mpiscope.stats import quality
from mpiscope.stats.modes import mode_weights, mode_weights_sorted
from mpiscope.stats.summary import median_unsorted, percentile_sorted, sorted_clean, summarize_sorted
from mpiscope.store import ingest as store
from mpiscope.store import samples
from mpiscope.store.samples import TIMER_SHARE, Coded, derive
from mpiscope.store.run import Run
from mpiscope.store.series import all_series_samples
from mpiscope.views import show
from rawgen import COLLECTIVES, Clock, RunBuilder, SeriesSpec

US = 1e-6
RNG = np.random.default_rng(7)


def test_coded_compares_as_strings_do():
    names = ["member", "idle", "initiator", "idle"]  # a name twice: both codes count
    codes = RNG.integers(0, len(names), 500).astype(np.int32)
    strings = np.array(names)[codes]
    coded = Coded(codes, names)
    for name in ("member", "idle", "initiator", "responder"):
        assert np.array_equal(coded == name, strings == name)
        assert np.array_equal(coded != name, strings != name)
    rows = np.flatnonzero(strings == "idle")[:7]
    assert np.array_equal(coded[rows].strings(), strings[rows])
    assert len(coded[2:9]) == 7


@pytest.mark.parametrize("dictionary", [True, False])
def test_changes_and_codes_of_a_string_column(dictionary):
    values = np.repeat(np.array(["a", "b", "a", "c"]), [3, 1, 4, 2]).tolist()
    column = pa.array(values).dictionary_encode() if dictionary else pa.array(values)
    assert samples._changes(column).tolist() == [3, 4, 8]
    assert samples._coded(column).strings().tolist() == values


def test_lexsort_order_is_numpys():
    for n in (2, 17, 1000):
        keys = tuple(RNG.integers(-1, 6, n).astype(np.int32) for _ in range(4))
        assert np.array_equal(samples._lexsort_order(keys), np.lexsort(keys[::-1]))
    wide = tuple(RNG.integers(-(2**40), 2**40, 300) for _ in range(4))  # beyond 63 bits together
    assert np.array_equal(samples._lexsort_order(wide), np.lexsort(wide[::-1]))


def test_in_order():
    a, b = np.array([0, 0, 1, 1]), np.array([5, 6, 0, 0])
    assert samples._in_order(a, b)
    assert not samples._in_order(a, b[::-1])


@pytest.mark.parametrize("n", [1, 2, 5, 6, 7, 100, 1001])
def test_summary_and_modes_from_one_sort(n):
    values = np.concatenate([RNG.lognormal(0.0, 0.2, n), [np.nan]]) * US
    a = sorted_clean(values)
    st = summarize_sorted(a)
    finite = values[~np.isnan(values)]
    assert st["n"] == n
    assert st["median"] == float(np.median(finite))
    assert [st["p90"], st["p99"]] == np.percentile(finite, [90.0, 99.0]).tolist()
    assert (st["min"], st["max"]) == (finite.min(), finite.max())
    assert mode_weights_sorted(a) == mode_weights(values)


@pytest.mark.parametrize("n", [1, 2, 3, 10, 11, 101, 1000, 4097])
def test_percentile_of_sorted_values_is_numpys_to_the_bit(n):
    cases = [
        RNG.lognormal(-13.0, 1.0, n),
        RNG.integers(0, 4, n) * 1e-7,  # ties
        np.concatenate([RNG.uniform(0.0, 1.0, n - 1), [np.inf]]),
        -np.zeros(n),
    ]
    percents = [0.0, 25.0, 50.0, 90.0, 99.0, 99.9, 100.0]
    for a in map(np.sort, cases):
        with np.errstate(invalid="ignore"):
            want = np.percentile(a, percents)
        got = np.array([percentile_sorted(a, p) for p in percents])
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("n", [1, 2, 3, 10, 11, 101, 1000, 4097])
def test_median_of_unsorted_values_is_numpys_to_the_bit(n):
    cases = [
        RNG.lognormal(-13.0, 1.0, n),
        RNG.integers(0, 4, n) * 1e-7,  # ties
        RNG.permutation(np.concatenate([RNG.uniform(0.0, 1.0, n - 1), [np.inf]])),
        -np.zeros(n),
    ]
    for a in cases:
        got, want = median_unsorted(a), float(np.median(a))
        assert got == want and np.signbit(got) == np.signbit(want)


def test_reference_clock_copied_as_the_formula_gives():
    local = np.array([1.5, -2.0, np.nan, np.inf, 0.0, 7e9])
    zero = {"offset_s": 0.0, "drift": 0.0, "ref_s": 0.0}
    out = np.empty_like(local)
    store._to_global(local, zero, out)
    with np.errstate(invalid="ignore"):
        formula = local - ((local - 0.0) * 0.0 + 0.0)
    assert np.array_equal(out, formula, equal_nan=True)


def test_converted_piece_by_piece_as_whole(monkeypatch):
    monkeypatch.setattr(store, "_CHUNK", 7)
    local = RNG.uniform(0.0, 100.0, 50)
    model = {"offset_s": 0.37, "drift": 3e-6, "ref_s": 50.0}
    out = np.empty_like(local)
    store._to_global(local, model, out)
    assert np.array_equal(out, local - ((local - 50.0) * 3e-6 + 0.37))


def _run(tmp_path, specs, nranks=4):
    clocks = {1: Clock(0.5, 2.0**-12, 100.0), 2: Clock(-0.25), 3: Clock(3.0, -1e-6, 80.0)}
    rb = RunBuilder(tmp_path / "run", nranks=nranks, sync="window", clocks=clocks)
    for spec in specs:
        rb.add(spec)
    rb.write()
    return rb


def test_row_groups_written_as_filled_make_the_whole_tables_file(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "ROW_GROUP", 5)
    values = [1 * US, 2 * US, 4 * US, 3 * US, 5 * US, 2 * US, 1 * US]
    rb = _run(tmp_path, [SeriesSpec("pingpong", 8, values), SeriesSpec(COLLECTIVES[0], 64, values, late=((1, 2),))])
    table = store.ingest(rb.run_dir, {})
    path = rb.run_dir / store.SAMPLES_FILE
    assert pq.ParquetFile(path).metadata.num_row_groups == -(-table.num_rows // 5) > 1
    whole = tmp_path / "whole.parquet"
    with pq.ParquetWriter(whole, table.schema, **store._PARQUET_OPTIONS) as writer:
        writer.write_table(table.replace_schema_metadata(None), row_group_size=5)
        writer.add_key_value_metadata(table.schema.metadata)
    assert path.read_bytes() == whole.read_bytes()


def test_columns_filled_in_threads_or_inline_make_the_same_file(tmp_path, monkeypatch):
    values = [1 * US, 2 * US, 4 * US, 3 * US, 5 * US]
    specs = [SeriesSpec("pingpong", 8, values), SeriesSpec(COLLECTIVES[0], 64, values)]
    files = []
    for threaded_rows in (0, 1 << 30):
        monkeypatch.setattr(store, "THREADED_ROWS", threaded_rows)
        rb = _run(tmp_path / str(threaded_rows), specs)
        store.ingest(rb.run_dir, {})
        files.append((rb.run_dir / store.SAMPLES_FILE).read_bytes())
    assert files[0] == files[1]


def test_meanwhile_gets_the_table_and_derived_samples_before_the_file_is_closed(tmp_path):
    values = [1 * US, 2 * US, 4 * US, 3 * US, 5 * US]
    rb = _run(tmp_path, [SeriesSpec("pingpong", 8, values), SeriesSpec(COLLECTIVES[0], 64, values)])
    derived, seen = {}, []

    def meanwhile(table):
        seen.append((table, dict(derived), (rb.run_dir / store.SAMPLES_FILE).exists()))

    table = store.ingest(rb.run_dir, {}, derived, meanwhile=meanwhile)
    assert len(seen) == 1
    early, early_derived, file_there = seen[0]
    assert early.equals(table) and early.schema.metadata == table.schema.metadata
    assert early_derived.keys() == derived.keys() and len(derived) == 2
    assert not file_there  # written under a temporary name until complete


@pytest.mark.parametrize("rule", sorted(TIMER_SHARE))
def test_rules_shifted_by_the_timer_interval(tmp_path, rule):
    bench = {"slowest_rank": COLLECTIVES[0], "one_way": "oneway", "pair_exchange": "multipair"}.get(rule, "pingpong")
    values = [(1 * US, 2 * US), (3 * US, 4 * US)] if bench == "multipair" else [1 * US, 3 * US, 2 * US]
    rb = _run(tmp_path, [SeriesSpec(bench, 8, values)])
    table = store.ingest(rb.run_dir, {})
    cols = samples.series_columns(table)[(bench, "mpi", 8)]
    timer = 4e-8
    shifted = derive(rule, 8, cols).values - TIMER_SHARE[rule] * timer
    assert np.array_equal(derive(rule, 8, cols, timer_s=timer).values, shifted)


def test_medians_less_the_timer_interval_shifted_or_derived_again(tmp_path):
    values = [1 * US, 3 * US, 2 * US, 5 * US, 4 * US, 2 * US]
    specs = [SeriesSpec("pingpong", 8, values), SeriesSpec(COLLECTIVES[0], 64, values)]
    specs.append(SeriesSpec("bw", 8, [30.1e6, 29.7e6, 31.2e6, 30.5e6]))  # a rate: derived again
    table = store.ingest(_run(tmp_path, specs).run_dir, {})
    context = samples.table_context(table)
    run = Run.from_context({**context, "timer": {**context["timer"], "interval_s": 3e-8}})
    series = all_series_samples(table, run)
    assert {s.rule for *_, s in series} >= {"half_round_trip", "bandwidth"}
    again = {(b, a, n): float(np.median(s.values)) for b, a, n, s in all_series_samples(table, run, remove_timer=True)}
    assert show._timer_removed_medians(table, run, series, 3e-8) == again


def test_rows_count_each_series_launches_as_its_records_do(tmp_path):
    rb = RunBuilder(tmp_path / "run", nranks=2, launches=(0, 1, 2))
    rb.add(SeriesSpec("pingpong", 8, [1 * US, 3 * US, 2 * US], launches=(0, 1, 2)))
    rb.add(SeriesSpec(COLLECTIVES[0], 64, [2 * US, 4 * US, 3 * US], launches=(1,)))
    rb.write()
    table = store.ingest(rb.run_dir, {})
    run = Run.from_context(samples.table_context(table))
    series = all_series_samples(table, run)
    rows = show.rows_of(table, run, series, quality.run_verdicts(series, run))
    assert [r["launches"] for r in rows] == [len({x.launch for x in run.entries(b, n, a)}) for b, a, n, _ in series]
    assert [r["launches"] for r in rows] == [3, 1]


def test_modes_of_sorted_values_leave_infinities_out():
    finite = np.sort(np.concatenate([RNG.lognormal(0.0, 0.1, 300), RNG.lognormal(1.0, 0.1, 200)])) * US
    with_ends = np.concatenate([[-np.inf], finite, [np.inf, np.inf]])
    assert quality._modes_over(with_ends) == quality._modes_over(finite)
    assert len(quality._modes_over(finite)) == 2


def _grid_columns(launches, ranks, reps):
    """A collective's rows as ingest lays them out: launches, then ranks, then repetitions."""
    n = len(launches) * len(ranks) * reps
    launch, rank, rep = (
        a.ravel().astype(np.int32) for a in np.meshgrid(launches, ranks, np.arange(reps), indexing="ij")
    )
    t_start = RNG.uniform(0.0, 1.0, n)
    t_sched = np.where(rep % 3 == 0, np.nan, t_start - 1e-6)  # some barrier starts among the windows
    return {
        "launch": launch,
        "rep": rep,
        "rank": rank,
        "role": Coded(np.zeros(n, np.int32), ["member"]),
        "peer": np.full(n, -1, np.int32),
        "t_start_local": t_start,
        "t_end_local": t_start + RNG.uniform(1e-6, 2e-6, n),
        "t_start": t_start,
        "t_end": t_start + RNG.uniform(1e-6, 2e-6, n),
        "t_sched": t_sched,
        "valid": RNG.uniform(size=n) > 0.1,
    }


@pytest.mark.parametrize("launches", [[0], [0, 1, 2], [1, 4]])
def test_launch_grids_give_what_sorting_the_rows_gives(launches):
    cols = _grid_columns(launches, [0, 1, 3], 7)
    assert [g[:2] for g in samples._launch_grids(cols)] == [(k, 21 * i) for i, k in enumerate(launches)]
    order = RNG.permutation(len(cols["rep"]))
    shuffled = {name: col[order] for name, col in cols.items()}
    assert samples._launch_grids(shuffled) is None
    grid, general = samples._collective_samples(cols), samples._collective_samples(shuffled)
    for f in ("values", "valid", "rep", "launch", "source_a", "source_b"):
        assert np.array_equal(getattr(grid, f), getattr(general, f), equal_nan=f == "values")


def test_launch_grids_refuse_launches_out_of_order_and_short_ranks():
    cols = _grid_columns([2, 1], [0, 1], 5)
    assert samples._launch_grids(cols) is None
    cols = _grid_columns([0], [0, 1], 5)
    short = {name: col[:-1] for name, col in cols.items()}  # rank 1 lacks its last repetition
    assert samples._launch_grids(short) is None
