"""mpiscope tune with Intel MPI (docs/explanation/tuner.md, Intel MPI): its
presets read from the library, each forced by I_MPI_ADJUST_<OP>; the
settings string and the JSON tuning file written, read back by our reader
and read by the library as our reader reads them (seen under gdb); the
default's stand-ins; and a small real tune whose env.sh, sourced, selects
what the rules say.

The first tests need no MPI. The others use the Intel MPI of
build/mpi-envs/intelmpi (`make mpi-envs`, which `make test` runs) and launch
ranks: run this file under `flock /tmp/mpiscope-mpi.lock`. Nothing here
asserts a speed."""

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest

from mpiscope import mpilibs
from mpiscope.common.errors import UsageError
from mpiscope.engine.build import REPO
from mpiscope.mpilibs import impi_adjust, impi_calls, impi_presets, impi_tuning
from mpiscope.mpilibs.catalog import COLLECTIVES, DEFAULT, Algorithm, Catalog
from mpiscope.mpilibs.library import Reading
from mpiscope.mpilibs.selection import Rule
from mpiscope.tune import sizes
from mpiscope.tune.standins import stand_ins
from mpiscope.tune.write import write_files
from runcli import mpiscope

INTEL = mpilibs.get("intelmpi")
ROOT = REPO / "build" / "mpi-envs" / "intelmpi"
SCHEMA = REPO / "docs" / "schemas" / "tune.schema.json"


def catalog(highest=None):
    """A catalog as impi_presets reads it: presets 1..N per collective."""
    highest = highest or {"allreduce": 8, "bcast": 6, "allgather": 6, "barrier": 3}
    return Catalog("intelmpi", "2021.0", {c: [Algorithm(f"preset{k}", str(k)) for k in range(1, n + 1)]
                                          for c, n in highest.items()}, "test")


# ---------------------------------------------------------------- no MPI

def test_presets_are_the_ranges_mpi_t_describes():
    cvars = {"MPIR_CVAR_USE_ALLREDUCE": ("Control selection of MPI_Allreduce algorithm presets.$ "
                                         "<presetid> - Preset identifier$ range: 0-32 @Alias:# "
                                         "I_MPI_ADJUST_ALLREDUCE @Default:# -1", []),
             "MPIR_CVAR_USE_ALLREDUCE_LIST": ("@Alias:# I_MPI_ADJUST_ALLREDUCE_LIST @Default:# -1", []),
             "MPIR_CVAR_USE_ALLREDUCE_NODE": ("range: 0-14 @Alias:# I_MPI_ADJUST_ALLREDUCE_NODE", []),
             "MPIR_CVAR_USE_REDUCE_SCATTER_BLOCK": ("presets. range: 0-4 @Alias:# "
                                                    "I_MPI_ADJUST_REDUCE_SCATTER_BLOCK", [])}
    assert impi_presets.ranges(cvars) == {"allreduce": 32, "reduce_scatter_block": 4}


def test_forcing_sets_the_preset_and_nothing_for_the_default():
    cat = catalog()
    assert INTEL.forcing(cat, {"allreduce": cat.find("allreduce", "preset4"), "bcast": None}) == \
        {"I_MPI_ADJUST_ALLREDUCE": "4"}
    assert INTEL.forcing(cat, {"allreduce": None}) == {}


@pytest.mark.parametrize("coll,size,p,want", [
    ("allreduce", 1024, 4, 1024), ("allreduce", 1, 4, 4),   # MPI_INT sums: 4 B at least
    ("bcast", 1000, 8, 1000), ("alltoall", 64, 8, 64), ("allgather", 64, 8, 64),
    ("gather", 100, 4, 100), ("reduce_scatter_block", 64, 8, 64), ("barrier", 0, 8, 0)])
def test_intel_sizes_are_one_ranks_buffer(coll, size, p, want):
    assert sizes.library_size(INTEL, coll, size, p) == want
    assert sizes.describe(INTEL, coll) == ("no size" if coll == "barrier" else
                                           INTEL.size_meaning(coll))


