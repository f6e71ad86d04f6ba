"""Tests of agentdbg.report (a package, so its conftest does not shadow tests/conftest.py)."""
