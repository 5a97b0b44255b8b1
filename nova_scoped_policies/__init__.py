"""Scoped, rule-limited and multi-level server group policies for Nova."""
