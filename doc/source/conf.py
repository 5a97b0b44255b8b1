# Sphinx configuration of the nova-scoped-policies documentation.

extensions = [
    'openstackdocstheme',
    'oslo_config.sphinxext',
    'oslo_config.sphinxconfiggen',
    'oslo_policy.sphinxext',
    'oslo_policy.sphinxpolicygen',
]

config_generator_config_file = [
    ('../../etc/nova-scoped-policies/config-generator.conf',
     '_static/nova-scoped-policies'),
]

# admin/policy.rst includes the sample policy file built from the rules
policy_generator_config_file = \
    '../../etc/nova-scoped-policies/policy-generator.conf'
sample_policy_basename = '_static/nova-scoped-policies'

openstackdocs_repo_name = 'openstack/nova-scoped-policies'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False
openstackdocs_bug_project = 'nova-scoped-policies'
openstackdocs_bug_tag = 'doc'

project = 'nova-scoped-policies'
copyright = '2026, nova-scoped-policies developers'
master_doc = 'index'
exclude_patterns = ['_build']
pygments_style = 'native'
html_theme = 'openstackdocs'
html_static_path = ['_static']
