"""The protocol rules. Each check is a small function ``(ctx) -> findings``.

API error texts are verbatim from the public reports each rule cites (GitHub issues
and pull requests of the projects that hit them, and the providers' docs); OpenAI's older
``messages.[N]`` style is kept where that is what was quoted.
"""

from agentdbg.checker.context import Ctx, parse_arguments  # noqa: F401 - the rules' shared state
from agentdbg.checker.rules.calls import check_tool_calls, schema_problems  # noqa: F401
from agentdbg.checker.rules.content import check_content
from agentdbg.checker.rules.pairing import check_pairing
from agentdbg.checker.rules.request import _strict_problem, check_request  # noqa: F401

#: the checks ``checker.clean`` answers for: on a history it passes they would find nothing
MESSAGE_CHECKS = (check_pairing, check_tool_calls, check_content)
CHECKS = (check_request, *MESSAGE_CHECKS)
#: what runs on a history ``checker.clean`` passed (a check added to CHECKS runs there too)
WHEN_CLEAN = tuple(run for run in CHECKS if run not in MESSAGE_CHECKS)
