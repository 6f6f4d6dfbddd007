# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope import`: the text outputs of other tools (OSU Micro-Benchmarks,
Intel MPI Benchmarks, ReFrame performance logs) read into runs of kind
`imported`, one module per format (osu.py, imb.py, reframe.py, each from
the lines to Logs of log.py), stored by imported_runs.py."""
