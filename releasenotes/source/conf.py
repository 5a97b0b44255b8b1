# Sphinx configuration of the nova-scoped-policies release notes.

extensions = ['openstackdocstheme', 'reno.sphinxext']
openstackdocs_repo_name = 'openstack/nova-scoped-policies'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False
openstackdocs_bug_project = 'nova-scoped-policies'
openstackdocs_bug_tag = 'releasenotes'
project = 'nova-scoped-policies release notes'
copyright = '2026, nova-scoped-policies developers'
master_doc = 'index'
html_theme = 'openstackdocs'
