# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope tune's Intel MPI settings and files, without MPI
(docs/explanation/tuner.md, Intel MPI): presets as MPI_T describes them,
each forced by I_MPI_ADJUST_<OP>; the settings string and the JSON tuning
file written and read back by our readers, which refuse what Intel MPI would
misread; the default's stand-ins; and the settings oversubscribed hydra
launches carry."""

import json
from types import SimpleNamespace

import pytest

from mpiscope import mpilibs
from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.intelmpi import adjust as impi_adjust
from mpiscope.mpilibs.intelmpi import calls as impi_calls
from mpiscope.mpilibs.intelmpi import presets as impi_presets
from mpiscope.mpilibs.intelmpi import tuning as impi_tuning
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Algorithm, Catalog
from mpiscope.mpilibs.selection import Rule
from mpiscope.tune import library_sizes
from mpiscope.tune.standins import stand_ins
from mpiscope.tune.write import write_files

INTEL = mpilibs.get("intelmpi")


def catalog(highest=None):
    """A catalog as impi_presets reads it: presets 1..N per collective."""
    highest = highest or {"allreduce": 8, "bcast": 6, "allgather": 6, "barrier": 3}
    return Catalog("intelmpi", "2021.0", {c: [Algorithm(f"preset{k}", str(k)) for k in range(1, n + 1)]
                                          for c, n in highest.items()}, "test")


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
    assert library_sizes.library_size(INTEL, coll, size, p) == want
    assert library_sizes.describe(INTEL, coll) == ("no size" if coll == "barrier" else
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
        return launch.command(launcher_family="mpich", launcher="mpirun", np=4, engine="e", engine_args=[], **kw)

    c = words(oversubscribe=True)
    for k, v in INTEL.oversubscribed_settings.items():
        assert c[c.index(k) - 1:c.index(k) + 2] == ["-genv", k, v]
    assert "I_MPI_PIN" not in words(oversubscribe=False)
    mine = words(oversubscribe=True, launcher_args=["-genv", "I_MPI_PIN", "1"])
    assert mine.count("I_MPI_PIN") == 1 and "I_MPI_WAIT_MODE" in mine   # the user's own wins
