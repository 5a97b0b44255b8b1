"""Console scripts.

Importing this package (every console script of ours does, before its own
imports) silences eventlet's deprecation warning: oslo.messaging, whose
notification options our configuration registers, imports oslo.service,
which imports eventlet, which warns that it is deprecated. None of our
tools runs on eventlet, and the warning (eight lines) would open the
output of every command.
"""

import warnings

EVENTLET_DEPRECATED = r'\s*Eventlet is deprecated'
"""The start of eventlet's deprecation warning."""

# eventlet's EventletDeprecationWarning is a Warning, not a
# DeprecationWarning: the message alone says which
warnings.filterwarnings('ignore', message=EVENTLET_DEPRECATED)
