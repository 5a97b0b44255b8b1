"""The Horizon plugin: tenants' scoped policies and stacks, operators'
scopes, violations and repairs (enabled by the files of ``enabled/``)."""
