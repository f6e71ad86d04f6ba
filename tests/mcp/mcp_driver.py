"""A stand-in for agentdbg's CLI holding an MCP server, for the interruption tests.

    python mcp_driver.py MODE EVENTS_FILE

Like ``agentdbg.cli.main`` it turns SIGTERM into ``Terminated`` (a KeyboardInterrupt).
Prints ``READY <server pid>`` once the server is up, then per MODE:
  call      one slow call in the main thread (as the executor runs a sequential call)
  threads   two slow calls in worker threads, the main thread joining them (as the
            executor runs read-only calls); on an interrupt it cancels them, as
            ``ToolExecutor.kill_running`` does for command tools
  no_close  returns without calling close(): interpreter exit must stop the server
"""

import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_helpers import demo_config

from agentdbg.mcp.client import McpClient


def on_sigterm(signum, frame):
    from agentdbg.errors import Terminated

    raise Terminated()


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, on_sigterm)
    mode, events = sys.argv[1], Path(sys.argv[2])
    extra = {"AGENTDBG_MCP_TEST_MODE": "with_child"} if mode == "no_close" else {}
    client = McpClient(demo_config("held", events=events, env=extra)).start()
    print(f"READY {client.pid}", flush=True)
    if mode == "no_close":
        return
    try:
        if mode == "call":
            client.call_tool("slow", {"seconds": 60}, timeout=120)
        else:
            results = []
            workers = [threading.Thread(target=lambda: results.append(client.call_tool(
                "slow", {"seconds": 60}, timeout=120)), daemon=True) for _ in range(2)]
            for w in workers:
                w.start()
            try:
                for w in workers:
                    w.join()
            except KeyboardInterrupt:
                print(f"CANCELLED {client.cancel_all()}", flush=True)
                deadline = time.monotonic() + 5   # not join(): an interrupted join() may not wait again
                while len(results) < 2 and time.monotonic() < deadline:
                    time.sleep(0.01)
                print("RESULTS " + " ".join(r.error_type or "ok" for r in results), flush=True)
                raise
    finally:
        client.close()
        print("CLOSED", flush=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
