"""Reading memory files: topic files, their YAML, the dialects, the index, a directory.

The topic-file parser and its capped safe YAML loader, the two frontmatter
dialects, the `MEMORY.md` parser, and the directory reader (full walk and
incremental re-read). Readers are bounded and never follow a link out of a
memory directory; bad content becomes diagnostics, never an exception.

May import: `memd.claude_code`, the shared top-level modules, PyYAML (lazily).
"""
