"""``auth_strategy = keystone``: keystonemiddleware guards every path but
the version document, and forged identity headers do not get through.
No token is sent, so auth_token answers without calling keystone."""

from oslo_config import cfg
import webob

from nova_scoped_policies.api import deploy
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.db import api as store_api


def test_keystone_mode_needs_a_token(tmp_path):
    path = tmp_path / 'nsp.conf'
    path.write_text('[scoped_policies_api]\nauth_strategy = keystone\n'
                    '[keystone_authtoken]\n'
                    'www_authenticate_uri = http://127.0.0.1:5000/v3\n')
    conf = cfg.ConfigOpts()
    nsp_conf.register_opts(conf)
    conf([], default_config_files=[str(path)])
    app = deploy.loadapp(conf, store_api.PolicyStore(
        f'sqlite:///{tmp_path}/store.db'), placement=lambda: None)

    root = webob.Request.blank('/').get_response(app)
    assert root.status_code == 200
    forged = webob.Request.blank('/os-policy-scopes', headers={
        'X-Project-Id': 'admin', 'X-Roles': 'admin',
        'X-Identity-Status': 'Confirmed'}).get_response(app)
    assert forged.status_code == 401
    assert 'http://127.0.0.1:5000/v3' in forged.headers['WWW-Authenticate']
