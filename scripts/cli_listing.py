"""Write agentdbg/cli/listing.py: the list of commands `agentdbg --help` shows without importing
the command modules (run after changing a command's name or docstring; a test says when).

    python scripts/cli_listing.py
"""

from pathlib import Path

from agentdbg.cli import app, listing_source

if __name__ == "__main__":
    path = Path(__file__).resolve().parent.parent / "agentdbg" / "cli" / "listing.py"
    path.write_text(listing_source(app.registered_commands), encoding="utf-8")
    print(f"wrote {path}")
