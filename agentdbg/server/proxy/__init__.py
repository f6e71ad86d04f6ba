"""``agentdbg proxy``: sit between an app and its model endpoint and check its loop."""
