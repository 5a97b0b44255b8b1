"""The group policy document: model, parser and errors (pure Python)."""

from nova_scoped_policies.policy.errors import PolicyError  # noqa: F401
from nova_scoped_policies.policy.errors import shown  # noqa: F401
from nova_scoped_policies.policy.model import HOST_SCOPE  # noqa: F401
from nova_scoped_policies.policy.model import Policy  # noqa: F401
from nova_scoped_policies.policy.model import PolicyDocument  # noqa: F401
from nova_scoped_policies.policy.model import PolicyType  # noqa: F401
from nova_scoped_policies.policy.model import Rules  # noqa: F401
from nova_scoped_policies.policy.parser import as_objects  # noqa: F401
from nova_scoped_policies.policy.parser import from_nova_group  # noqa: F401
from nova_scoped_policies.policy.parser import merge  # noqa: F401
from nova_scoped_policies.policy.parser import parse_document  # noqa: F401
from nova_scoped_policies.policy.parser import parse_objects  # noqa: F401
from nova_scoped_policies.policy.parser import parse_policy  # noqa: F401
