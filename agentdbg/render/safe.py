"""Make untrusted text inert before it reaches the terminal: ``safe`` and ``one_line``.

The implementation lives in ``agentdbg.textsafe`` (the base layer) so that modules below
the renderers (the checker's input reader, the transcript reader) can escape what they
print too; renderers import it from here.
"""

from agentdbg.textsafe import one_line, safe

__all__ = ["one_line", "safe"]
