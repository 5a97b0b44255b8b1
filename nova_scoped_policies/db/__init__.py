"""The policy store: scopes and scoped server groups (SQLAlchemy).

SQLite by default; PostgreSQL and MariaDB/MySQL are tested too. The schema
is created and upgraded by alembic (:func:`migration.upgrade`).
"""
