# SPDX-License-Identifier: BSD-3-Clause
"""Statistics of samples: estimates with intervals, bootstrap, tails, modes, slow ranks, launches, comparisons."""
