# SPDX-License-Identifier: BSD-3-Clause
"""The simulator: schedules of our own collective algorithms (native/engine/colls
run unchanged against a recording backend) and their discrete-event
simulation under LogGOPS and sender/receiver costs, with costs taken from
measurements (native/sim/ in C; this package drives it)."""
