from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from horizon import tables


class ScopesTable(tables.DataTable):
    name = tables.Column(
        'name', verbose_name=_('Name'),
        link=lambda s: reverse('horizon:admin:scoped_scopes:detail',
                               args=[s.name]))
    uuid = tables.Column('uuid', verbose_name=_('UUID'))
    domains = tables.Column(lambda s: len(s.aggregates),
                            verbose_name=_('Domains'))
    parent = tables.Column('parent', verbose_name=_('Parent'),
                           empty_value='-')
    identifiers = tables.Column(
        lambda s: (_('obfuscated') if s.obfuscate_identifiers else
                   _('shown')) if s.allow_identifiers else _('hidden'),
        verbose_name=_('Tenants see domains'))

    class Meta:
        name = 'scopes'
        verbose_name = _('Scopes')
