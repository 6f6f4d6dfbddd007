# SPDX-License-Identifier: BSD-3-Clause
"""A real application under several configurations (`mpiscope app compare`): the configurations
(configs.py), one launch of the application (launch.py), the interleaved rounds and when to stop
(schedule.py), the run of kind "app" in the store (app_run.py); the prediction of its speedup from a
profile and a tune (speedup_prediction.py, reading profile_cells.py and tune_cells.py) and the what-if at
larger rank counts (scale.py, on the traced run's pattern: trace_pattern.py)."""
