"""The self-contained HTML report: `mpiscope report RUN [RUN…] -o report.html`."""
