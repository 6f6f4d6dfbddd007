# SPDX-License-Identifier: BSD-3-Clause
"""What a run leaves behind: raw per-rank files read, ingested into Parquet, catalogued, and turned into samples."""
