"""nova-scoped-policies-status against a real nova API database (SQLite,
schema from nova-manage api_db sync) and the real RabbitMQ of 127.0.0.1
(a virtual host of the module's own, whose policies the queue-expiry
check reads: RabbitMQ's management plugin is not enabled on this machine,
so the check reads them with rabbitmqctl)."""

import os
import sqlite3
import subprocess
import sys
import uuid

import pytest

from nova_scoped_policies.nova_seam import aggregates
from tests.functional.api import test_notifications as rabbit

BIN = os.path.dirname(sys.executable)
CONF = """[DEFAULT]
transport_url = rabbit://guest:guest@127.0.0.1:5672/{vhost}
[api_database]
connection = sqlite:///{db}
[filter_scheduler]
available_filters = nova.scheduler.filters.all_filters
available_filters = nova_scoped_policies.scheduler.filters.all_filters
enabled_filters = ComputeFilter,ServerGroupAffinityFilter,ServerGroupAntiAffinityFilter,ScopedAffinityFilter,ScopedAntiAffinityFilter
weight_classes = nova.scheduler.weights.all_weighers,nova_scoped_policies.scheduler.weights.all_weighers
[notifications]
notification_format = both
[oslo_messaging_notifications]
driver = messagingv2
"""


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope='module')
def vhost():
    """A virtual host with the expiry policy the devstack plugin sets."""
    rabbit._rabbit_or_fail()
    name = f'nsp-status-{uuid.uuid4().hex[:12]}'
    rabbit._ctl('add_vhost', name)
    rabbit._ctl('set_policy', '-p', name, aggregates.POLICY,
                aggregates.POLICY_PATTERN,
                f'{{"expires":{aggregates.POLICY_EXPIRES_MS}}}',
                '--apply-to', 'queues')
    yield name
    rabbit._ctl('delete_vhost', name)


@pytest.fixture(scope='module')
def api_db(tmp_path_factory, vhost):
    tmp = tmp_path_factory.mktemp('status')
    db = tmp / 'api.db'
    conf = tmp / 'nova.conf'
    conf.write_text(CONF.format(db=db, vhost=vhost))
    done = run(os.path.join(BIN, 'nova-manage'), '--config-file', str(conf),
               'api_db', 'sync')
    assert done.returncode == 0, done.stderr
    return conf, db


def add_aggregate(db, agg_id, name, hosts, metadata):
    with sqlite3.connect(db) as conn:
        conn.execute('INSERT INTO aggregates (id, uuid, name) VALUES '
                     '(?, ?, ?)', (agg_id, f'uuid-{name}', name))
        for host in hosts:
            conn.execute('INSERT INTO aggregate_hosts (host, aggregate_id) '
                         'VALUES (?, ?)', (host, agg_id))
        for key, value in metadata.items():
            conn.execute('INSERT INTO aggregate_metadata (aggregate_id, '
                         '`key`, value) VALUES (?, ?, ?)',
                         (agg_id, key, value))


def status(conf):
    return run(os.path.join(BIN, 'nova-scoped-policies-status'),
               '--config-file', str(conf), 'upgrade', 'check')


def test_ready_cloud_passes(api_db):
    conf, db = api_db
    add_aggregate(db, 1, 'rack-1', ['h1', 'h2'], {'policy_scope': 'rack'})
    done = status(conf)
    assert done.returncode == 0, done.stdout + done.stderr
    assert '1 scope(s) defined: rack' in done.stdout
    # what nova-scheduler installs at start with this nova.conf
    text = ' '.join(done.stdout.replace('|', ' ').split())
    assert ('nova seam (nova 34 internals match); nova-scheduler installs '
            'at start: request_filters: ScopedPlanFilter; '
            'select_destinations; aggregate notifications:') in text, text


def test_queue_expiry_is_read_from_rabbitmq(api_db, vhost, tmp_path):
    conf, db = api_db
    done = status(conf)
    text = ' '.join(done.stdout.replace('|', ' ').split())
    assert ('RabbitMQ policy nova-scoped-policies-aggregates expires the '
            'queue of a scheduler that dies after 600 s unused (read from '
            'rabbitmqctl)') in text, text
    # a virtual host without the policy: a warning with the command
    bare = f'nsp-status-{uuid.uuid4().hex[:12]}'
    rabbit._ctl('add_vhost', bare)
    try:
        other = tmp_path / 'nova.conf'
        other.write_text(conf.read_text().replace(vhost, bare))
        done = status(other)
    finally:
        rabbit._ctl('delete_vhost', bare)
    assert done.returncode == 1, done.stdout + done.stderr
    text = ' '.join(done.stdout.replace('|', ' ').split())
    assert f'no RabbitMQ policy of virtual host {bare} matches our ' \
        'queues' in text, text
    assert 'rabbitmqctl set_policy' in text  # the table wraps the rest


def test_host_in_two_racks_fails_naming_it(api_db):
    conf, db = api_db
    add_aggregate(db, 2, 'rack-2', ['h2', 'h3'], {'policy_scope': 'rack'})
    done = status(conf)
    assert done.returncode == 2, done.stdout + done.stderr
    assert 'host h2 is in 2 domains of scope rack' in done.stdout


def test_missing_api_database_is_one_line(tmp_path):
    conf = tmp_path / 'nova.conf'
    conf.write_text(CONF.split('[filter_scheduler]', 1)[1].join(
        ['[filter_scheduler]', '']))
    done = status(conf)
    assert done.returncode == 2, done.stdout + done.stderr
    assert 'Traceback' not in done.stdout + done.stderr
    text = ' '.join(done.stdout.replace('|', ' ').split())
    assert ('[api_database] connection is not set: run the check with the '
            'nova.conf of nova-scheduler') in text
