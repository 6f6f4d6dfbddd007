# SPDX-License-Identifier: BSD-3-Clause
"""The self-contained HTML report: `mpiscope report RUN [RUN…] -o report.html`."""
