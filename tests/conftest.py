"""Where each part of the suite runs.

tests/heat needs openstack-heat, whose pins clash with nova's: it runs in
its own virtualenv (.venv-heat, tools/heat-venv.sh). tools/run-tests.sh,
the README's test command, runs the main suite here and then tests/heat
there; a pytest without Heat leaves tests/heat to that second run.
tests/dashboard and nova_scoped_policies/dashboard/tests likewise run in
.venv-horizon (Horizon 27 and Keystone 30: Django 5.2, SQLAlchemy 2.1).
"""

import importlib.util

if importlib.util.find_spec('nova'):
    # Eventlet first, as nova's own functional tests do when their package
    # is imported (nova/tests/functional/__init__.py), but before pytest
    # collects anything else: oslo.db's enginefacade, imported earlier by
    # other test modules, otherwise keeps its transactions in a real
    # thread-local shared by every greenthread, and a boot on a busy
    # machine fails with "Can't upgrade a READER transaction to a WRITER
    # mid-transaction" (another greenthread's reader).
    from nova import monkey_patch
    monkey_patch.patch()

collect_ignore = [] if importlib.util.find_spec('heat') else ['heat']
# tests/dashboard (Horizon's, Keystone's and the browser's) runs in
# .venv-horizon (tools/horizon-venv.sh), after the Heat tests
if not importlib.util.find_spec('horizon'):
    collect_ignore.append('dashboard')
