# SPDX-License-Identifier: BSD-3-Clause
"""The command line: one module per command group, shared options defined once."""
