"""Use cases: typed arguments in, data out. Routes call them; they call the store."""