def test_settings_string_round_trip_and_lookup():
    cat = catalog()
    table = {"allreduce": {2: [Rule(0, "preset3"), Rule(2048, "preset8"), Rule(65536, "preset5")]},
             "bcast": {2: [Rule(0, DEFAULT)]}}
    text = impi_adjust.write(table, cat)
    assert 'I_MPI_ADJUST_ALLREDUCE="3:0-2047;8:2048-65535;5:65536-2147483647"' in text
    assert "BCAST" not in text   # all default: the library's own choice, untouched
    parsed = impi_adjust.read(text, cat)
    assert [impi_adjust.selects(parsed, "allreduce", 2, s) for s in (0, 2047, 2048, 65535, 65536, 1 << 30)] \
        == ["preset3", "preset3", "preset8", "preset8", "preset5", "preset5"]
    assert impi_adjust.selects(parsed, "allreduce", 64, 8) == "preset3"   # any communicator size
    assert impi_adjust.selects(parsed, "bcast", 2, 8) == DEFAULT


@pytest.mark.parametrize("value,error", [
    ("3:0-100;8:101-4294967295", "beyond 2147483647"),      # the library would ignore the variable
    ("3:0-100@2-2;8:101-1000@2-2", "process counts"),        # sizes then not compared
    ("8:101-1000;3:0-100", "does not rise"),                  # the first bound that holds wins
    ("9:0-100", "no allreduce preset 9"),
    ("x:0-100", "preset number"),
    ("3:0-", "not a condition"),
])
def test_settings_reader_refuses_what_intel_mpi_would_misread(value, error):
    with pytest.raises(UsageError, match=error):
        impi_adjust.read_value("allreduce", value, catalog())


def test_settings_need_a_preset_at_every_size_and_one_communicator_size():
    cat = catalog()
    with pytest.raises(UsageError, match="cannot keep it"):
        impi_adjust.values({"allreduce": {2: [Rule(0, "preset3"), Rule(64, DEFAULT)]}}, cat)
    with pytest.raises(UsageError, match="one communicator size"):
        impi_adjust.values({"allreduce": {2: [Rule(0, "preset3")], 4: [Rule(0, "preset1")]}}, cat)


def test_tuning_file_round_trip_and_nearest_sizes():
    cat = catalog()
    table = {"allreduce": {2: [Rule(0, "preset3"), Rule(91, "preset8")],
                           4: [Rule(0, "preset1"), Rule(4096, "preset5")]},
             "barrier": {2: [Rule(0, "preset2")], 4: [Rule(0, "preset3")]},
             "bcast": {2: [Rule(0, DEFAULT)], 4: [Rule(0, DEFAULT)]}}
    text = impi_tuning.write(table, cat)
    doc = json.loads(text)
    assert set(doc) == {"coll=Allreduce", "coll=Barrier"}
    assert doc["coll=Allreduce"]["ppn=4"]["comm_size=2"]["comm_id=-1"] == \
        {"msg_size=90": {"ALLREDUCE=3": {}}, "msg_size=-1": {"ALLREDUCE=8": {}}}
    parsed = impi_tuning.read(text, cat)
    sel = impi_tuning.selects
    assert [sel(parsed, "allreduce", 2, s) for s in (8, 90, 91)] == ["preset3", "preset3", "preset8"]
    assert [sel(parsed, "allreduce", 4, s) for s in (4095, 4096)] == ["preset1", "preset5"]
    # communicator sizes between and beyond the tuned ones take the nearest above, or the largest
    assert sel(parsed, "allreduce", 3, 8) == "preset1" and sel(parsed, "allreduce", 64, 8) == "preset1"
    assert sel(parsed, "allreduce", 1, 8) == "preset3"
    assert sel(parsed, "barrier", 4, 0) == "preset3" and sel(parsed, "bcast", 2, 8) == DEFAULT


@pytest.mark.parametrize("doc,error", [
    ({"coll=Nosuch": {}}, "not a collective"),
    ({"coll=Bcast": {"ppn=2": {"comm_size=4": {"comm_id=-1": {"msg_size=-1": {"BCAST=1": {}},
                                                              "msg_size=8": {"BCAST=2": {}}}}}}},
     "does not rise"),
    ({"coll=Bcast": {"ppn=2": {"comm_size=4": {"comm_id=-1": {"msg_size=-1": {"BCAST=7": {}}}}}}},
     "no bcast preset 7"),
    ({"coll=Bcast": {"ppn=2": {"comm_size=4": {"comm_id=3": {}}}}}, "comm_id=-1"),
    ({"coll=Bcast": {"ppn=2": {"comm_size=4": {"comm_id=-1": {"msg_size=-1": {"REDUCE=1": {}}}}}}},
     "BCAST=PRESET"),
])
def test_tuning_file_reader_refuses_what_intel_mpi_would_misread(doc, error):
    with pytest.raises(UsageError, match=error):
        impi_tuning.read(json.dumps(doc), catalog())


