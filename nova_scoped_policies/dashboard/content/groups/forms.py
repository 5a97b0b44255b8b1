"""Set a group's policies and rules; add or remove a member."""

import typing

from django.utils.translation import gettext_lazy as _
from horizon import forms
from horizon import messages

from nova_scoped_policies.dashboard.api import scoped_policies as api
from nova_scoped_policies.dashboard.content import forms as common


def parse_rules(text: str) -> typing.Dict[str, typing.Any]:
    """``name=value`` lines as the API's ``rules`` (integers as such).

    :raises forms.ValidationError: a line without ``=``.
    """
    rules = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        name, sep, value = line.partition('=')
        if not sep or not name.strip():
            raise forms.ValidationError(
                _('line %(n)d: %(line)r is not name=value')
                % {'n': number, 'line': line[:80]})
        value = value.strip()
        rules[name.strip()] = int(value) if value.lstrip('-').isdigit() \
            else value
    return rules


def rules_text(rules: typing.Mapping[str, typing.Any]) -> str:
    return '\n'.join(f'{k}={v}' for k, v in sorted(rules.items()))


class PolicyForm(common.APIForm):
    """The policies (one a line) and rules of a server group."""

    API_FIELDS = {'server_group.id': 'group_id',
                  'server_group.name': 'name',
                  'server_group.policies': 'policies',
                  'server_group.policy': 'policies',
                  'server_group.llmn': 'policies',
                  'server_group.rules': 'rules'}

    group_id = forms.CharField(
        label=_('Server group'), max_length=64,
        help_text=_('The uuid of a Nova server group of this project.'))
    name = forms.CharField(label=_('Name'), max_length=255, required=False)
    policies = forms.CharField(
        label=_('Policies'), widget=forms.Textarea(attrs={'rows': 3}),
        help_text=_('One a line: anti-affinity:rack, '
                    'affinity:zone:<your zone id>, soft-anti-affinity:host'))
    rules = forms.CharField(
        label=_('Rules'), required=False,
        widget=forms.Textarea(attrs={'rows': 3}),
        help_text=_('One a line: max_server_per_rack=2'))

    def __init__(self, request, *args, **kwargs):
        super().__init__(request, *args, **kwargs)
        if self.initial.get('existing'):
            self.fields['group_id'].widget.attrs['readonly'] = 'readonly'

    def clean_policies(self):
        return [line.strip() for line in
                self.cleaned_data['policies'].splitlines() if line.strip()]

    def clean_rules(self):
        return parse_rules(self.cleaned_data.get('rules') or '')

    def handle(self, request, data):
        function = (api.group_update if self.initial.get('existing')
                    else api.group_create)
        group = self.call(function, data['group_id'].strip(), data['name'],
                          data['policies'], data['rules'])
        if group is not None:
            messages.success(request, _('Scoped policies of %s set.')
                             % (group.name or group.id))
        return group


class MemberForm(common.APIForm):
    """Add an instance to a group (without enforcing the policies), or
    take one out."""

    API_FIELDS = {'add_instance.instance_id': 'instance_id',
                  'remove_instance.instance_id': 'instance_id'}

    group_id = forms.CharField(widget=forms.HiddenInput())
    instance_id = forms.CharField(label=_('Instance'), max_length=64)
    action = forms.ChoiceField(label=_('Action'), choices=[
        ('add', _('Add to the group')),
        ('remove', _('Remove from the group'))])

    def handle(self, request, data):
        add = data['action'] == 'add'
        try:
            api.group_member(request, data['group_id'],
                             data['instance_id'].strip(), add)
        except api.APIError as exc:
            self.show_api_error(exc)
            return None
        messages.success(request, (_('Instance %s added.') if add else
                                   _('Instance %s removed.'))
                         % data['instance_id'])
        return True
