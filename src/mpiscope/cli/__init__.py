"""The command line: one module per command group, shared options defined once."""