def test_one_communicator_size_writes_settings_several_a_tuning_file(tmp_path):
    cat = catalog()
    one = {"allgather": {2: [Rule(0, "preset1"), Rule(1024, "preset2")]}}
    written = write_files(INTEL, cat, one, lambda c: [8, 1024, 65536], tmp_path)
    assert set(written) == {"intelmpi"}
    assert INTEL.use_settings(cat, written, one) == {"I_MPI_ADJUST_ALLGATHER": "1:0-1023;2:1024-2147483647"}
    two = {"allgather": {2: [Rule(0, "preset1")], 4: [Rule(0, "preset2"), Rule(64, "preset3")]}}
    written = write_files(INTEL, cat, two, lambda c: [8, 1024, 65536], tmp_path)
    assert set(written) == {"intelmpi-tuning"}
    assert INTEL.use_settings(cat, written, two) == {"I_MPI_TUNING": str(written["intelmpi-tuning"])}


def test_a_default_is_written_as_its_stand_in_or_the_collective_is_left_alone():
    cfg = SimpleNamespace(collectives=["allreduce", "bcast", "allgather"], sizes_of=lambda c: [8, 64, 512])
    winners = {("allreduce", 8): "preset8", ("bcast", 64): "preset3", ("allgather", 8): DEFAULT}
    runs = {("allreduce", 64): ("preset1", True), ("allreduce", 512): ("preset1", True),
            ("bcast", 8): ("preset1", True), ("bcast", 512): ("preset2", False)}
    out, left = stand_ins(cfg, winners, runs, [])
    assert [out[("allreduce", s)] for s in (8, 64, 512)] == ["preset8", "preset1", "preset1"]
    assert left == {"bcast": 512}    # the default there runs no preset exactly
    assert all(out.get(("bcast", s), DEFAULT) == DEFAULT for s in (8, 64, 512))
    assert all(out.get(("allgather", s), DEFAULT) == DEFAULT for s in (8, 64, 512))  # no rule: untouched
    # a stand-in the verification found slower leaves the collective to the library
    _, left = stand_ins(cfg, winners, runs, [{"collective": "allreduce", "size": 64,
                                              "algorithm": "preset1", "speedup": 0.8}])
    assert "allreduce" in left


def test_same_code_matches_the_default_to_the_first_preset_that_runs_it():
    rd = ("MPIR_Allreduce_intra_recursive_doubling", "MPIC_Sendrecv")
    ring = ("MPIR_Allreduce_intra_ring", "MPIC_Isend", "MPIC_Irecv", "MPIC_Waitall")
    cell = ("allreduce", 64)
    traced = {DEFAULT: {cell: rd}, "preset1": {cell: rd}, "preset2": {cell: ring},
              "preset3": {cell: ring}, "preset4": {cell: rd}, "preset5": {cell: ("MPIC_Send",)}}
    r = impi_calls.same_code(traced, {"allreduce": [f"preset{k}" for k in range(1, 6)]}, [cell])
    assert r.default_runs == {cell: ("preset1", True)}
    assert r.runs_as == {(*cell, "preset1"): DEFAULT, (*cell, "preset3"): "preset2",
                         (*cell, "preset4"): DEFAULT}   # preset5 entered no algorithm: no claim
    assert impi_calls.shown(ring) == "MPIR_Allreduce_intra_ring [1 Irecv, 1 Isend, 1 Waitall]"
    assert impi_calls.shown(("MPIC_Send",)) is None


