"""The layer rules of the code base, checked on every import statement (lazy ones inside functions too).

The packages point one way (STYLE: layers that point one way): the simulator knows nothing of learning
frameworks, the league nothing of the game, serving nothing of training, and nothing imports the
application. A rule broken here is a design question, not a lint nit: move the code, or change the rule
here with a reason.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("common", "envs", "policies", "league", "serving", "osrs_rllib")
RL_FRAMEWORKS = ("ray", "torch", "gymnasium")


@dataclass(frozen=True)
class Layer:
    """Modules under `path` (a package or a module file) may import none of `forbidden` (dotted prefixes)."""

    path: str
    forbidden: tuple[str, ...]
    why: str


LAYERS: tuple[Layer, ...] = (
    Layer(
        "common",
        (*RL_FRAMEWORKS, "numpy", "envs", "policies", "league", "serving", "osrs_rllib"),
        "the bottom layer: standard library only, so that every package, the league included, may use it",
    ),
    Layer(
        "envs/nh",
        (*RL_FRAMEWORKS, "envs.gym_env", "envs.rllib_env", "envs.opponents", "policies", "league", "serving",
         "osrs_rllib"),
        "the simulator is plain Python + numpy: the reference engine that every adapter wraps",
    ),
    Layer(
        "envs/opponents",
        (*RL_FRAMEWORKS, "envs.gym_env", "envs.rllib_env", "policies", "league", "serving", "osrs_rllib"),
        "scripted opponents act through the simulator's action contract only",
    ),
    Layer(
        "envs/options.py",
        (*RL_FRAMEWORKS, "envs.gym_env", "envs.rllib_env", "policies", "league", "serving", "osrs_rllib"),
        "the adapters' shared configuration rules need neither adapter nor framework",
    ),
    Layer(
        "envs/gym_env.py",
        ("ray", "torch", "envs.rllib_env", "policies", "league", "serving", "osrs_rllib"),
        "the gymnasium adapter needs neither RLlib nor torch",
    ),
    Layer(
        "envs/rllib_env.py",
        ("torch", "envs.gym_env", "policies", "league", "serving", "osrs_rllib"),
        "the RLlib adapter wraps the engine, not the other adapter or the policies that play in it",
    ),
    Layer(
        "league",
        (*RL_FRAMEWORKS, "envs", "policies", "serving", "osrs_rllib"),
        "the league is matchmaking and ratings over player ids: it knows no game and no framework",
    ),
    Layer(
        "policies",
        ("league", "serving", "osrs_rllib"),
        "the network and its model files are served and exported without the application",
    ),
    Layer(
        "serving",
        ("league", "osrs_rllib"),
        "serving loads model files and ladder rungs; it never imports the trainer or the application",
    ),
)


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every absolute module name imported anywhere in `path`, with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _files(layer_path: str) -> list[Path]:
    path = ROOT / layer_path
    return [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))


def _matches(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_every_package_is_covered_by_a_rule_or_is_the_application() -> None:
    covered = {layer.path.split("/")[0] for layer in LAYERS} | {"osrs_rllib"}
    assert covered == set(PACKAGES)
    for layer in LAYERS:
        assert _files(layer.path), f"{layer.path}: no Python files (stale rule)"


@pytest.mark.parametrize("layer", LAYERS, ids=[layer.path for layer in LAYERS])
def test_layer_imports_point_one_way(layer: Layer) -> None:
    broken = [
        f"{path.relative_to(ROOT)}:{line} imports {module} ({layer.why})"
        for path in _files(layer.path)
        for line, module in _imports(path)
        if any(_matches(module, prefix) for prefix in layer.forbidden)
    ]
    assert not broken, "\n".join(broken)


def test_nothing_imports_the_application() -> None:
    broken = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for package in PACKAGES
        if package != "osrs_rllib"
        for path in _files(package)
        for line, module in _imports(path)
        if _matches(module, "osrs_rllib")
    ]
    assert not broken, "\n".join(broken)


def test_serving_does_not_import_the_trainer() -> None:
    """Serving reaches the application through nothing; this pins the trainer separately because it is
    the heaviest thing a serving replica could pull in by accident (RLlib's whole algorithm stack)."""
    broken = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in _files("serving")
        for line, module in _imports(path)
        if _matches(module, "osrs_rllib.training") or _matches(module, "ray.rllib.algorithms")
    ]
    assert not broken, "\n".join(broken)


