"""Repair tasks: a plan carried out in the background, and the servers
a running task moves (one task per server, enforced by the database).

Revision ID: c2e4c0ffee06
Revises: a9d1c0ffee05
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa

revision = 'c2e4c0ffee06'
down_revision = 'a9d1c0ffee05'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'repair_tasks',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('target', sa.String(80), nullable=False),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('moves', sa.Text(), nullable=False),
        sa.Column('done', sa.Text(), nullable=False),
        sa.Column('current', sa.Text(), nullable=True),
        sa.Column('failed', sa.Text(), nullable=True),
        sa.Column('cancel', sa.Boolean(), nullable=False),
        sa.Column('owner', sa.String(255), nullable=False),
        sa.Column('beat_at', sa.DateTime(), nullable=False),
        sa.Column('finished_at', sa.DateTime(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.UniqueConstraint('uuid', name='uniq_repair_tasks0uuid'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_repair_tasks_status', 'repair_tasks', ['status'])
    op.create_index('ix_repair_tasks_finished_at', 'repair_tasks',
                    ['finished_at'])
    op.create_table(
        'repair_task_servers',
        sa.Column('server_uuid', sa.String(36), primary_key=True),
        sa.Column('task_id', sa.Integer(),
                  sa.ForeignKey('repair_tasks.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_repair_task_servers_task_id',
                    'repair_task_servers', ['task_id'])
