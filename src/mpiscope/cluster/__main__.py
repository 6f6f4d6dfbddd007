"""python -m mpiscope.cluster up|list|exec|down ..."""

import sys

from .cli import main

sys.exit(main())
