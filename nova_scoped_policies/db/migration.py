"""Create and upgrade the policy store schema with alembic (and make a
throwaway one from the models, for the simulator).

alembic is imported by the functions that use it: the simulator's scratch
store (:func:`create_scratch`) needs none of it, and it takes about 0.1 s
to import.
"""

import os

from nova_scoped_policies.db import models


def _config(connection):
    """alembic's configuration, on our scripts and ``connection``."""
    from alembic import config as alembic_config
    config = alembic_config.Config()
    config.set_main_option('script_location', os.path.join(
        os.path.dirname(__file__), 'migrations'))
    config.attributes['connection'] = connection
    return config


def upgrade(engine, revision: str = 'head') -> None:
    """Bring the schema of ``engine``'s database to ``revision``."""
    from alembic import command
    with engine.begin() as connection:
        command.upgrade(_config(connection), revision)


def create_scratch(engine) -> None:
    """The schema of a database that lives only as long as its process
    (the simulator's, in memory): the tables made from the models in one
    step, without alembic's scripts, which take ten times as long.
    ``tests/unit/db/test_store.py`` keeps the models equal to the head
    revision. No revision is recorded: never for a store that lives on.
    """
    models.BASE.metadata.create_all(engine)


def version(engine):
    """The schema revision of the database, or None when empty."""
    from alembic import migration as alembic_migration
    with engine.connect() as connection:
        return alembic_migration.MigrationContext.configure(
            connection).get_current_revision()


def head() -> str:
    """The newest revision this code knows."""
    from alembic import script as alembic_script
    config = _config(None)
    scripts = alembic_script.ScriptDirectory.from_config(config)
    return scripts.get_current_head()


class SchemaError(RuntimeError):
    """The database is not at the revision this code needs."""


def check(engine) -> None:
    """Refuse a database behind or beyond this code's schema.

    :raises SchemaError: with one line saying what to do.
    """
    found, wanted = version(engine), head()
    if found != wanted:
        raise SchemaError(
            f'the policy store database is at revision '
            f'{found or "none (empty)"}, this code needs {wanted}: run '
            '"nova-scoped-policies-manage db sync" with this release')
