"""The policy API service (WSGI), in the style of openstack/placement.

- :mod:`.handler`: the declarative route table and the dispatcher;
- :mod:`.handlers`: one module per resource;
- :mod:`.schemas`: the JSON schemas of request bodies;
- :mod:`.policies`: the oslo.policy rules, in code;
- :mod:`.deploy`: the middleware stack; :mod:`.wsgi`: the entry points.
"""
