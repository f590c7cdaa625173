"""Lint memory directories: the rule table, the engine and the output formats."""
