"""What a command does before it imports its libraries, to start faster.

``jsonschema`` (which Ray imports in every process, for runtime environments) imports ``rfc3987_syntax`` when it
is installed (Jupyter's packages pull it in with ``jsonschema[format-nongpl]``) to check IRI formats, and that
module builds a Lark grammar at import: about 1 s of CPU on a 2-core machine, on the path of every command that
starts Ray. Nothing here validates IRIs, so a command marks the module absent and jsonschema skips that check.
"""

from __future__ import annotations

import sys

UNUSED_SLOW_IMPORTS = ("rfc3987_syntax",)
"""Optional imports of our dependencies that cost seconds and serve nothing of ours."""


def skip_unused_slow_imports() -> None:
    """Make `UNUSED_SLOW_IMPORTS` fail as not installed, unless something already imported them."""
    for name in UNUSED_SLOW_IMPORTS:
        sys.modules.setdefault(name, None)  # type: ignore[assignment]  # None: ``import`` raises ImportError
