# SPDX-License-Identifier: BSD-3-Clause
"""python -m mpiscope.cli ... (the same as `mpiscope ...`)."""

from mpiscope.cli.main import main
from mpiscope.cli.run_exit import end

end(main())
