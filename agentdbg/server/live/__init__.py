"""The live view: the report of a run in the browser, updated as the proxy records it."""
