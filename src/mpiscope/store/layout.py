"""Where runs live under an output root: OUT/<run_id>/ holding its
context.json, and OUT/catalog.duckdb indexing them. Hidden directories
are runs still being written (.<run_id>.partial) or being deleted
(.<run_id>.removing). Standard library only:
`mpiscope runs` asks this before anything heavier is imported."""

import os

SCHEMA_VERSION = 1  # of the run context and Parquet datasets; independent of the package version
DEFAULT_OUT = "mpiscope-runs"     # the output root unless --out, MPISCOPE_OUT or a config file says
CONTEXT_FILE = "context.json"
CATALOG_FILE = "catalog.duckdb"
QUALITY_FILE = "quality.json"     # per-series verdicts (stats/quality.py)


def context_files(out_root) -> list[str]:
    """OUT/<dir>/context.json of every visible run directory, by directory name."""
    try:
        entries = os.scandir(out_root)
    except (FileNotFoundError, NotADirectoryError):
        return []
    with entries:
        names = sorted(e.name for e in entries if e.is_dir() and not e.name.startswith("."))
    paths = (os.path.join(out_root, name, CONTEXT_FILE) for name in names)
    return [p for p in paths if os.path.isfile(p)]
