"""The openstackclient plugin: ``openstack scoped policy scope ...``,
``openstack scoped policy group ...`` and ``openstack scoped policy version
list``."""
