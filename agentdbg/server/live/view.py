"""What the live page shows: the report's sections of a run, kept until their transcript changes.

The run page is ``report.runpage``'s page with the live script: one section per conversation,
the run's summary, and a list of every run in the folder (``agentdbg ui``). A section is drawn
from its transcript when first asked for and again only when a scan gave the transcript a new
version; the newest few stay in memory, the rest are drawn again on demand. A transcript that
cannot be drawn (being written, damaged) is a card saying so, never a failure of the page.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from pathlib import Path
from urllib.parse import quote

from agentdbg.report.html import esc, foot_html
from agentdbg.report.runpage import (
    Conversation,
    RunSummary,
    article_open,
    conversation_html,
    conversation_of,
    read_conversation,
    run_summary_html,
)
from agentdbg.server.live.watch import Entry, Folder

KEPT_SECTIONS = 16     # drawn sections kept in memory (a long run is drawn again on demand)
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'none'; font-src 'none'; frame-src 'none'; object-src 'none'; media-src 'none'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class LiveView:
    def __init__(self, folder: Folder, *, base: str, current: str | None = None,
                 profile: str = "openai"):
        self.folder, self.base, self.current, self.profile = folder, base, current, profile
        self._sections: OrderedDict[str, tuple[int, str]] = OrderedDict()
        self._convs: dict[str, tuple[int, Conversation]] = {}

    # -- one conversation -------------------------------------------------------------------
    def _draw(self, entry: Entry, anchor: str) -> tuple[str, Conversation]:
        try:
            run, diffs = read_conversation(entry.path, self.profile)
            return conversation_html(run, diffs, anchor, entry.version), conversation_of(run)
        except Exception as exc:  # noqa: BLE001 - a transcript that cannot be drawn is a card
            why = f"{type(exc).__name__}: {exc}"
            html = (f"{article_open(anchor, entry.name, entry.version)}"
                    f'<h2>{esc(entry.name)}</h2><div class="card blocked"><h3>agentdbg could not '
                    f"draw this transcript</h3><p>{esc(why[:300])}</p></div></article>")
            return html, Conversation(entry.path, None, 0)

    def section(self, entry: Entry, anchor: str) -> str:
        kept = self._sections.get(entry.name)
        if kept is not None and kept[0] == entry.version:
            self._sections.move_to_end(entry.name)
            return kept[1]
        html, conv = self._draw(entry, anchor)
        self._sections[entry.name] = (entry.version, html)
        self._convs[entry.name] = (entry.version, conv)
        while len(self._sections) > KEPT_SECTIONS:
            self._sections.popitem(last=False)
        return html

    def conversation(self, entry: Entry, anchor: str) -> Conversation:
        kept = self._convs.get(entry.name)
        if kept is None or kept[0] != entry.version:
            self.section(entry, anchor)
        return self._convs[entry.name][1]

    # -- a run ------------------------------------------------------------------------------
    def anchors(self, entries: list[Entry]) -> dict[str, str]:
        return {e.name: f"c{e.number if e.number else k + 1}" for k, e in enumerate(entries)}

    def state(self, key: str) -> dict:
        """What the page compares with what it has: each transcript's name and version."""
        return {"convs": [[e.name, e.version] for e in self.folder.run(key)]}

    def summary(self, key: str) -> str:
        entries = self.folder.run(key)
        anchors = self.anchors(entries)
        convs = [self.conversation(e, anchors[e.name]) for e in entries]
        for name in list(self._convs):     # transcripts gone from the folder
            if self.folder.entry(name) is None:
                del self._convs[name]
        return run_summary_html(RunSummary(convs), {c.path: anchors[c.path.name] for c in convs})

    def run_page(self, key: str) -> str:
        entries = self.folder.run(key)
        anchors = self.anchors(entries)
        sections = "".join(self.section(e, anchors[e.name]) for e in entries)
        empty = "" if entries else ('<p class="dim" id="waiting">no request yet: this page shows '
                                    "each one as the proxy relays it</p>")
        body = (f'<header class="run"><h1>agentdbg — {esc(key)}</h1>{self._bar(live=True)}</header>'
                f'{self.summary(key)}{empty}<div id="convs">{sections}</div>{foot_html()}')
        return self.page(f"agentdbg — {esc(key)}", body, run=key)

    # -- every run, and the diff of two ------------------------------------------------------
    def runs_page(self) -> str:
        rows = []
        for key, entries in self.folder.runs().items():
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(max(e.mtime_ns for e in entries) / 1e9))
            rows.append(f'<tr class="run"><td><a href="{self.base}run?key={quote(key, safe="")}">'
                        f"{esc(key)}</a></td><td class=\"num\">{len(entries)}</td>"
                        f"<td>{esc(when)}</td><td></td></tr>")
            rows.extend(f'<tr class="transcript"><td class="dim">{esc(e.name)}</td><td></td>'
                        f"<td class=\"num\">{e.size} B</td><td>{self._pick(e.name)}</td></tr>"
                        for e in entries)
        table = ("<table class=\"runs\"><tr><th>run</th><th class=\"num\">conversations</th>"
                 f"<th>last written</th><th>diff</th></tr>{''.join(rows)}</table>" if rows else
                 '<p class="dim">no transcripts in this folder yet</p>')
        body = (f'<header class="run"><h1>agentdbg — runs</h1><p class="dim">{esc(self.folder.folder)}'
                f"</p>{self._bar()}</header><p>Open a run, or pick A and B on two transcripts: "
                f'<a id="diff-link" class="disabled" href="{self.base}diff">diff A and B</a>'
                f"</p>{table}{foot_html()}")
        return self.page("agentdbg — runs", body, runs=True)

    def _pick(self, name: str) -> str:
        n = esc(name)
        return (f'<button type="button" class="pick" data-pick="a" data-name="{n}">A</button>'
                f'<button type="button" class="pick" data-pick="b" data-name="{n}">B</button>')

    def diff_page(self, a: str, b: str) -> str | None:
        from agentdbg.report.diff import diff_runs
        from agentdbg.report.html import diff_html
        from agentdbg.report.timeline import read_run

        ea, eb = self.folder.entry(a), self.folder.entry(b)
        if ea is None or eb is None:
            return None
        try:
            d = diff_html(diff_runs(read_run(ea.path, profile=self.profile),
                                    read_run(eb.path, profile=self.profile)))
        except Exception as exc:  # noqa: BLE001 - a damaged transcript is said so, on the page
            d = f'<p class="bad">agentdbg could not diff these: {esc(type(exc).__name__)}: {esc(exc)}</p>'
        body = (f'<header class="run"><h1>agentdbg — diff</h1>{self._bar()}</header>'
                f"<p>A: {self._open(ea)}<br>B: {self._open(eb)}</p>{d}{foot_html()}")
        return self.page("agentdbg — diff", body)

    def _open(self, e: Entry) -> str:
        return f'<a href="{self.base}run?key={quote(e.run, safe="")}#{esc(e.name)}">{esc(e.name)}</a>'

    # -- the page around it -----------------------------------------------------------------
    def _bar(self, live: bool = False) -> str:
        status = '<span id="live-status" class="dim">○ connecting…</span> ' if live else ""
        current = (f'<a href="{self.base}run?key={quote(self.current, safe="")}">this run</a> · '
                   if self.current else "")
        return (f'<p class="bar">{status}{current}<a href="{self.base}runs">all runs</a> · '
                '<input id="search" type="search" placeholder="search messages and tools (/)" '
                'aria-label="search messages and tools"> <span id="search-count" class="dim"></span>'
                ' <span class="dim keys">j/k: next/previous card · o: open/close its folds · '
                "/: search · n/N: next/previous match</span></p>")

    def page(self, title: str, body: str, *, run: str | None = None, runs: bool = False) -> str:
        meta = f'<meta name="agentdbg-run" content="{esc(run)}">\n' if run is not None else ""
        body_class = ' class="runs"' if runs else ""
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
                '<meta name="referrer" content="no-referrer">\n'
                '<meta name="viewport" content="width=device-width,initial-scale=1">\n'
                f'<meta name="agentdbg-base" content="{esc(self.base)}">\n{meta}'
                f"<title>{title}</title>\n"
                f'<link rel="stylesheet" href="{self.base}assets/live.css">\n'
                f'<script src="{self.base}assets/live.js" defer></script></head>\n'
                f"<body{body_class}><main>{body}</main></body></html>\n")


def asset(name: str) -> tuple[bytes, str] | None:
    """The page's script and style sheet (the report's CSS, the run page's, the live page's)."""
    from agentdbg.report.html import CSS
    from agentdbg.report.runpage import RUN_CSS

    here = Path(__file__).resolve().parent / "assets"
    if name == "live.js":
        return (here / "live.js").read_bytes(), "text/javascript; charset=utf-8"
    if name == "live.css":
        return (CSS + RUN_CSS).encode() + (here / "live.css").read_bytes(), "text/css; charset=utf-8"
    return None
