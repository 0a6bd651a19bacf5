"""DESIGN.md's layering, held by parsing every import in the packages and scripts."""

import ast
import graphlib
import itertools
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = {"paigow", "vision", "pipeline", "scripts"}
# What each of our packages may import of ours.
ALLOWED = {
    "paigow": {"paigow"},
    "vision": {"vision", "paigow"},
    "pipeline": {"pipeline", "vision", "paigow"},
    "scripts": OURS,
}
# Third-party modules that may be imported only from the given path prefixes.
CONFINED = {
    "zmq": ("pipeline/bus/",),
    # the runtime runs models in one place; scripts/quantize.py builds one offline
    "onnxruntime": ("vision/onnx", "scripts/quantize"),
    "sqlite3": ("pipeline/journal",),
    "ray": ("pipeline/cluster/",),
    # the browser console is the only web server
    "starlette": ("pipeline/console/",),
    "uvicorn": ("pipeline/console/",),
    "sse_starlette": ("pipeline/console/",),
    # the monitor serves metrics from one place; the fleet bench reads them
    "prometheus_client": ("pipeline/live/metrics", "scripts/bench_fleet"),
    "ultralytics": ("scripts/",),
    "torch": ("scripts/",),
}
STDLIB = set(sys.stdlib_module_names)
PACKAGES = ("paigow", "vision", "pipeline")  # importable packages (scripts/ are run by path)
ALLOWED_CYCLES: dict[frozenset[str], str] = {}
"""Import cycles tolerated for now (their modules -> why); add one only with its reason."""
MAX_MODULE_LINES = 450
LONG_MODULES: dict[str, str] = {}
"""Modules allowed over ``MAX_MODULE_LINES`` for now (path -> why); shrink, never grow, it."""


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


def python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_packages_import_only_downwards(package):
    for path in python_files(package):
        bad = (imports(path) & OURS) - ALLOWED[package]
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_paigow_uses_only_the_standard_library():
    for path in python_files("paigow"):
        third_party = imports(path) - STDLIB - {"paigow"}
        assert not third_party, f"{path.relative_to(ROOT)} imports {sorted(third_party)}"


def test_confined_modules_live_in_one_place():
    for package in ALLOWED:
        for path in python_files(package):
            rel = path.relative_to(ROOT).as_posix()
            for module, homes in CONFINED.items():
                if module in imports(path):
                    assert rel.startswith(homes), f"{rel} imports {module}; only {homes} may"


def test_runtime_never_imports_the_renderer():
    runtime = [p for p in python_files("vision") if "synth" not in p.parts]
    runtime += [p for p in python_files("pipeline") if p != ROOT / "pipeline" / "cli" / "synth.py"]
    for path in runtime:
        text = path.read_text(encoding="utf-8")
        assert "vision.synth" not in text, f"{path.relative_to(ROOT)} imports vision.synth"


def script_names() -> set[str]:
    """The module names a script of ``scripts/`` could be imported by (its file name)."""
    return {p.stem for p in (ROOT / "scripts").glob("*.py")}


def touches_sys_path(path: Path) -> bool:
    """``sys.path`` (or ``path`` imported from ``sys``) read or changed anywhere in the file."""
    nodes = list(ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))))
    attributes = {ast.unparse(n) for n in nodes if isinstance(n, ast.Attribute)}
    from_sys = {
        a.name
        for n in nodes
        if isinstance(n, ast.ImportFrom) and n.module == "sys"
        for a in n.names
    }
    return "sys.path" in attributes or "path" in from_sys


def test_scripts_import_packages_not_each_other():
    """What scripts share lives in the packages; a script is run by path and imported by no
    other, so none reaches a sibling through ``sys.path``."""
    for path in python_files("scripts"):
        rel = path.relative_to(ROOT).as_posix()
        siblings = imports(path) & (script_names() - {path.stem})
        assert not siblings, f"{rel} imports the scripts {sorted(siblings)}"
        assert not touches_sys_path(path), f"{rel} uses sys.path"


