# SPDX-License-Identifier: BSD-3-Clause
"""How a series is named: the benchmark, and the variant of our own
algorithms. Standard library only, for readers that need no samples."""


def bench_label(bench, algo):
    return bench if algo in (None, "mpi") else f"{bench}/{algo}"
