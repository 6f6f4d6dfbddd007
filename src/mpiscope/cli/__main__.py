# SPDX-License-Identifier: BSD-3-Clause
"""python -m mpiscope.cli ... (the same as `mpiscope ...`)."""

import sys

from mpiscope.cli.main import main

sys.exit(main())
