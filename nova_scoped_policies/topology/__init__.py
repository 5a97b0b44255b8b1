"""Scopes, their domains and the hosts in them (pure Python).

``model`` holds the :class:`Topology` and its records; ``network`` the
network tree (``Topology.network``); ``tenant`` the identifiers tenants
see; ``parsers`` the feeds (aggregate metadata, stored scope records) and
:func:`build`, the one way a Topology is assembled. Today's names stay
importable from here.
"""

from nova_scoped_policies.topology.model import AggregateInfo  # noqa: F401
from nova_scoped_policies.topology.model import Domain  # noqa: F401
from nova_scoped_policies.topology.model import HostIndex  # noqa: F401
from nova_scoped_policies.topology.model import NO_DOMAINS  # noqa: F401
from nova_scoped_policies.topology.model import Scope  # noqa: F401
from nova_scoped_policies.topology.model import Topology  # noqa: F401
from nova_scoped_policies.topology.network import Edge  # noqa: F401
from nova_scoped_policies.topology.network import Finding  # noqa: F401
from nova_scoped_policies.topology.network import MAX_KBPS  # noqa: F401
from nova_scoped_policies.topology.network import \
    NetworkTree  # noqa: F401
from nova_scoped_policies.topology.network import Uplinks  # noqa: F401
from nova_scoped_policies.topology.parsers import \
    ALLOW_IDENTIFIERS_KEY  # noqa: F401
from nova_scoped_policies.topology.parsers import build  # noqa: F401
from nova_scoped_policies.topology.parsers import licences  # noqa: F401
from nova_scoped_policies.topology.parsers import \
    from_aggregates  # noqa: F401
from nova_scoped_policies.topology.parsers import \
    from_scope_records  # noqa: F401
from nova_scoped_policies.topology.parsers import NAMESPACE_KEY  # noqa: F401
from nova_scoped_policies.topology.parsers import \
    OBFUSCATE_IDENTIFIERS_KEY  # noqa: F401
from nova_scoped_policies.topology.parsers import SCOPE_KEY  # noqa: F401
from nova_scoped_policies.topology.parsers import \
    scope_from_record  # noqa: F401
from nova_scoped_policies.topology.tenant import obfuscate  # noqa: F401
