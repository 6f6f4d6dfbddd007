"""Results as text, JSON and export formats (CSV, OSU), and time charts as data."""
