"""One module per `memd` subcommand: `add_arguments(parser)` and `run(args)`."""
