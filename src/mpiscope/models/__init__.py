# SPDX-License-Identifier: BSD-3-Clause
"""Models fitted to measurements: Hockney lines, piecewise zones, LogGP,
layers, machine models, collective cost models."""
