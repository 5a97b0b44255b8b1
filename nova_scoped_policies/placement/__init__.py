"""Talking to Placement: the keystoneauth1 client and an in-memory fake."""
