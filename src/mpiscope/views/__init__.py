"""Results as text, JSON and export formats (CSV, OSU), and time charts as data."""

EXPORT_FORMATS = ("csv", "json", "osu")  # what views/export.py writes
