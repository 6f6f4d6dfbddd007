"""The C programs as the Python side sees them: building the engine, and what it says it measures (--describe)."""
