"""mpiscope: measure, explain and improve MPI communication performance."""

SCHEMA_VERSION = 1  # raw files and Parquet datasets; independent of the package version
