"""Print the rules-by-format table (markdown), made from the checker's registry."""

from agentdbg.checker.formats.table import rules_table

if __name__ == "__main__":
    print(rules_table(), end="")
