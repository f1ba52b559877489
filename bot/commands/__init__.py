"""One module per CLI verb: `register(parser)` adds its options, `run(args)` returns the exit code."""
