"""The person's results per opponent, kept across games and server restarts in one JSON file.

Why a file of its own rather than the replays: the replays are the record of each game, but the table must be
read at every page load and must survive replays being deleted to save space. It is rewritten atomically after
every game (`common.atomic_files`), so a crash never leaves half a table.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from common.atomic_files import write_json_atomic
from osrs_rllib.play.session import GameSummary

logger = logging.getLogger(__name__)

SCORES_FORMAT = "osrs-rllib-play-scores/1"
_COUNTS = ("games", "won", "lost", "tied", "abandoned", "damage_dealt", "damage_taken", "prayer_right", "prayer_hits")


class ScoreTable:
    """Per opponent: games, won / lost / tied, abandoned games, damage and protection-prayer accuracy.

    Args:
        path: The JSON file (created on the first game; an unreadable one is set aside, not lost).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.rows: dict[str, dict[str, Any]] = {}
        if self.path.is_file():
            try:
                data = json.loads(self.path.read_text())
                rows = data.get("opponents", {}) if isinstance(data, dict) else {}
                self.rows = {str(k): self._row(v) for k, v in rows.items() if isinstance(v, dict)}
            except (OSError, json.JSONDecodeError) as exc:
                aside = self.path.with_suffix(f".unreadable-{int(time.time())}.json")
                logger.warning("score table %s unreadable (%s); starting a new one, the old one kept as %s",
                               self.path, exc, aside)  # fmt: skip
                self.path.replace(aside)

    @staticmethod
    def _row(raw: dict[str, Any]) -> dict[str, Any]:
        row: dict[str, Any] = {k: int(raw.get(k, 0) or 0) for k in _COUNTS}
        row["last_unix"] = raw.get("last_unix")
        return row

    def record(self, summary: GameSummary) -> list[dict[str, Any]]:
        """Add a finished game; returns the table (`to_json`)."""
        row = self.rows.setdefault(summary.opponent, self._row({}))
        row["games"] += 1
        row[summary.outcome if summary.outcome in ("won", "lost") else "tied"] += 1
        row["damage_dealt"] += summary.damage_dealt
        row["damage_taken"] += summary.damage_taken
        row["prayer_right"] += summary.prayer["you"]["right"]
        row["prayer_hits"] += summary.prayer["you"]["hits"]
        row["last_unix"] = time.time()
        self._save()
        return self.to_json()

    def record_abandoned(self, opponent: str) -> list[dict[str, Any]]:
        """A game left mid-fight (the tab closed): counted apart, not as a loss."""
        row = self.rows.setdefault(opponent, self._row({}))
        row["abandoned"] += 1
        row["last_unix"] = time.time()
        self._save()
        return self.to_json()

    def to_json(self) -> list[dict[str, Any]]:
        """One row per opponent (most games first), with the win rate (ties count half) and prayer accuracy."""
        out = []
        for name, row in sorted(self.rows.items(), key=lambda kv: (-kv[1]["games"], kv[0])):
            games = row["games"]
            out.append({
                "opponent": name,
                **row,
                "score": (row["won"] + 0.5 * row["tied"]) / games if games else None,
                "prayer_accuracy": row["prayer_right"] / row["prayer_hits"] if row["prayer_hits"] else None,
            })  # fmt: skip
        return out

    def _save(self) -> None:
        try:
            write_json_atomic(self.path, {"format": SCORES_FORMAT, "opponents": self.rows})
        except OSError as exc:  # a full disk must not end the game being played
            logger.warning("cannot write the score table %s: %s", self.path, exc)
