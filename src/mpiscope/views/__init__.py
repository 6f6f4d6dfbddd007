# SPDX-License-Identifier: BSD-3-Clause
"""Results as text and JSON, the export formats (exporters/), and time charts as data."""
