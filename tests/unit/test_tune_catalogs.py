# SPDX-License-Identifier: BSD-3-Clause
"""Algorithm catalogs from what libraries print, without MPI: choices parsed
from both styles of description (mpilibs/openmpi/ompi_info.py, mpich/cvars.py), a
library without Open MPI's tuned component refused, and the settings that
force an algorithm."""

import pytest

from mpiscope import mpilibs
from mpiscope.mpilibs.mpich import cvars as mpich_cvars
from mpiscope.mpilibs.openmpi import ompi_info
from mpiscope.mpilibs.algorithm_catalog import Algorithm, Catalog


def test_choices_parsed_from_both_description_styles():
    lines = ("Variable to select bcast algorithm\nauto - Internal algorithm selection\n"
             "binomial    - Force Binomial Tree\nnb          - Force nonblocking algorithm\n")
    assert mpich_cvars.cvar_choices(lines) == ["binomial", "nb"]
    # MPICH 4.0 glues the lines: the library tells which tail of a glued word is a value
    glued = ("Variable to select bcast algorithmauto - Internal algorithm selection (x)"
             "binomial     - Force Binomial Treenb          - Force nonblocking algorithmsmp   - "
             "Force smp algorithm")
    valid = {"binomial", "nb", "smp"}
    assert mpich_cvars.cvar_choices(glued, lambda v: v in valid) == ["binomial", "nb", "smp"]
    # a tail the library refuses is never taken
    assert mpich_cvars.cvar_choices(glued, lambda v: v in {"binomial", "smp"}) == ["binomial", "smp"]


def test_ompi_catalog_refuses_a_library_without_tuned():
    from mpiscope.common.errors import UsageError
    with pytest.raises(UsageError, match="tuned"):
        ompi_info.catalog("mca:coll:basic:param:coll_basic_priority:value:10\n", "", "4.1.4")


def test_forcing_settings():
    ompi, mpich = mpilibs.get("openmpi"), mpilibs.get("mpich")
    cat = Catalog("openmpi", "5.0.3", {}, "test", excluded_components=["han"])
    assert ompi.forcing(cat, {"allreduce": Algorithm("ring", "4")}) == {
        "coll_tuned_use_dynamic_rules": "1", "coll_tuned_allreduce_algorithm": "4", "coll": "^han"}
    assert ompi.forcing(Catalog("openmpi", "4.1.4", {}, "test"), {"allreduce": None}) == {}
    cat = Catalog("mpich", "4.0.2", {}, "test", device_override=True)
    env = mpich.forcing(cat, {"reduce_scatter_block": Algorithm("pairwise", "pairwise")})
    assert env == {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_COLLECTIVE_FALLBACK": "error",
                   "MPIR_CVAR_REDUCE_SCATTER_BLOCK_INTRA_ALGORITHM": "pairwise"}
    assert mpich.forcing(cat, {"bcast": None}) == {"MPIR_CVAR_DEVICE_COLLECTIVES": "none"}
    # without the device switch there is nothing to switch off
    assert mpich.forcing(Catalog("mpich", "4.0.2", {}, "test"), {"bcast": None}) == {}
