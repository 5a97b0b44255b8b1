"""An instance is a member of at most one group, enforced by the database.

Revision ID: e5b7c0ffee03
Revises: d3a5c0ffee02
Create Date: 2026-11-23
"""

from alembic import op

revision = 'e5b7c0ffee03'
down_revision = 'd3a5c0ffee02'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('scoped_group_members') as batch:
        batch.create_unique_constraint('uniq_scoped_group_members0instance',
                                       ['instance_uuid'])
