"""Fixtures shared by every test folder."""

import importlib.util
import sys
from pathlib import Path

import pytest
import zmq

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture
def load_script():
    """A script of ``scripts/`` imported by name (it is registered in ``sys.modules``: its
    dataclasses look their module up while it loads)."""

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture
def ctx():
    """A ZeroMQ context of the test's own, destroyed without lingering."""
    context = zmq.Context()
    yield context
    context.destroy(linger=0)
