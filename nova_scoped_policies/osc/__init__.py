"""The openstackclient plugin: ``openstack policy scope ...`` and
``openstack server group scoped policy ...``."""
