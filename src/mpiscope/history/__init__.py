# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope history`: the runs of one or more output roots as series of
comparable numbers (series.py, from points.py), their change points
(detect.py), what differed between the runs around each (changes.py) and the
gate for nightly jobs (gate.py)."""

# The smallest step reported: compare's --noise default (stats.compare.DEFAULT_NOISE,
# whose module imports SciPy, too slow to import for a parser's default).
DEFAULT_THRESHOLD = 0.02
