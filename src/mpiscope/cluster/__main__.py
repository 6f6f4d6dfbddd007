"""python -m mpiscope.cluster up|list|exec|down ... (the same as `mpiscope cluster ...`)."""

import sys

from ..cli import main

sys.exit(main(["cluster", *sys.argv[1:]]))
