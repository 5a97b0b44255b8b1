"""Horizon's pluggable settings: copy (or link) these files into
``openstack_dashboard/local/enabled/`` (devstack:
``NOVA_SCOPED_POLICIES_DASHBOARD=True``)."""
