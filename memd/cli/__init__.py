"""The `memd` command line: `main` dispatches to one module per command.

`main` tries the warm `memd prompt` path before argparse is imported; each
module in `commands` adds its arguments and runs. CLI errors are one line on
stderr and a non-zero exit.

May import: everything in `memd`.
"""
