from django.utils.translation import gettext_lazy as _
from horizon import forms


class PlanForm(forms.Form):
    """What to repair: a server group, a stack, or everything."""

    kind = forms.ChoiceField(label=_('Repair'), choices=[
        ('server_group', _('A server group')),
        ('stack', _('A stack decision')),
        ('all', _('Every group and stack'))])
    id = forms.CharField(label=_('Its id'), required=False, max_length=64)

    def clean(self):
        data = super().clean()
        if data.get('kind') in ('server_group', 'stack') and \
                not (data.get('id') or '').strip():
            self.add_error('id', _('Which one? Give its uuid.'))
        return data
