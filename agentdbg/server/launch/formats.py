"""The API families ``proxy -- CMD`` points a command at the proxy for, and the variables each
SDK reads to find its endpoint.

Each family has a path of its own on the proxy (``/openai/v1``, ``/anthropic``, ``/gemini``),
so a request says which endpoint the app meant, and the proxy relays it there: the
upstream that variable named before agentdbg changed it, or the family's public endpoint.

The variables, as the clients read them (looked up in their sources):

* OpenAI — ``OPENAI_BASE_URL``: the ``openai`` Python and Node clients, litellm (first);
  ``OPENAI_API_BASE``: litellm (second), LangChain's ``ChatOpenAI``. Key: ``OPENAI_API_KEY``.
* Anthropic — ``ANTHROPIC_BASE_URL``: the ``anthropic`` Python and TypeScript clients, Claude
  Code, litellm (second); ``ANTHROPIC_API_BASE``: litellm (first). Keys: ``ANTHROPIC_API_KEY``
  or ``ANTHROPIC_AUTH_TOKEN``.
* Gemini — ``GOOGLE_GEMINI_BASE_URL``: ``google-genai`` (Python), ``@google/genai`` (Node),
  Gemini CLI; ``GEMINI_API_BASE``: litellm. Keys: ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``.

The first variable is always set; the others only where the command's environment already
has them (litellm and LangChain read them before, or instead of, the first). A family is
pointed at the proxy only when the proxy relays one of its wire formats.
"""

from __future__ import annotations

from dataclasses import dataclass

PLACEHOLDER_KEY = "agentdbg-offline-placeholder-key"


@dataclass(frozen=True)
class Family:
    name: str                    # its path on the proxy: /NAME
    wires: tuple[str, ...]       # the wire formats it carries
    variables: tuple[str, ...]   # base-URL variables: every SDK reads the first
    keys: tuple[str, ...]        # API-key variables (a placeholder goes in the first)
    public: str                  # the public endpoint, as the SDKs' default base URL
    sdk_path: str                # what the base URL an SDK gets ends with (``/v1``: OpenAI's)
    relay_suffix: str            # added to an SDK's base URL: where the proxy relays to

    def proxy_url(self, root: str) -> str:
        """The base URL the command's SDK gets: the proxy, under this family's path."""
        return f"{root}/{self.name}{self.sdk_path}"

    def relay_target(self, base_url: str) -> str:
        """The URL the proxy relays this family to, from the base URL an SDK would use."""
        return base_url.rstrip("/") + self.relay_suffix

    def upstream_from(self, env: dict[str, str]) -> tuple[str, str | None]:
        """The endpoint the command's environment names (and which variable), else the public."""
        for var in self.variables:
            value = env.get(var, "").strip()
            if value:
                return value, var
        return self.public, None


FAMILIES = (
    Family("openai", ("chat", "responses"), ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
           ("OPENAI_API_KEY",), "https://api.openai.com/v1", "/v1", ""),
    Family("anthropic", ("anthropic",), ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"),
           ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"), "https://api.anthropic.com", "", "/v1"),
    Family("gemini", ("gemini",), ("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_BASE"),
           ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "https://generativelanguage.googleapis.com", "", ""),
)


def relayed(relayable: set[str] | frozenset[str]) -> tuple[Family, ...]:
    """The families the proxy relays (``relayable``: the wire formats it knows)."""
    return tuple(f for f in FAMILIES if relayable & set(f.wires))


def family(name: str) -> Family:
    return next(f for f in FAMILIES if f.name == name)
