"""Interpreters: each owns a registry dict of per-primitive rules and a short loop."""
