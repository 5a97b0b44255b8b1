"""The Tempest plugin of nova-scoped-policies: API and scenario tests of a
cloud that runs the policy API and our nova-scheduler plugins.

Loaded by Tempest through the ``tempest.test_plugins`` entry point. It
imports only ``tempest.lib``, Tempest's stable interfaces for plugins
and itself, never the rest of this package, so that it installs into
Tempest's virtualenv with ``--no-deps`` (``tests/test_tempest_plugin.py``
reads every import). See ``doc/source/admin/tempest.rst``.
"""
