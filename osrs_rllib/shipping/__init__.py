"""Shipping: a finished run becomes ``models/NAME.nhmodel`` and its card, by the rule its config states.

`run` opens a finished run and copies the candidates its rule names; `ship` measures them against the rung (with a
floor), probes the finalists with exploit runs, picks one, and writes the model file (on CPU, with its provenance in
the metadata), the card and ``ship.json``; `card` prints the card from those measurements.
"""

from __future__ import annotations

from common.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ShipError": "ship",
    "exploitability": "ship",
    "ship_run": "ship",
    "card_markdown": "card",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
