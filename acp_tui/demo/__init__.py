"""Keyless, deterministic demo agents that stand in for a model (see `agent`)."""
