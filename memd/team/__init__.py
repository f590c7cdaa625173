"""Team memory through git: a project's `memory/team/` as a working tree of a remote.

`merge` holds the pure conflict rules (the MEMORY.md union, the name of
their copy of a file both sides changed, the frontmatter it must carry);
`index_budget` compacts a merged index that would pass the agent's cut;
`git` runs the real `git` CLI with a timeout, a scrubbed environment and
every URL's credentials redacted; `sync` commits, fetches, merges, pushes
and recovers from a sync killed half-way; `state` keeps each team dir's
last result and backoff; `schedule` is what the daemon calls; `conflicts`
lists the copies that still wait for a person, for `memd status`, lint and
the SessionStart hook.

May import: `memd.agent`, `memd.memory`, `memd.lint`, the shared top-level modules.
"""
