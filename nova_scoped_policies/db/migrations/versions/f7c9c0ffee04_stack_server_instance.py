"""Stacks live: each decided server remembers the instance booted for it.

From its decision until the stack is deleted, the scheduler checks every
boot and move of a stack's servers against the stack's policies; it finds
the other servers through their instances.

Revision ID: f7c9c0ffee04
Revises: e5b7c0ffee03
Create Date: 2026-11-24
"""

from alembic import op
import sqlalchemy as sa

revision = 'f7c9c0ffee04'
down_revision = 'e5b7c0ffee03'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('scoped_stack_servers') as batch:
        batch.add_column(sa.Column('instance_uuid', sa.String(36),
                                   nullable=True))
        batch.create_index('scoped_stack_servers_instance_idx',
                           ['instance_uuid'])
