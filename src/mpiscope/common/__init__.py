# SPDX-License-Identifier: BSD-3-Clause
"""What every layer uses: error types, atomic writes, JSON-able values, the size syntax."""
