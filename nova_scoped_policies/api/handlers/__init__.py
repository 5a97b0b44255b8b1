"""One module per resource of the policy API."""
