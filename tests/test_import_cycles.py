"""No import cycles in any package (and none inside `envs/` in particular), not even ones that only type checkers
follow.

Why: a module that imports another only under ``if TYPE_CHECKING:`` still depends on it; `sim` and the rules it
runs (`actions`, `baseline`, `masks`, `observation`, `rewards`) used to import each other that way, and `state`
with `loadouts`. The graph below counts every import statement (module level, under
``TYPE_CHECKING`` and inside functions) between modules of `envs/`, so such a cycle cannot come back unseen:
depend on a protocol (`envs.nh.fight_protocols`) or move the shared names down a layer instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "envs"
PACKAGES = ("common", "envs", "policies", "league", "serving", "osrs_rllib")
"""Every package of the code base (`tests/test_layers.py` names the same ones)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(packages: tuple[str, ...] = (PACKAGE,)) -> dict[str, Path]:
    return {module_name(p): p for package in packages for p in sorted((ROOT / package).rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest known module that `name` (a module or a name inside one) refers to."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(packages: tuple[str, ...] = (PACKAGE,)) -> dict[str, set[str]]:
    """Module → the modules of `packages` it imports, by any import statement anywhere in its source."""
    modules = _modules(packages)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = mod.split(".") if is_package else mod.split(".")[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                # `from pkg import sub` imports the submodule `pkg.sub` when there is one.
                targets = [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                if not target.startswith(tuple(p + "." for p in packages)) and target not in packages:
                    continue
                found = _resolve(target, modules)
                if found is not None and found != mod:
                    graph[mod].add(found)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path that starts and ends at the same module, or None (depth-first search)."""
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(graph, white)
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = grey
        stack.append(node)
        for nxt in sorted(graph[node]):
            if colour[nxt] == grey:
                return [*stack[stack.index(nxt) :], nxt]
            if colour[nxt] == white and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        colour[node] = black
        return None

    for start in sorted(graph):
        if colour[start] == white and (found := visit(start)) is not None:
            return found
    return None


def test_envs_has_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, (
        "import cycle in envs/ (TYPE_CHECKING and function-level imports count): "
        + " -> ".join(cycle or [])
        + "; type the parameter with a protocol (envs/nh/fight_protocols.py) or move the shared names down a layer"
    )


def test_no_package_has_an_import_cycle() -> None:
    """The same rule across the whole code base: a cycle between application modules (`builds` and
    `fight` used to import each other) or between packages is as hard to follow as one inside `envs/`."""
    graph = import_graph(PACKAGES)
    assert {m.split(".")[0] for m in graph} == set(PACKAGES)
    cycle = find_cycle(graph)
    assert cycle is None, (
        "import cycle (TYPE_CHECKING and function-level imports count): "
        + " -> ".join(cycle or [])
        + "; depend on a protocol or move the shared names down a layer"
    )


def test_the_graph_sees_type_checking_and_function_level_imports(tmp_path: Path) -> None:
    """The checker itself: a cycle made only of a TYPE_CHECKING import and a lazy one is found."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    edges = import_graph()
    # sim imports the rules it runs at module level; the rules import the protocol, not sim.
    assert "envs.nh.actions" in edges["envs.nh.sim"]
    assert "envs.nh.fight_protocols" in edges["envs.nh.actions"]
    assert "envs.nh.loadouts.loadout" in edges["envs.nh.state"]


def test_fight_sim_provides_what_the_protocols_read() -> None:
    """`FightSim` must keep every member `FightView`/`FightControl` declare (checked at runtime: no mypy in CI)."""
    from envs.nh.fight_protocols import FightControl, FightView
    from envs.nh.sim import FightSim

    sim = FightSim(seed=0)
    sim.reset(seed=0)
    members: set[str] = set()
    for proto in (FightView, FightControl):
        members |= set(proto.__annotations__)
        members |= {n for n, v in vars(proto).items() if callable(v) and not n.startswith("_")}
    assert members >= {"params", "players", "stats", "events", "fight_mode", "rng", "opponent", "activate_prayers"}
    missing = sorted(m for m in members if not hasattr(sim, m))
    assert not missing, f"FightSim lacks {missing}, which envs/nh/fight_protocols.py promises"
    assert isinstance(sim.rng, np.random.Generator)
