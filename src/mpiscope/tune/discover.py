# SPDX-License-Identifier: BSD-3-Clause
"""Which collective algorithms the MPI library in use offers, read from the
library itself at tune time (they differ between Open MPI 4.1 and 5.0,
between MPICH 4 and 5, and between Intel MPI versions): how, its module in
mpilibs/ says (Open MPI: ompi_info; MPICH: its control variables through
MPI_T and its library file; Intel MPI: its preset ranges through MPI_T).
A library mpiscope does not tune refuses here, before anything is launched."""

from __future__ import annotations

from mpiscope import mpilibs
from mpiscope.mpilibs.algorithm_catalog import Catalog
from mpiscope.tune import probes


def discover(mpi) -> Catalog:
    return mpilibs.of(mpi).read_catalog(mpi, lambda target: probes.build(mpi, target))
