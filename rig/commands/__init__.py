"""Command-line subcommands: thin wrappers that parse options and call the layers."""
