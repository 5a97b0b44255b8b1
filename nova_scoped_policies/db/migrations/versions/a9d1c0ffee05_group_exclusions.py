"""Members Nova booted into a group can be taken out of its scoped policies.

``remove_instance`` of an instance that Nova booted into the group records
it here: Nova keeps listing it as a member; the scheduler and the audit no
longer count it. ``add_instance`` of it deletes the row.

Revision ID: a9d1c0ffee05
Revises: f7c9c0ffee04
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa

revision = 'a9d1c0ffee05'
down_revision = 'f7c9c0ffee04'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'scoped_group_exclusions',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('group_id', sa.Integer(),
                  sa.ForeignKey('scoped_groups.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.UniqueConstraint('group_id', 'instance_uuid',
                            name='uniq_scoped_group_exclusions0group0'
                            'instance'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_scoped_group_exclusions_group_id',
                    'scoped_group_exclusions', ['group_id'])
