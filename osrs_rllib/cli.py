"""The `osrs-rllib` command line: the app, and every command group registered in one place.

The commands themselves live in `osrs_rllib/commands/` (one module per group); each parses its options,
calls the library and prints. `osrs-rllib --help` lists them in the order registered here.

Nothing heavy is imported here or at the top of a command module (the library loads inside each command's
body), so that ``--help``, ``version``, ``jobs`` and ``serve status`` start in well under a second:
tests/osrs_rllib/test_cli_startup.py checks that no Ray, torch or play web server is loaded to list the commands,
and benchmarks/cli_startup.py times them.
"""

from __future__ import annotations

from common.startup import skip_unused_slow_imports

skip_unused_slow_imports()  # before anything imports Ray (common/startup.py)

import typer  # noqa: E402

from common.stops import exit_quietly_on_signals  # noqa: E402
from osrs_rllib.commands import (  # noqa: E402
    bc,
    config,
    contract,
    fight,
    jobs,
    mixture,
    outcome,
    play,
    rate,
    replay,
    serve,
    ship,
    training,
    version,
)

exit_quietly_on_signals()  # a stop while a command loads exits 0, not killed by the signal (common/stops.py)

app = typer.Typer(no_args_is_help=True, help="Train, rate, analyse and serve OSRS NH PvP agents.")

COMMAND_GROUPS = (
    version, fight, replay, contract, config, training, mixture, ship, jobs, rate, bc, serve, outcome, play,
)  # fmt: skip
"""Every command module, in the order ``--help`` lists its commands (groups of subcommands come last)."""

for group in COMMAND_GROUPS:
    group.register(app)

if __name__ == "__main__":
    app(prog_name="osrs-rllib")
