"""YAML files agentdbg reads (tools files, scripts): plain data only, bounded.

Safe types only (``SafeLoader``: no Python objects), at most ``MAX_BYTES`` of text, nesting
the parser can follow, and aliases that expand to at most ``MAX_VALUES`` values: a
few hundred bytes of ``&a [*b, *b, …]`` would otherwise become billions of values the
moment anything walks or serialises the data. Every error is a one-line ``ConfigError``
naming the file (and the line and column when there is one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentdbg.errors import ConfigError, where
from agentdbg.i18n import N_, Msg

MAX_BYTES = 5_000_000     # a tools file or script larger than this is a mistake
MAX_VALUES = 1_000_000    # values once every alias is expanded
#: what a file read here is called in its errors (``what``), for the message catalog
KINDS = (N_("tools file"), N_("script file"), N_("lesson file"))


def read_text(path: Path, what: str) -> str:
    """The file's text; ``what`` names it in errors ("tools file", "script file"). At most
    ``MAX_BYTES`` are read whatever the file is (``/dev/zero``, a FIFO, ``<(command)``), and a
    FIFO or pipe nobody writes is given up after ``paths.IDLE_SECONDS``."""
    from agentdbg.paths import read_bounded

    try:
        data = read_bounded(path, MAX_BYTES)
        if len(data) > MAX_BYTES:
            raise ConfigError(Msg(N_("{path}: more than {limit} bytes; a {what} is at most {limit} "
                                     "bytes"), {"path": path, "limit": MAX_BYTES, "what": Msg(what)}))
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(Msg(N_("{path}: no such {what}"), {"path": path, "what": Msg(what)})) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(Msg(N_("{path}: not UTF-8 text (byte {byte})"),
                              {"path": path, "byte": exc.start})) from None
    except IsADirectoryError:
        raise ConfigError(Msg(N_("{path}: is a directory, not a {what}"),
                              {"path": path, "what": Msg(what)})) from None
    except TimeoutError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ConfigError(Msg(N_("{path}: cannot read: {reason}"),
                              {"path": path, "reason": exc.strerror})) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")   # universal newlines, as before


def parse(path: Path, text: str) -> tuple[Any, Any]:
    """(data, node tree) of one YAML document; the node tree maps data back to lines."""
    import yaml

    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _check_expansion(path, node)
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(Msg(N_("{where}: invalid YAML: {problem}"),
                              {"where": where(path, line, col), "problem": problem})) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        col = exc.position - text.rfind("\n", 0, exc.position)
        raise ConfigError(Msg(N_("{where}: invalid YAML: unacceptable character #x{code}: {reason}"),
                              {"where": where(path, line, col), "code": f"{exc.character:04x}",
                               "reason": exc.reason})) from None
    except yaml.YAMLError as exc:
        raise ConfigError(Msg(N_("{where}: invalid YAML: {problem}"),
                              {"where": path, "problem": " ".join(str(exc).split())})) from None
    except RecursionError:
        raise ConfigError(Msg(N_("{path}: YAML nested too deeply"), {"path": path})) from None
    if "\\ud" in text.lower():  # JSON's "\\ud83d\\ude00" is one character, YAML's is two
        data = _join_surrogates(data, {})
    return data, node


def _join_surrogates(value: Any, done: dict[int, Any]) -> Any:
    """``value`` with each surrogate pair in its strings made the character it stands for
    (values shared through aliases are converted once)."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
    if id(value) in done:
        return done[id(value)]
    if isinstance(value, list):
        out: list = []
        done[id(value)] = out
        out.extend(_join_surrogates(v, done) for v in value)
        return out
    if isinstance(value, dict):
        new: dict = {}
        done[id(value)] = new
        new.update((_join_surrogates(k, done), _join_surrogates(v, done)) for k, v in value.items())
        return new
    return value


def _check_expansion(path: Path, root: Any) -> None:
    """Count the values ``root`` stands for with every alias expanded, without expanding:
    a node's count is computed once however many aliases share it."""
    counts: dict[int, int] = {}
    active: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            children = _children(node)
            counts[key] = 1 + sum(counts[id(c)] for c in children)
            active.discard(key)
            if counts[key] > MAX_VALUES:
                mark = node.start_mark
                raise ConfigError(Msg(N_("{where}: YAML aliases expand to more than {limit} values "
                                         "here; write the values out instead of nesting aliases"),
                                      {"where": where(path, mark.line + 1, mark.column + 1),
                                       "limit": MAX_VALUES}))
            continue
        if key in counts:
            continue
        if key in active:
            mark = node.start_mark
            raise ConfigError(Msg(N_("{where}: a YAML alias refers to a value that contains it"),
                                  {"where": where(path, mark.line + 1, mark.column + 1)}))
        active.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in counts)


def _children(node: Any) -> list:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []
