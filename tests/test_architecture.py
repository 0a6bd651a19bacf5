"""DESIGN.md's layering, held by parsing every import in the packages and scripts."""

import ast
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
    "onnxruntime": ("vision/detector", "scripts/quantize"),
    "sqlite3": ("pipeline/journal",),
    "ultralytics": ("scripts/",),
    "torch": ("scripts/",),
}
STDLIB = set(sys.stdlib_module_names)


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
    runtime += [p for p in python_files("pipeline") if p.name != "synth_cli.py"]
    for path in runtime:
        text = path.read_text(encoding="utf-8")
        assert "vision.synth" not in text, f"{path.relative_to(ROOT)} imports vision.synth"


def test_the_checker_sees_imports():
    """Guard the guard: the parser finds imports, so the tests above cannot pass vacuously."""
    assert "paigow" in imports(ROOT / "pipeline" / "game_cli.py")
    assert len(python_files("paigow")) >= 5
