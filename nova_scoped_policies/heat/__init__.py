"""Heat resources for stacks (the spec's four phases from a HOT template).

Loaded by Heat, never by nova: ``OS::ScopedPolicies::Stack`` defines and
decides (``POST /stacks`` of the policy service), ``OS::ScopedPolicies::
Confirm`` confirms once the servers exist; ``OS::ScopedPolicies::
Application`` defines and decides from the spec's Proposal A syntax
(:mod:`.proposal_a`, no Heat). See doc/source/user/heat.rst.
"""
