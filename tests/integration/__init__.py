"""End to end: the engine and the CLI through the real SDK and the fake server."""
