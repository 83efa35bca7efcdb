"""The replay viewer: one self-contained HTML page per fight.

The page is `templates/viewer.html` with its CSS, its JavaScript (the fight view `fightview.js`, shared with
`osrs-rllib play`, and the player `viewer.js`) and the replay's JSON pasted inline:
no network access, no CDN, no fonts or images (everything is drawn with inline SVG and CSS), so the file
can be mailed, attached to an issue or opened from disk years later. `show_replay` in
`osrs_rllib.analysis` wraps the same page in an iframe for Jupyter.
"""

from __future__ import annotations

import html
import os
import warnings
from importlib import resources
from pathlib import Path

from common.atomic_files import write_text_atomic
from osrs_rllib.replay.format import Replay, load_replay

_PACKAGE = "osrs_rllib.replay"


def _template(name: str) -> str:
    return resources.files(_PACKAGE).joinpath("templates", name).read_text(encoding="utf-8")


def _script_safe(text: str) -> str:
    """JSON made safe inside a ``<script>`` element: no ``</script>`` or ``<!--`` can end it early."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(replay: Replay | str | os.PathLike[str]) -> str:
    """The viewer page of a replay (a `Replay` or a replay file's path) as one HTML string."""
    rep = replay if isinstance(replay, Replay) else load_replay(replay)
    names = " vs ".join(p.get("name", "?") for p in rep.players)
    title = f"{names} · {rep.header.get('build')} {rep.header.get('fight_type')} · seed {rep.seed}"
    page = _template("viewer.html")
    # Substitute the data last: the replay's text must never be scanned for placeholders.
    for key, value in (
        ("__TITLE__", html.escape(title)),
        ("__CSS__", _template("viewer.css")),
        ("__FIGHT_VIEW__", _template("fightview.js")),
        ("__JS__", _template("viewer.js")),
    ):
        page = page.replace(key, value)
    head, sep, tail = page.partition("__DATA__")
    if not sep:
        raise RuntimeError("viewer.html lost its __DATA__ placeholder")
    return head + _script_safe(rep.to_json()) + tail


def write_html(replay: Replay | str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Write the viewer page atomically to `out` (temporary file + rename) and return its path."""
    return write_text_atomic(out, render_html(replay))


JUPYTER_HEIGHT_PX = 900
"""Height of the inline viewer in a notebook (the page lays out for ~1300 × 880)."""


def show_replay(replay: Replay | str | os.PathLike[str], height: int = JUPYTER_HEIGHT_PX) -> object:
    """The viewer inline in Jupyter: an IPython HTML object holding an ``<iframe srcdoc=...>`` of the page.

    An iframe keeps the page's CSS and key handlers apart from the notebook's, and ``srcdoc`` needs no file
    or server, so it works the same in JupyterLab, classic notebooks and nbclient-executed output.

    Raises:
        ReplayError: The replay file cannot be read.
    """
    from IPython.display import HTML

    page = render_html(replay)
    markup = (
        f'<iframe srcdoc="{html.escape(page, quote=True)}" sandbox="allow-scripts" '
        f'style="width: 100%; height: {int(height)}px; border: 0; border-radius: 10px; background: #0f1115;">'
        "</iframe>"
    )
    with warnings.catch_warnings():
        # IPython suggests its IFrame for any <iframe>; IFrame needs a URL, and srcdoc is the point here
        warnings.filterwarnings("ignore", message="Consider using IPython.display.IFrame", category=UserWarning)
        return HTML(markup)
