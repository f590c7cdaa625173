"""memd's release: a leaf module, so no module imports the package root for it.

pyproject.toml reads this value (setuptools' dynamic `version`), so there is
one copy of it.
"""

from __future__ import annotations

__version__ = "0.1.0"
