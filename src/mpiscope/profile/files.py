# SPDX-License-Identifier: BSD-3-Clause
"""Where a profile run keeps what: the per-rank files the library writes
(profile/rank-<r>.json, .trace; Open MPI's monitoring output in
library-view/) and the tables ingest makes of them."""

RAW_DIR = "profile"  # rank-<r>.json (+ rank-<r>.trace with --trace)
MONITORING_DIR = "library-view"  # Open MPI's pml monitoring files: prof.<r>.prof
CELLS = "profile_cells.parquet"  # rank × call × communicator size × channel × size bin
PEERS = "profile_peers.parquet"  # rank × peer × direction: user point-to-point bytes and messages
SITES = "profile_sites.parquet"  # rank × call × call site, symbolized
TRACE = "profile_trace.parquet"  # with --trace: every call, on rank 0's clock
COMMS = "profile_comms.parquet"  # with --trace: the communicators the trace names, as world ranks
LIBRARY = "library_view.parquet"  # with --library-view: what Open MPI really sent, by kind
LIBRARY_COLLS = "library_colls.parquet"  # with --library-view: its messages per blocking collective call
KIND = "profile"
CHANNELS = ("self", "node", "net", "none")
