"""Model providers behind one small protocol (see ``base.Provider``).

Only ``openai_compat`` imports the ``openai`` package, and only when used.
"""
