# SPDX-License-Identifier: BSD-3-Clause
"""The intra-node transport lab (after Chai 2009): what the engine's tp_*
benchmarks measured, turned into crossovers (curves.py, crossovers.py) and into
the settings MPI libraries take (settings.py); what the machine offers
(probe.py). Pure analysis over stored runs, beside cluster/; the commands are
in cli/transport.py."""
