# SPDX-License-Identifier: BSD-3-Clause
"""The peers' measurement methods (`mpiscope run --methods`, `mpiscope
methods`): from the rows the engine stored as each tool times them, the
number each tool prints (one module per tool), and the difference from
mpiscope's median split into measured causes (attribution.py)."""
