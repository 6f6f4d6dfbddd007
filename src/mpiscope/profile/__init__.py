# SPDX-License-Identifier: BSD-3-Clause
"""Profiles of real applications: the interposition library (native/pmpi/, built
per MPI), running an application under it, its per-rank files stored as a run
of kind "profile", and what is read from them (distributions, channels, peers,
call sites, tuning weights)."""
