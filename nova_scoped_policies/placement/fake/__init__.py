"""An in-memory Placement's REST API: the subset nova-scoped-policies uses.

A WSGI app (webob) for simulations and tests that need no database:
resource providers with generations (create, list, show, rename, delete),
inventories, usages, aggregates, traits, ``GET /allocation_candidates``
(resources, required, forbidden and any-of traits, ``member_of`` plain,
``in:``, ``!in:`` and repeated, ``root_required``, ``limit``),
allocations (list and dict forms, ``POST /allocations``) and
``GET /usages``. Microversions 1.0 to 1.39 are checked as Placement
checks them (400 for a malformed header, 406 for an unsupported version,
400 or 404 for a parameter or route the version does not know), bodies
are validated with JSON schemas of Placement's API reference, and the
status codes are Placement's: ``tests/functional/test_placement_gabbits.py``
runs Placement's own gabbi files for this subset against this app, and
``tests/functional/test_placement_conformance.py`` runs the same cases
against it and the real Placement.

Not served (:data:`NOT_SERVED`, answered 501 with a body naming what is
not served): nested and sharing providers (``parent_provider_uuid``,
``in_tree``, granular request groups), ``/resource_classes`` (custom
resource classes are accepted without being created), ``/reshaper``,
keystone tokens and policies (every caller is an admin), CORS.

This package parses requests, checks microversions and renders answers;
the state and its rules are those of
:mod:`~nova_scoped_policies.placement.model` (``FakePlacement.model``),
whose errors map to 404, 409 and 400 in :mod:`.errors`, once. Laid out
as Placement is: :mod:`.app` (the WSGI app and its route table),
:mod:`.microversion`, :mod:`.schemas` (request bodies), :mod:`.queries`
(query strings) and a module of handlers per resource
(:mod:`.providers`, :mod:`.inventories`, :mod:`.usages`,
:mod:`.aggregates`, :mod:`.traits`, :mod:`.allocations`,
:mod:`.candidates`).
"""

from nova_scoped_policies.placement.fake.allocations import \
    INCOMPLETE_CONSUMER
from nova_scoped_policies.placement.fake.app import FakePlacement
from nova_scoped_policies.placement.fake.app import NOT_SERVED
from nova_scoped_policies.placement.fake.errors import APIError
from nova_scoped_policies.placement.fake.errors import DEFAULT_CODE
from nova_scoped_policies.placement.fake.errors import not_served
from nova_scoped_policies.placement.fake.errors import NOT_SERVED_CODE
from nova_scoped_policies.placement.fake.microversion import MAX_VERSION
from nova_scoped_policies.placement.fake.microversion import MIN_VERSION
from nova_scoped_policies.placement.fake.microversion import parse_version
from nova_scoped_policies.placement.fake.schemas import validate

__all__ = ['APIError', 'DEFAULT_CODE', 'FakePlacement',
           'INCOMPLETE_CONSUMER', 'MAX_VERSION', 'MIN_VERSION',
           'NOT_SERVED', 'NOT_SERVED_CODE', 'not_served', 'parse_version',
           'validate']
