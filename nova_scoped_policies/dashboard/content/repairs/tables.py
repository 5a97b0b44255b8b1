from django.utils.translation import gettext_lazy as _
from horizon import tables


class MovesTable(tables.DataTable):
    """The moves of a plan in order."""

    server = tables.Column('server', verbose_name=_('Server'))
    name = tables.Column('name', verbose_name=_('Name'), empty_value='-')
    source = tables.Column('source', verbose_name=_('From'))
    destination = tables.Column('destination', verbose_name=_('To'))
    temporary = tables.Column(
        lambda m: _('yes') if m.temporary else '-',
        verbose_name=_('Temporary'))

    class Meta:
        name = 'moves'
        verbose_name = _('Moves')


class ApplyMovesTable(MovesTable):
    """The moves with their ``progress``, filled in as the repair task
    of the admins' apply runs (the plan page's script)."""

    progress = tables.Column(lambda m: _('planned'),
                             verbose_name=_('Progress'),
                             classes=('nsp-progress',))

    class Meta:
        name = 'moves'
        verbose_name = _('Moves')
