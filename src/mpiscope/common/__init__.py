"""What every layer uses: error types, atomic writes, JSON-able values, the size syntax."""
