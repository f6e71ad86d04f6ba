"""Drivers over the engine: the batch run (and, later, step mode and replay)."""
