# SPDX-License-Identifier: BSD-3-Clause
"""How the `mpiscope` process ends after `mpiscope run`: at once, once its
output is flushed. The interpreter's own shutdown (tearing down numpy's,
pyarrow's and the samples' objects) would otherwise come after the table.
Only the entry points end the process this way; main() called inside another
program returns as any function does."""

import os
import sys

_finished = False


def finished() -> None:
    """Says that the run command has written and closed everything it makes,
    so nothing is left for the interpreter's shutdown to do."""
    global _finished
    _finished = True


def end(code) -> None:
    """Ends the process with `code` (main()'s return): right away after a
    finished run whose output flushes, else as sys.exit does."""
    if _finished and isinstance(code, int):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):  # a reader gone, a stream closed: the usual exit says so
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


def console() -> None:
    """The `mpiscope` console script."""
    from mpiscope.cli.main import main

    end(main())
