"""The errors the package's services raise, whatever calls them.

The API maps each to its HTTP status in one place
(:data:`nova_scoped_policies.api.util.FAULTS`); the scheduler, the CLI,
Watcher and the simulator catch them as they are. No module outside the
API's handlers raises an HTTP error.
"""


class DomainError(Exception):
    """Base of the package's errors; ``str()`` is the reason, worded for
    whoever called (never another tenant's resource)."""


class Unavailable(DomainError):
    """A service the request needs (Placement, Nova, nova-scheduler's
    configuration) did not answer, or answered what cannot be read: try
    again later (503)."""

    @classmethod
    def placement(cls, what: str, exc: Exception) -> 'Unavailable':
        """Placement failed while the service tried to ``what``."""
        return cls(f'cannot {what}: Placement answered {exc}')
