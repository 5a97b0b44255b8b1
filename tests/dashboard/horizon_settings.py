"""Horizon's settings for the browser tests: a real Horizon (the
installed openstack_dashboard, with this plugin's enabled/ files linked
in by tools/horizon-venv.sh) against the Keystone of
``NSP_KEYSTONE_URL``, served by ``django-admin runserver``."""

import os

from openstack_dashboard.settings import *  # noqa: F401,F403

DEBUG = True
ALLOWED_HOSTS = ['127.0.0.1', 'localhost']
OPENSTACK_KEYSTONE_URL = os.environ['NSP_KEYSTONE_URL'] + '/v3'
OPENSTACK_KEYSTONE_DEFAULT_ROLE = 'member'
OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT = False
OPENSTACK_ENDPOINT_TYPE = 'publicURL'
SECRET_KEY = os.environ['NSP_HORIZON_SECRET']
SESSION_ENGINE = 'django.contrib.sessions.backends.signed_cookies'
CACHES = {'default': {
    'BACKEND': 'django.core.cache.backends.locmem.LocMemCache'}}
COMPRESS_OFFLINE = False
LOGGING = {'version': 1, 'disable_existing_loggers': False}
