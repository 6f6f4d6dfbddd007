# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope tune with the real Intel MPI (docs/explanation/tuner.md, Intel
MPI): its presets read from the library as its own tool lists them, each
forced by I_MPI_ADJUST_<OP>; the settings and the tuning file read by the
library as our reader reads them (seen under gdb); and a small real tune
whose env.sh, sourced, selects what the rules say.

The Intel MPI of build/mpi-envs/intelmpi (`make mpi-envs`, which `make test`
runs) launches ranks: run this file under `flock /tmp/mpiscope-mpi.lock`.
Nothing here asserts a speed."""

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest

from mpiscope import mpilibs
from mpiscope.engine.build import REPO
from mpiscope.mpilibs.intelmpi import calls as impi_calls
from mpiscope.mpilibs.intelmpi import presets as impi_presets
from mpiscope.mpilibs.algorithm_catalog import COLLECTIVES, DEFAULT
from mpiscope.mpilibs.selection import Rule
from mpiscope.tune import library_sizes
from mpiscope.tune.write import write_files
from runcli import mpiscope

INTEL = mpilibs.get("intelmpi")
ROOT = REPO / "build" / "mpi-envs" / "intelmpi"
SCHEMA = REPO / "docs" / "schemas" / "tune.schema.json"


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
        table = {coll: {2: [Rule(0, a), Rule(library_sizes.library_size(INTEL, coll, 1024, 2), b)]}}
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
    p = mpiscope("tune", "--mpicc", ROOT / "bin" / "mpicc", "-n", "2", "--coll", "allgather",
                 "--sizes", "64,64K", "--time-budget", "0.05", "--repeat", "2",
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
