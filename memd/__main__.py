"""`python -m memd` runs the CLI (the `memd` script starts faster)."""

from memd.cli.main import main

raise SystemExit(main())
