"""The rules-by-format table, made from the registry: each format's checker says what it
reports (``REPORTS`` beside its rules), Chat Completions' column comes from ``RULES``.

    python scripts/rules_table.py        # the markdown table
"""

from __future__ import annotations

from agentdbg.checker.findings import ERROR, RULES
from agentdbg.i18n import N_

FORMATS = (("chat", "Chat Completions"), ("responses", "Responses"),
           ("anthropic", "Anthropic Messages"), ("gemini", "Gemini"))
ACROSS = "across requests (the proxy)"


def _chat_mark(rule: str) -> str:
    info = RULES[rule]
    if info.scope != "chat":
        return "—"
    if info.profiles:
        return "P " + ", ".join(f"`{p}`" for p in info.profiles)
    mark = "E" if info.severity == ERROR else "W"
    from agentdbg.checker.profiles import PROFILES

    stricter = [p for p, profile in PROFILES.items() if rule in profile.errors]
    return f"{mark} (E under {', '.join(f'`{p}`' for p in stricter)})" if stricter and mark == "W" \
        else mark


def columns() -> dict[str, dict[str, str]]:
    """format name -> rule -> mark."""
    from agentdbg.checker.formats import anthropic, gemini, responses

    out = {"chat": {r: _chat_mark(r) for r in RULES if RULES[r].scope == "chat"},
           "responses": dict(responses.REPORTS), "anthropic": dict(anthropic.REPORTS),
           "gemini": dict(gemini.REPORTS)}
    out["chat"]["thought-signature-missing"] = "P `gemini`"
    if out["chat"].get("duplicate-tool-call-id") == "E":   # rules/pairing.py: a later turn's reuse
        out["chat"]["duplicate-tool-call-id"] = "E (W when a later turn reuses an id)"
    for rule in (r for r in RULES if RULES[r].scope == "conversation"):
        for marks in out.values():
            marks[rule] = "W"
    return out


def rules_table() -> str:
    """The markdown table: rules with the same marks in every format share a row."""
    cols = columns()
    rows: dict[tuple[str, ...], list[str]] = {}
    for rule in RULES:
        marks = tuple(cols[name].get(rule, "—") for name, _ in FORMATS)
        if any(m != "—" for m in marks):
            rows.setdefault(marks, []).append(rule)
    head = "| rules | " + " | ".join(label for _, label in FORMATS) + " |"
    lines = [head, "|---" * (len(FORMATS) + 1) + "|"]
    for marks, rules in rows.items():
        lines.append(f"| {' '.join(f'`{r}`' for r in rules)} | " + " | ".join(marks) + " |")
    return "\n".join(lines) + "\n"


def rule_rows() -> list[tuple[str, str, tuple[str, ...]]]:
    """Every rule a request is judged by, as ``check --rules`` lists it: (id, what it means,
    its mark in each format of ``FORMATS``), in the registry's order."""
    cols = columns()
    rows = []
    for rule, info in RULES.items():
        marks = tuple(cols[name].get(rule, "—").replace("`", "") for name, _ in FORMATS)
        if any(m != "—" for m in marks):
            rows.append((rule, info.summary, marks))
    return rows


LEGEND = N_("E: error (the API rejects it) · W: warning · P: an error only under the profile "
            "named · —: does not apply")
#: the words some marks carry after their letter, for ``check --rules`` in another language
QUALIFIERS = (N_("E under {profiles}"), N_("W when a later turn reuses an id"),
              N_("W with store: false"), N_("E on Gemini 3 models (chat: P gemini)"))
