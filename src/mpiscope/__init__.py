# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope: measure, explain and improve MPI communication performance.

The Python API (mpiscope/api.py): `mpiscope.load_run(path)`, `mpiscope.runs(out)`,
`mpiscope.run(MeasureRequest(...))`.
They are imported on first use, so `import mpiscope` (and every CLI start)
does not pay for pandas, pyarrow or DuckDB. `mpiscope.__version__` is the
installed distribution's version, whose one source is pyproject.toml.
`mpiscope.SCHEMA_VERSION` (of run contexts and datasets) is looked up on
first use too: every CLI start imports this package.
"""

_API = ("load_run", "runs", "Run", "run", "MeasureRequest", "LaunchRequest")
__all__ = ["SCHEMA_VERSION", *_API]


def __getattr__(name):
    if name == "__version__":
        from mpiscope.common.version import version

        globals()["__version__"] = version()  # looked up once, on first use
        return globals()["__version__"]
    if name == "SCHEMA_VERSION":
        from mpiscope.store.layout import SCHEMA_VERSION

        return SCHEMA_VERSION
    if name in _API:
        from mpiscope import api

        return getattr(api, name)
    raise AttributeError(f"module 'mpiscope' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | {"__version__", *__all__})
