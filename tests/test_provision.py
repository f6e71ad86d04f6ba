"""The test command prepares what the suite needs (``tests/provision.py``): it says what it
prepares, and a browser it cannot provide is one failure with one line, not an error per test."""

from __future__ import annotations

import sys

import pytest
from support import ROOT

BROWSER_TESTS = """
import pytest

pytestmark = pytest.mark.browser

@pytest.fixture(scope="module")
def browser():
    import provision
    return provision.chromium_path()

@pytest.mark.parametrize("n", [1, 2, 3])
def test_page(browser, n):
    assert browser
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "tests"))
    pytester.makeconftest('pytest_plugins = ["provision"]')
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "tests"))  # for a subprocess session
    pytester.makepyfile(test_report_page=BROWSER_TESTS, test_other="def test_other():\n    pass\n")
    return pytester


def test_a_browser_that_cannot_be_installed_is_one_failure_with_one_line(suite, monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTDBG_CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setenv("AGENTDBG_TEST_APT", "false")        # apt-get that fails
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1, deselected=3)
    out = result.stdout.str()
    assert "agentdbg tests: preparing the HTML report's browser tests" in out
    assert "apt-get update && apt-get install -y chromium fonts-noto-cjk" in out
    assert "(3 test(s) not run)" in out
    assert "ERROR" not in out and "Traceback" not in out


def test_an_install_that_leaves_the_path_missing_says_which_path(suite, monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTDBG_CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setenv("AGENTDBG_TEST_APT", "true")         # apt-get that "succeeds"
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1, deselected=3)
    assert f"{tmp_path / 'no-chromium'} is still missing after installing" in result.stdout.str()


def test_a_present_browser_is_used_as_is_and_nothing_is_said(suite, monkeypatch):
    monkeypatch.setenv("AGENTDBG_CHROMIUM", sys.executable)  # any file that exists
    monkeypatch.setenv("AGENTDBG_TEST_APT", "false")
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    assert "agentdbg tests:" not in result.stdout.str()


def test_without_browser_tests_selected_nothing_is_installed(suite, monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTDBG_CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setenv("AGENTDBG_TEST_APT", "false")
    result = suite.runpytest("-p", "no:cacheprovider", "-k", "other")
    result.assert_outcomes(passed=1, deselected=3)
    assert "agentdbg tests:" not in result.stdout.str()


def test_a_framework_environment_that_cannot_be_built_is_one_failure(suite, monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTDBG_FRAMEWORK_VENVS", str(tmp_path / "venvs"))
    suite.makepyfile(test_fw="""
        import pytest

        @pytest.mark.framework_env("no-such-framework")
        @pytest.mark.parametrize("n", [1, 2])
        def test_app(n):
            pass
    """)
    result = suite.runpytest("-p", "no:cacheprovider", "test_fw.py")
    result.assert_outcomes(failed=1, deselected=2)
    out = result.stdout.str()
    assert "agentdbg tests: preparing the real-framework tests (tests/frameworks): building 1" in out
    assert "no framework environment: no-such-framework:" in out and "(2 test(s) not run)" in out


@pytest.mark.slow
def test_under_xdist_the_workers_agree_and_fail_once(suite, monkeypatch, tmp_path):
    pytest.importorskip("xdist")
    monkeypatch.setenv("AGENTDBG_CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setenv("AGENTDBG_TEST_APT", "false")
    result = suite.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    result.assert_outcomes(failed=1, passed=1)
    assert "(3 test(s) not run)" in result.stdout.str()


NPM_TESTS = """
import pytest

@pytest.mark.npm_packages("openai-agents-js")
@pytest.mark.parametrize("n", [1, 2, 3])
def test_node_app(n):
    pass
"""


@pytest.mark.parametrize("npm", ["missing", "failing"])
def test_npm_packages_that_cannot_be_installed_are_one_failure_with_one_line(suite, monkeypatch,
                                                                               tmp_path, npm):
    monkeypatch.setenv("AGENTDBG_NPM_CLIENTS", str(tmp_path / "npm-clients"))   # nothing cached
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if npm == "failing":   # npm there, the install refused (as with no registry)
        fake = bin_dir / "npm"
        fake.write_text("#!/bin/sh\necho 'npm error code E404' >&2\nexit 1\n")
        fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    suite.makepyfile(test_node=NPM_TESTS)
    result = suite.runpytest("-p", "no:cacheprovider", "test_node.py")
    result.assert_outcomes(failed=1, deselected=3)
    out = result.stdout.str()
    assert "no npm packages: openai-agents-js:" in out and "(3 test(s) not run)" in out
    assert ("npm is missing" if npm == "missing" else "npm error code E404") in out
    if npm == "failing":
        assert "preparing the Node apps' tests: installing @openai/agents@" in out
