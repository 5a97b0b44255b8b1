"""Stacks: decisions held under a lease, their servers; scope parents.

Revision ID: d3a5c0ffee02
Revises: b1a0c0ffee01
Create Date: 2026-11-23
"""

from alembic import op
import sqlalchemy as sa

revision = 'd3a5c0ffee02'
down_revision = 'b1a0c0ffee01'
branch_labels = None
depends_on = None


def _timestamps():
    return [sa.Column('created_at', sa.DateTime(), nullable=True),
            sa.Column('updated_at', sa.DateTime(), nullable=True)]


def upgrade():
    with op.batch_alter_table('policy_scopes') as batch:
        batch.add_column(sa.Column('parent', sa.String(64), nullable=True))
    op.create_table(
        'scoped_stacks',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.String(64), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=False),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('lease_seconds', sa.Integer(), nullable=False),
        sa.Column('expires_at', sa.DateTime(), nullable=False),
        sa.Column('decision_seconds', sa.Float(), nullable=False),
        sa.Column('document', sa.Text(), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('uuid', name='uniq_scoped_stacks0uuid'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('scoped_stacks_project_idx', 'scoped_stacks',
                    ['project_id'])
    op.create_index('scoped_stacks_expires_idx', 'scoped_stacks',
                    ['expires_at'])
    op.create_table(
        'scoped_stack_servers',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('stack_id', sa.Integer(),
                  sa.ForeignKey('scoped_stacks.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('name', sa.String(64), nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('provider_uuid', sa.String(36), nullable=False),
        sa.Column('resources', sa.Text(), nullable=False),
        sa.Column('consumer_uuid', sa.String(36), nullable=True),
        sa.Column('state', sa.String(16), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('stack_id', 'name',
                            name='uniq_scoped_stack_servers0stack0name'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_scoped_stack_servers_stack_id',
                    'scoped_stack_servers', ['stack_id'])
