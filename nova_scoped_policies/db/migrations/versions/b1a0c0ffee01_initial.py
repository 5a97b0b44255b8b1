"""Initial schema: policy scopes, their aggregates, scoped groups, members.

Revision ID: b1a0c0ffee01
Revises:
Create Date: 2026-11-22
"""

from alembic import op
import sqlalchemy as sa

revision = 'b1a0c0ffee01'
down_revision = None
branch_labels = None
depends_on = None


def _timestamps():
    return [sa.Column('created_at', sa.DateTime(), nullable=True),
            sa.Column('updated_at', sa.DateTime(), nullable=True)]


def upgrade():
    op.create_table(
        'policy_scopes',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.String(64), nullable=False),
        sa.Column('allow_identifiers', sa.Boolean(), nullable=False),
        sa.Column('obfuscate_identifiers', sa.Boolean(), nullable=False),
        sa.Column('obfuscate_namespace_uuid', sa.String(36),
                  nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('uuid', name='uniq_policy_scopes0uuid'),
        sa.UniqueConstraint('name', name='uniq_policy_scopes0name'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_table(
        'policy_scope_aggregates',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('scope_id', sa.Integer(),
                  sa.ForeignKey('policy_scopes.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('aggregate_uuid', sa.String(36), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('aggregate_uuid',
                            name='uniq_policy_scope_aggregates0aggregate'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_policy_scope_aggregates_scope_id',
                    'policy_scope_aggregates', ['scope_id'])
    op.create_table(
        'scoped_groups',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('name', sa.String(255), nullable=True),
        sa.Column('document', sa.Text(), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('uuid', name='uniq_scoped_groups0uuid'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('scoped_groups_project_idx', 'scoped_groups',
                    ['project_id'])
    op.create_table(
        'scoped_group_members',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('group_id', sa.Integer(),
                  sa.ForeignKey('scoped_groups.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('group_id', 'instance_uuid',
                            name='uniq_scoped_group_members0group0instance'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_scoped_group_members_group_id',
                    'scoped_group_members', ['group_id'])
