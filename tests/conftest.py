"""Fixtures shared by every test folder."""

import pytest
import zmq


@pytest.fixture
def ctx():
    """A ZeroMQ context of the test's own, destroyed without lingering."""
    context = zmq.Context()
    yield context
    context.destroy(linger=0)
