"""Tables of the policy store."""

from oslo_db.sqlalchemy import models
import sqlalchemy as sa
from sqlalchemy import orm

BASE = orm.declarative_base()


class _Base(models.TimestampMixin, models.ModelBase):
    pass


class PolicyScope(BASE, _Base):
    """A deployer-defined scope (scoped-policies.rst InstanceGroupPolicyScope).
    """

    __tablename__ = 'policy_scopes'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_policy_scopes0uuid'),
        sa.UniqueConstraint('name', name='uniq_policy_scopes0name'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(64), nullable=False)
    allow_identifiers = sa.Column(sa.Boolean, nullable=False, default=False)
    obfuscate_identifiers = sa.Column(sa.Boolean, nullable=False,
                                      default=False)
    obfuscate_namespace_uuid = sa.Column(sa.String(36), nullable=False)
    # a coarser scope each domain of this one lies in, or NULL
    parent = sa.Column(sa.String(64), nullable=True)
    aggregates = orm.relationship(
        'PolicyScopeAggregate', cascade='all, delete-orphan',
        order_by='PolicyScopeAggregate.aggregate_uuid', lazy='selectin')


class PolicyScopeAggregate(BASE, _Base):
    """One domain of a scope: a host aggregate, in at most one scope."""

    __tablename__ = 'policy_scope_aggregates'
    __table_args__ = (
        sa.UniqueConstraint('aggregate_uuid',
                            name='uniq_policy_scope_aggregates0aggregate'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    scope_id = sa.Column(sa.Integer, sa.ForeignKey(
        'policy_scopes.id', ondelete='CASCADE'), nullable=False, index=True)
    aggregate_uuid = sa.Column(sa.String(36), nullable=False)


class ScopedGroup(BASE, _Base):
    """The scoped policy document of one Nova server group."""

    __tablename__ = 'scoped_groups'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_scoped_groups0uuid'),
        sa.Index('scoped_groups_project_idx', 'project_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    project_id = sa.Column(sa.String(255), nullable=False)
    user_id = sa.Column(sa.String(255), nullable=True)
    name = sa.Column(sa.String(255), nullable=True)
    # the normalised policy document, JSON
    document = sa.Column(sa.Text, nullable=False)
    members = orm.relationship(
        'ScopedGroupMember', cascade='all, delete-orphan',
        order_by='ScopedGroupMember.id', lazy='selectin')
    exclusions = orm.relationship(
        'ScopedGroupExclusion', cascade='all, delete-orphan',
        order_by='ScopedGroupExclusion.id', lazy='selectin')


class ScopedGroupMember(BASE, _Base):
    """An instance added to a group (server-group-update.rst add_instance).
    """

    __tablename__ = 'scoped_group_members'
    __table_args__ = (
        sa.UniqueConstraint('group_id', 'instance_uuid',
                            name='uniq_scoped_group_members0group0instance'),
        # an instance is in at most one group, whatever runs at once
        sa.UniqueConstraint('instance_uuid',
                            name='uniq_scoped_group_members0instance'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    group_id = sa.Column(sa.Integer, sa.ForeignKey(
        'scoped_groups.id', ondelete='CASCADE'), nullable=False, index=True)
    instance_uuid = sa.Column(sa.String(36), nullable=False)


class ScopedGroupExclusion(BASE, _Base):
    """An instance Nova booted into a group, taken out of the group's scoped
    policies (``remove_instance``): Nova still lists it as a member; the
    scheduler and the audit do not count it."""

    __tablename__ = 'scoped_group_exclusions'
    __table_args__ = (
        sa.UniqueConstraint('group_id', 'instance_uuid',
                            name='uniq_scoped_group_exclusions0group0'
                            'instance'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    group_id = sa.Column(sa.Integer, sa.ForeignKey(
        'scoped_groups.id', ondelete='CASCADE'), nullable=False, index=True)
    instance_uuid = sa.Column(sa.String(36), nullable=False)


class ScopedStack(BASE, _Base):
    """A stack's joint decision, held in Placement under a lease."""

    __tablename__ = 'scoped_stacks'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_scoped_stacks0uuid'),
        sa.Index('scoped_stacks_project_idx', 'project_id'),
        sa.Index('scoped_stacks_expires_idx', 'expires_at'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(64), nullable=False)
    project_id = sa.Column(sa.String(255), nullable=False)
    user_id = sa.Column(sa.String(255), nullable=False)
    # reserved | confirmed
    status = sa.Column(sa.String(16), nullable=False)
    lease_seconds = sa.Column(sa.Integer, nullable=False)
    expires_at = sa.Column(sa.DateTime, nullable=False)
    decision_seconds = sa.Column(sa.Float, nullable=False)
    # the stack document as given, JSON
    document = sa.Column(sa.Text, nullable=False)
    servers = orm.relationship(
        'ScopedStackServer', cascade='all, delete-orphan',
        order_by='ScopedStackServer.id', lazy='selectin')


class ScopedStackServer(BASE, _Base):
    """One server of a stack decision: its host and its hold consumer."""

    __tablename__ = 'scoped_stack_servers'
    __table_args__ = (
        sa.UniqueConstraint('stack_id', 'name',
                            name='uniq_scoped_stack_servers0stack0name'),
        sa.Index('scoped_stack_servers_instance_idx', 'instance_uuid'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    stack_id = sa.Column(sa.Integer, sa.ForeignKey(
        'scoped_stacks.id', ondelete='CASCADE'), nullable=False, index=True)
    name = sa.Column(sa.String(64), nullable=False)
    host = sa.Column(sa.String(255), nullable=False)
    provider_uuid = sa.Column(sa.String(36), nullable=False)
    # resource class -> amount, JSON
    resources = sa.Column(sa.Text, nullable=False)
    # the hold consumer while the server's capacity is held, else NULL
    consumer_uuid = sa.Column(sa.String(36), nullable=True)
    # held | booted | released
    state = sa.Column(sa.String(16), nullable=False)
    # the instance booted for it (the scheduler finds the stack's servers
    # through it), NULL until one is
    instance_uuid = sa.Column(sa.String(36), nullable=True)


class RepairTask(BASE, _Base):
    """A repair plan being carried out (``POST /repairs/apply`` from
    microversion 1.4): its moves, how far it got, who runs it."""

    __tablename__ = 'repair_tasks'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_repair_tasks0uuid'),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    project_id = sa.Column(sa.String(255), nullable=False)
    target = sa.Column(sa.String(80), nullable=False)
    # running, applied, stopped, cancelled, interrupted
    status = sa.Column(sa.String(16), nullable=False, index=True)
    moves = sa.Column(sa.Text, nullable=False)
    done = sa.Column(sa.Text, nullable=False)
    current = sa.Column(sa.Text, nullable=True)
    failed = sa.Column(sa.Text, nullable=True)
    cancel = sa.Column(sa.Boolean, nullable=False, default=False)
    # the API process that runs it: host:pid:start, and its heartbeat
    owner = sa.Column(sa.String(255), nullable=False)
    beat_at = sa.Column(sa.DateTime, nullable=False)
    finished_at = sa.Column(sa.DateTime, nullable=True, index=True)


class RepairTaskServer(BASE, _Base):
    """A server a running repair task moves: one task at a time."""

    __tablename__ = 'repair_task_servers'

    server_uuid = sa.Column(sa.String(36), primary_key=True)
    task_id = sa.Column(sa.Integer, sa.ForeignKey(
        'repair_tasks.id', ondelete='CASCADE'), nullable=False, index=True)
