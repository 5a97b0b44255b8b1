"""The policy store: scopes and scoped server groups (SQLAlchemy).

SQLite by default; PostgreSQL and MariaDB/MySQL are tested too. The schema
is created and upgraded by alembic (:func:`migration.upgrade`); the
simulator's throwaway store in memory is made from the models at once
(:func:`migration.create_scratch`).
"""
