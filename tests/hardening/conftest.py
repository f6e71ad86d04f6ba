"""Fixtures the proxy's hardening tests share: a scripted upstream and a real proxy in front of it."""

import pytest
from proxy_helpers import Proxy, Upstream


@pytest.fixture
def upstream():
    up = Upstream()
    yield up
    up.stop()


@pytest.fixture
def proxy(upstream, tmp_path):
    started = Proxy(upstream.url, tmp_path)
    yield started
    started.stop()
