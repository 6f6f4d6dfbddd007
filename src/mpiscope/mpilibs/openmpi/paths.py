# SPDX-License-Identifier: BSD-3-Clause
"""Open MPI's intra-node paths for the transport lab (mpilibs/intranode.py):
4.x copies through btl vader and single-copies with its
single_copy_mechanism; 5.x has btl sm and the smsc framework. Beyond the
eager limit a single copy takes over; raising the limit keeps copying up
to the new one (the fragment size to match rides with it)."""

from __future__ import annotations

from mpiscope.mpilibs.intranode import COPY, SINGLE, PathFamily, PathRule
from mpiscope.mpilibs.launch_settings import mca

VADER_MAX_SEND = 32768  # Open MPI's default btl_vader/sm_max_send_size
OMPI_EAGER = 4096  # and its default eager limit


class _OpenMpiPaths(PathFamily):
    btl: str

    def rules(self, single_from, copy_max):
        if single_from is None:
            return [PathRule("no single copy", self.single_copy(False), low=OMPI_EAGER)]
        rules = [PathRule("single copy by cma", self.single_copy(True), low=OMPI_EAGER)]
        if copy_max and copy_max > OMPI_EAGER:
            args = ("--mca", f"{self.btl}_eager_limit", str(copy_max))
            if copy_max > VADER_MAX_SEND:
                args += ("--mca", f"{self.btl}_max_send_size", str(copy_max))
            rules.append(PathRule(f"eager limit {copy_max}", args, low=OMPI_EAGER, high=copy_max))
        return rules

    def mechanism(self, setting):
        v = mca(setting, "btl_vader_single_copy_mechanism") or mca(setting, "btl_sm_single_copy_mechanism")
        s = mca(setting, "smsc")
        if v is not None:
            return COPY if v == "none" else SINGLE, f"single_copy_mechanism {v}"
        if s is not None:
            return COPY if s.startswith("^") or s == "none" else SINGLE, f"smsc {s}"
        return SINGLE, "defaults (cma where it works)"


class Vader(_OpenMpiPaths):
    name, label, btl = "Open MPI 4", "Open MPI 4.x (btl vader)", "btl_vader"
    measure_mpi, copy_words = "--mpi openmpi", '"--mca btl_vader_single_copy_mechanism none"'

    def single_copy(self, on: bool) -> tuple:
        return ("--mca", "btl_vader_single_copy_mechanism", "cma" if on else "none")


class Sm(_OpenMpiPaths):
    name, label, btl = "Open MPI 5", "Open MPI 5.x (btl sm, smsc)", "btl_sm"
    measure_mpi, copy_words = "--mpicc OPENMPI5/bin/mpicc", '"--mca smsc ^cma"'

    def single_copy(self, on: bool) -> tuple:
        return ("--mca", "smsc", "cma" if on else "^cma")


VADER, SM = Vader(), Sm()