def module_name(path: Path) -> str:
    """``pipeline/cli/__init__.py`` -> ``pipeline.cli``; ``pipeline/cli/game.py`` ->
    ``pipeline.cli.game``."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _for_type_checkers(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:``: imports that never run."""
    return isinstance(node, ast.If) and ast.unparse(node.test) in {
        "TYPE_CHECKING",
        "typing.TYPE_CHECKING",
    }


def load_time_imports(path: Path) -> set[str]:
    """Absolute names of what ``path`` imports when it is loaded: statements outside functions
    (in a class body, an ``if`` or a ``try`` too), except under ``if TYPE_CHECKING:``. A
    ``from X import y`` yields ``X.y`` as well as ``X``, since ``y`` may be a submodule."""
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return  # runs when called, not when the module loads
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) + 1 - node.level] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
        for child in node.orelse if _for_type_checkers(node) else ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return out


def _most_specific(imported: str, modules: dict[str, Path]) -> str | None:
    """The longest of ``modules`` that ``imported`` is or lies in (None: not one of ours)."""
    parts = imported.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in modules:
            return ".".join(parts[:n])
    return None


def import_graph() -> dict[str, set[str]]:
    """Our module -> our modules it imports at load time. An imported name counts as its most
    specific module of ours (``from pipeline.cli import game``: ``pipeline.cli.game``;
    ``from pipeline.bus import AlertStore``: ``pipeline.bus``); a package an import passes
    through on the way is not counted (its ``__init__`` runs first, whoever imports it)."""
    modules = {module_name(p): p for package in PACKAGES for p in python_files(package)}
    graph = {}
    for name, path in modules.items():
        found = {_most_specific(imported, modules) for imported in load_time_imports(path)}
        graph[name] = found - {None, name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (first module repeated last), ignoring allowed cycles."""
    graph = {m: set(deps) for m, deps in graph.items()}
    for members in ALLOWED_CYCLES:
        for m in members:
            graph.get(m, set()).difference_update(members)
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return list(reversed(exc.args[1]))
    return None


def test_our_modules_import_no_cycle():
    """Each module of ours can be loaded before the modules that import it: none is used
    half-initialised by a module it imports. (Imports inside functions are not held here.)"""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_cycles():
    """Guard the guard: a back import in a graph is reported, and only there."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    cycle = find_cycle(graph)
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert all(after in graph[before] for before, after in itertools.pairwise(cycle))
    assert find_cycle({"a": {"b"}, "b": set(), "d": {"a", "b"}}) is None


def test_the_checker_sees_imports(tmp_path):
    """Guard the guard: the parser finds imports, so the tests above cannot pass vacuously."""
    assert "paigow" in imports(ROOT / "pipeline" / "cli" / "game.py")
    assert len(python_files("paigow")) >= 5
    assert {"evaluate", "build_datasets", "train_gpu"} <= script_names()
    sneaky = tmp_path / "sneaky.py"
    for text in ("import sys\nsys.path.insert(0, 'x')", "from sys import path\n"):
        sneaky.write_text(text, encoding="utf-8")
        assert touches_sys_path(sneaky), text
    sneaky.write_text("import os\nos.path.join('a')\n", encoding="utf-8")
    assert not touches_sys_path(sneaky)
    graph = import_graph()
    assert {"pipeline.cli.game", "pipeline.cli.common"} <= graph["pipeline.cli"]
    assert "pipeline.bus.endpoints" in graph["pipeline.cli.alerts"]
    assert "pipeline.bus.publisher" not in graph["pipeline.bus"]  # TYPE_CHECKING only


def test_modules_stay_short_enough_to_read():
    """No module of ours over ``MAX_MODULE_LINES`` lines but the listed ones, and the list holds
    no module that has since become short (or gone)."""
    files = [f for part in (*PACKAGES, "scripts") for f in python_files(part)]
    long = {
        f.relative_to(ROOT).as_posix()
        for f in files
        if len(f.read_text(encoding="utf-8").splitlines()) > MAX_MODULE_LINES
    }
    assert long <= set(LONG_MODULES), sorted(long - set(LONG_MODULES))
    assert set(LONG_MODULES) <= long, sorted(set(LONG_MODULES) - long)