def test_oversubscribed_hydra_launches_carry_intel_mpis_settings_for_sharing_cores():
    from mpiscope.measure import launch

    def words(**kw):
        return launch.command(mpi="mpich", launcher="mpirun", np=4, engine="e", engine_args=[], **kw)

    c = words(oversubscribe=True)
    for k, v in INTEL.oversubscribed_settings.items():
        assert c[c.index(k) - 1:c.index(k) + 2] == ["-genv", k, v]
    assert "I_MPI_PIN" not in words(oversubscribe=False)
    mine = words(oversubscribe=True, launcher_args=["-genv", "I_MPI_PIN", "1"])
    assert mine.count("I_MPI_PIN") == 1 and "I_MPI_WAIT_MODE" in mine   # the user's own wins


# ---------------------------------------------------------------- with Intel MPI

@pytest.fixture(scope="module")
def impi():
    """Intel MPI of build/mpi-envs (installed once), its catalog and the
    collective-call probe built with its wrapper; I_MPI_ROOT set meanwhile."""
    from mpiscope.engine.mpi import identify
    from mpiscope.tune import probes
    from mpiscope.tune.discover import discover

    p = subprocess.run(["make", "-s", "-C", str(REPO), "mpi-envs"], capture_output=True, text=True)
    assert p.returncode == 0, f"make mpi-envs failed:\n{p.stderr[-3000:]}"
    old = os.environ.get("I_MPI_ROOT")
    os.environ["I_MPI_ROOT"] = str(ROOT)
    try:
        mpi = identify(str(ROOT / "bin" / "mpicc"))
        yield SimpleNamespace(mpi=mpi, catalog=discover(mpi), probe=probes.build(mpi, "collcall"))
    finally:
        if old is None:
            os.environ.pop("I_MPI_ROOT")
        else:
            os.environ["I_MPI_ROOT"] = old


def traced(impi, np, cells, settings):
    return impi_calls.run_traced(impi.mpi, impi.probe, np, cells, settings,
                                 INTEL.oversubscribed_settings)


def test_presets_are_read_from_the_library_as_its_own_tool_lists_them(impi):
    cat = impi.catalog
    assert cat.library == "intelmpi" and cat.version == impi.mpi.version
    assert set(cat.algorithms) == set(COLLECTIVES)
    env = {**os.environ, "LD_LIBRARY_PATH": str(ROOT / "lib")}
    for coll, algs in cat.algorithms.items():
        assert [a.name for a in algs] == [f"preset{k}" for k in range(1, len(algs) + 1)]
        info = subprocess.run([str(ROOT / "bin" / "impi_info"), "-v", impi_presets.variable(coll)],
                              capture_output=True, text=True, env=env).stdout
        assert f"range: 0-{len(algs)}" in " ".join(info.split()), (coll, info)


def _distinct_pair(impi, np, cells):
    """(preset a, preset b, {cell: a's trace}, {cell: b's trace}): the first
    two presets of the cells' collective whose traces, each forced alone,
    differ at every one of `cells`; None if there are none."""
    coll, seen = cells[0][0], []
    for alg in impi.catalog.algorithms[coll]:
        mine = traced(impi, np, cells, INTEL.forcing(impi.catalog, {coll: alg}))
        if not all(mine.get(cell) and impi_calls.algorithms(mine[cell]) for cell in cells):
            continue
        for name, other in seen:
            if all(other[cell] != mine[cell] for cell in cells):
                return name, alg.name, other, mine
        seen.append((alg.name, mine))
    return None


def _written_and_traced(impi, table, np, cells):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        written = write_files(INTEL, impi.catalog, table, lambda c: [s for _, s in cells], Path(tmp))
        return traced(impi, np, cells, INTEL.use_settings(impi.catalog, written, table))


def test_forcing_a_preset_changes_what_runs_and_the_settings_run_as_our_reader_says(impi):
    """Per collective two presets that run different code at 1020 and 1024
    bytes (the library's size); a rule switching between them at 1024 must
    make the cell of 1020 bytes trace as the first forced alone and the cell
    of 1024 as the second: the settings are read as our reader reads them,
    and a size is what selection_size says, to the byte. Each collective is
    alone in its settings: a preset composed of other collectives follows
    their settings."""
    tried = 0
    for coll in (c for c in COLLECTIVES if c != "barrier"):
        cells = [(coll, 1020), (coll, 1024)]
        pair = _distinct_pair(impi, 2, cells)
        if pair is None:
            continue
        a, b, a_traces, b_traces = pair
        table = {coll: {2: [Rule(0, a), Rule(sizes.library_size(INTEL, coll, 1024, 2), b)]}}
        with_file = _written_and_traced(impi, table, 2, cells)
        assert with_file[cells[0]] == a_traces[cells[0]], (coll, a)
        assert with_file[cells[1]] == b_traces[cells[1]], (coll, b)
        tried += 1
    assert tried >= 6, "too few collectives with two presets running different code"


