"""``GET /export`` (1.5, administrators): the live cloud as a simulator
scenario."""

from nova_scoped_policies.tempest.services import base


class ExportClient(base.PolicyClient):
    """The export of the live cloud."""

    api_microversion = '1.5'

    def export(self, **params):
        """``project``, ``obfuscate``."""
        return self.call('GET', 'export', 200, params=params)
