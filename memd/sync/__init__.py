"""Personal sync: a user's memory for every project, through their own git remote.

`identity` derives a project's stable identity (the pure rules are in
`memd.agent.identity`) by asking the hardened git of `memd.team.git`;
`engine` keeps one repository in the state dir whose ``projects/<identity>/``
folders are placed in each project's memory dir on this machine, and runs
team sync's merge engine (`memd.team.sync`, with a `Layout`) over them;
`schedule` is what the daemon calls.

May import: `memd.agent`, `memd.memory`, `memd.lint`, `memd.team`,
`memd.history`, the shared top-level modules.
"""
