"""What the plugin's forms share: the API's field errors on the field."""

import typing

from horizon import forms

from nova_scoped_policies.dashboard.api import scoped_policies as api


class APIForm(forms.SelfHandlingForm):
    """A form whose ``handle`` calls the policy API.

    ``API_FIELDS`` maps the start of a field the API names in its errors
    (``server_group.policies``) to the form's field (``policies``); an
    error naming no known field is the form's own.
    """

    API_FIELDS: typing.Mapping[str, str] = {}

    def show_api_error(self, exc: api.APIError) -> None:
        for named, detail in exc.fields():
            field = None
            if named:
                field = next((f for prefix, f in sorted(
                    self.API_FIELDS.items(), key=lambda i: -len(i[0]))
                    if named == prefix or named.startswith(
                        (prefix + '.', prefix + '['))), None)
            if field is not None and field in self.fields:
                self.add_error(field, detail)
            else:
                self.api_error(detail)

    def call(self, function, *args, **kwargs):
        """``function(request, ...)``; None after showing the API's
        refusal on the form."""
        try:
            return function(self.request, *args, **kwargs)
        except api.APIError as exc:
            self.show_api_error(exc)
            return None
