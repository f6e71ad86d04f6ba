"""check_inventory: a `command` tool. Reads JSON arguments on stdin, prints JSON.

It is slow on purpose (about 3 s) so it runs into its 1 s timeout and shows
how agentdbg kills a command that does not answer in time.
"""

import json
import sys
import time

STOCK = {"SKU-1001": 12, "SKU-1002": 0, "SKU-1003": 250}


def main() -> None:
    args = json.load(sys.stdin)
    time.sleep(3)
    sku = args.get("sku")
    if sku not in STOCK:
        print(json.dumps({"ok": False, "error": {"type": "not_found", "retryable": False,
                                                 "message": f"unknown sku {sku}"}}))
        return
    print(json.dumps({"sku": sku, "in_stock": STOCK[sku]}))


if __name__ == "__main__":
    main()
