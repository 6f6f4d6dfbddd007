# SPDX-License-Identifier: BSD-3-Clause
"""Error types that the CLI maps to exit codes."""


class UsageError(Exception):
    """Bad input from the user: the CLI prints the message and exits with 2.

    The message says what was wrong and what to do instead.
    """


class BuildFailed(Exception):
    """The engine did not compile with the MPI chosen: the CLI prints the
    compiler's message and exits with 1."""


class LaunchFailed(Exception):
    """An MPI launch the command depends on ended without its results: the CLI
    prints what failed and what to do, and exits with 1 (not bad input)."""
