"""Real transcripts, made once per test session (see report_fixtures.py)."""

from __future__ import annotations

import pytest

from .report_fixtures import make_all


@pytest.fixture(scope="session")
def made(tmp_path_factory):
    """Real transcripts, keyed by what made them."""
    return make_all(tmp_path_factory.mktemp("transcripts"))