# ---- the application's packages (docs/architecture.md, "The application's packages") ---------------------------
APP = ROOT / "osrs_rllib"
APP_LAYERS: dict[str, tuple[str, ...]] = {
    "config": (),
    "experiments": (),
    "replay": (),
    "evaluation": ("experiments", "replay"),
    "training": ("config", "evaluation", "experiments", "replay"),
    "exploit": ("config", "evaluation", "experiments", "training"),
    "shipping": ("config", "evaluation", "experiments", "exploit", "training"),
    "analysis": ("config", "evaluation", "experiments", "replay", "training"),
    "play": ("config", "evaluation", "replay"),
    "commands": ("analysis", "config", "evaluation", "experiments", "exploit", "play", "replay", "shipping",
                 "training"),
}
"""Each package of the application and the packages it may import: the data flows one way, a config becomes a run
(training), a run becomes checkpoints and shipped models (exploit, shipping), and models fight (evaluation) and are
recorded (replay); the commands sit on top, ``cli.py`` on them."""
LAZY_PACKAGES = ("config", "experiments", "evaluation", "training", "training.sampling", "exploit", "shipping")
"""Packages whose ``__init__`` names their entry points in a table, imported on first use (`common.lazy`)."""


def _app_package(path: Path) -> str | None:
    parts = path.relative_to(APP).parts
    return parts[0] if len(parts) > 1 else None


def _app_imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every absolute import of the application in `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and _matches(node.module, "osrs_rllib"):
            found.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names if _matches(a.name, "osrs_rllib")]
    return found


def test_the_application_is_packages_and_its_entry_point() -> None:
    flat = sorted(p.name for p in APP.glob("*.py") if p.name not in ("__init__.py", "cli.py", "__main__.py"))
    assert not flat, f"modules directly under osrs_rllib/ (put each in the package of its job): {flat}"
    packages = {p.name for p in APP.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(APP_LAYERS), "every package has a line in APP_LAYERS (and docs/architecture.md)"


@pytest.mark.parametrize("package", sorted(APP_LAYERS))
def test_application_packages_point_one_way(package: str) -> None:
    allowed = {package, *APP_LAYERS[package]}
    broken = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted((APP / package).rglob("*.py"))
        for line, module, names in _app_imports(path)
        for target in [module.split(".")[1] if module.count(".") else (names[0] if names else "")]
        if target not in allowed
    ]
    assert not broken, "\n".join(broken)


def test_packages_import_each_other_through_their_names() -> None:
    """Across packages, code imports a package's entry points (``from osrs_rllib.training import Trainer``), not its
    modules: a package may then move code between its modules without touching its users."""
    broken = []
    for path in sorted(APP.rglob("*.py")):
        own = _app_package(path)
        for line, module, _ in _app_imports(path):
            parts = module.split(".")
            if len(parts) > 2 and parts[1] != own and parts[1] in {p.split(".")[0] for p in LAZY_PACKAGES}:
                broken.append(f"{path.relative_to(ROOT)}:{line} imports {module}: import from osrs_rllib.{parts[1]}")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_a_packages_names_resolve_and_shadow_no_module(package: str) -> None:
    import importlib

    module = importlib.import_module(f"osrs_rllib.{package}")
    submodules = {p.stem for p in (APP / package.replace(".", "/")).glob("*.py")} | {
        p.name for p in (APP / package.replace(".", "/")).iterdir() if (p / "__init__.py").is_file()
    }
    assert not set(module._EXPORTS) & submodules, "a name that is also a module's would depend on import order"
    for name in module._EXPORTS:
        assert getattr(module, name) is not None, name
    assert module.__doc__ and len(module.__doc__) > 80, "a paragraph saying what the package owns"


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        ("envs.nh.engine", ("ray", "torch", "gymnasium")),
        ("envs.opponents", ("ray", "torch", "gymnasium")),
        ("envs.gym_env", ("ray", "torch")),
        ("policies.network", ("ray",)),
        ("policies.model_file", ("ray",)),
    ],
)
def test_importing_a_layer_loads_no_framework_it_does_not_need(module: str, absent: tuple[str, ...]) -> None:
    """The static rules above miss imports made by third parties on our behalf; a fresh interpreter does not."""
    code = f"import sys, {module}; bad = {set(absent)!r} & set(sys.modules); assert not bad, bad"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
