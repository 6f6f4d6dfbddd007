# SPDX-License-Identifier: BSD-3-Clause
"""Results as text, JSON and export formats (CSV, OSU), and time charts as data."""

EXPORT_FORMATS = ("csv", "json", "osu", "otf2")  # views/export.py; otf2: profile/otf2_export.py
