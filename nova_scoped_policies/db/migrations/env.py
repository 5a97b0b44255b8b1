"""alembic environment: runs on the connection handed over by migration.py.
"""

from alembic import context

from nova_scoped_policies.db import models

connection = context.config.attributes['connection']
context.configure(connection=connection,
                  target_metadata=models.BASE.metadata)
with context.begin_transaction():
    context.run_migrations()
