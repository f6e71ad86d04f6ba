"""The environment the processes of these tests run in: no key, no endpoint, no network."""

import os

NO_NETWORK = {var: "http://127.0.0.1:9" for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                                                   "http_proxy", "https_proxy", "all_proxy")}


def clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "OTEL_"))}
    return {**env, **NO_NETWORK, "NO_PROXY": "127.0.0.1,localhost", "PYTHONUNBUFFERED": "1", **extra}
