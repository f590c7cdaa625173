"""`memd mcp`: the memory directories served over the Model Context Protocol.

`writing` plans a `memory_write` (pure: frontmatter in the directory's
dialect, one index line, lint-clean or refused); `tools` carries out each
tool for the server's one project; `install` merges the server into Claude
Code's user configuration and prints snippets for other clients (pure);
`server` registers the tools and the prompt resource on the official `mcp`
SDK and runs it over stdio (the only module that imports `mcp`, so no other
command pays for it).

May import: `memd.claude_code`, `memd.projects`, `memd.memory`, `memd.lint`,
`memd.snapshot`, `memd.kairos`, `memd.recall`, `memd.history`, `memd.truth`, the shared
top-level modules; `server` also imports the `mcp` SDK.
"""
