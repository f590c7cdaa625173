"""`python -m memd` runs the CLI (the `memd` script starts faster)."""

from memd.cli import main

raise SystemExit(main())
