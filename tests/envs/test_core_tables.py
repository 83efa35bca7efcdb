"""The compiled core's generated tables are current, and the build's sources are all checked in.

`envs/nh/core/src/nh_tables.h` is generated from the Python engine's constants by
`envs/nh/core/gen_tables.py`; a constant changed in Python without regenerating would make the two
engines disagree, so this fails with the command that fixes it.
"""

from __future__ import annotations

import re
from pathlib import Path

from envs.nh import formulas
from envs.nh.core import gen_tables

REPO = Path(__file__).resolve().parents[2]


def test_generated_header_is_current() -> None:
    assert gen_tables.HEADER_PATH.read_text() == gen_tables.render(), (
        "envs/nh/core/src/nh_tables.h is stale: run `python -m envs.nh.core.gen_tables`"
    )
    assert gen_tables.main(["--check"]) == 0


def test_every_formula_constant_reaches_the_header() -> None:
    """Each UPPER_CASE number of formulas.py becomes a C constant with its value (a Factor as NUM/DEN)."""
    header = gen_tables.render()
    for name, value in vars(formulas).items():
        if not name.isupper():
            continue
        if isinstance(value, tuple) and len(value) == 2 and f"NH_{name}_NUM" in header:
            assert f"#define NH_{name}_NUM INT64_C({value[0]})" in header
            assert f"#define NH_{name}_DEN INT64_C({value[1]})" in header
        elif isinstance(value, tuple):
            assert f"NH_{name}[{len(value)}] = {{{', '.join(map(str, value))}}}" in header
        elif isinstance(value, float):
            assert f"#define NH_{name} {value!r}" in header
        else:
            assert f"#define NH_{name} INT64_C({value})" in header


def test_setup_builds_every_c_source() -> None:
    """A new .c file that setup.py does not list would build here by luck and fail elsewhere."""
    setup_text = (REPO / "setup.py").read_text()
    for path in (REPO / "envs/nh/core/src").iterdir():
        if path.suffix in {".c", ".h"}:
            assert re.search(rf'/{re.escape(path.name)}"', setup_text), f"setup.py does not list {path.name}"