def test_the_tuning_file_holds_each_communicator_sizes_rules(impi):
    """Two communicator sizes go into the JSON tuning file; on 2 and on 4
    ranks the library runs each size's own rule (four ranks share this
    machine's cores, with Intel MPI's settings for that)."""
    cells = [("allgather", 1024)]
    a, b, a_traces, _ = _distinct_pair(impi, 2, cells)
    table = {"allgather": {2: [Rule(0, a)], 4: [Rule(0, b)]}}
    assert _written_and_traced(impi, table, 2, cells) == {cells[0]: a_traces[cells[0]]}
    forced4 = traced(impi, 4, cells, INTEL.forcing(impi.catalog, {"allgather": impi.catalog.find("allgather", b)}))
    assert impi_calls.algorithms(forced4[cells[0]])
    assert _written_and_traced(impi, table, 4, cells) == forced4


def test_a_small_tune_verifies_and_its_env_sh_selects_what_the_rules_say(impi, tmp_path):
    out = tmp_path / "tuned"
    p = mpiscope("tune", "--mpicc", ROOT / "bin" / "mpicc", "-n", "2", "--coll", "allgather,alltoall",
                 "--sizes", "64,4K,64K", "--time-budget", "0.05", "--repeat", "2",
                 "--verify-repeat", "2", "-o", out, "--json", timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()), cls=jsonschema.Draft202012Validator)
    assert json.loads((out / "tune.json").read_text()) == doc
    v = doc["verification"]
    assert doc["library"] == "intelmpi" and v["checked_by"] == "gdb" and v["file_in_effect"] is True
    assert all(c["speedup"] is not None and c["verdict"] for c in v["cells"])
    assert doc["default_runs"], "what the default runs was read under gdb"
    # every rule names a preset, or the collective is left to the library throughout
    for coll, by_p in doc["rules"].items():
        names = {r["algorithm"] for rules in by_p.values() for r in rules}
        assert names == {DEFAULT} or DEFAULT not in names, (coll, names)
    # env.sh, sourced by a shell, gives a real run the settings: each cell
    # runs what its rule's preset runs forced (the default's: nothing set),
    # the other collectives as the settings make them
    env = subprocess.run(["bash", "-c", f"set -e; source {out / 'env.sh'}; env -0"],
                         capture_output=True, text=True, check=True).stdout
    exported = {k: v for k, _, v in (x.partition("=") for x in env.split("\0") if x)
                if k.startswith("I_MPI_ADJUST_")}
    cells = [(c["collective"], c["size"]) for c in v["cells"]]
    old = {k: os.environ.get(k) for k in exported}
    try:
        os.environ.update(exported)
        sourced = traced(impi, 2, cells, {})
    finally:
        for k, was in old.items():
            if was is None:
                os.environ.pop(k)
            else:
                os.environ[k] = was
    for c in v["cells"]:
        rule, cell = c["rule"], (c["collective"], c["size"])
        alg = None if rule == DEFAULT else impi.catalog.find(cell[0], rule)
        forced = traced(impi, 2, [cell], INTEL.forcing_beside(impi.catalog, {cell[0]: alg}, exported))
        assert sourced[cell] == forced[cell], c


def test_more_ranks_than_cores_wait_instead_of_polling(impi, tmp_path):
    """Four ranks on this machine's cores: the launch carries Intel MPI's
    settings for sharing cores, and completes."""
    from runcli import run_ok

    run_dir, summary = run_ok("--mpicc", ROOT / "bin" / "mpicc", "-n", str(2 * len(os.sched_getaffinity(0))),
                              "--bench", "allreduce", "--sizes", "8,64K", "--time-budget", "0.1",
                              out=tmp_path)
    words = summary["context"]["launch_commands"][0]
    for k, v in INTEL.oversubscribed_settings.items():
        assert any(words[i:i + 3] == ["-genv", k, v] for i in range(len(words))), words
