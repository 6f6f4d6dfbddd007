# SPDX-License-Identifier: BSD-3-Clause
"""The C programs as the Python side sees them: building the engine, and what it says it measures (--describe)."""
