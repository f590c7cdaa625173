"""Installing memd as a user service: systemd units and launchd agents.

`units` renders the unit and plist text (pure); `install` plans and carries
out install, uninstall and status with `systemctl` or `launchctl`.

May import: the shared top-level modules.
"""
