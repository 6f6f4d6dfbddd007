"""What a run leaves behind: raw per-rank files read, ingested into Parquet, catalogued, and turned into samples."""
