"""What a solution of the compliance goal reports: its efficacy indicators
and global efficacy, as Watcher's own efficacy specifications do."""

from watcher.decision_engine.goal.efficacy import base
from watcher.decision_engine.goal.efficacy import indicators
from watcher.decision_engine.solution import efficacy

VIOLATIONS_BEFORE = 'violations_before'
VIOLATIONS_AFTER = 'violations_after'
MIGRATIONS = indicators.InstanceMigrationsCount().name
TEMPORARY = 'temporary_migrations_count'
REPAIRED_RATIO = 'violations_repaired_ratio'


class _Count(indicators.IndicatorSpecification):
    """A number of things, zero or more.

    :param name: the indicator's name.
    :param description: what it counts.
    """

    def __init__(self, name: str, description: str) -> None:
        super().__init__(name=name, description=description, unit=None)

    @property
    def schema(self) -> dict:
        return {'type': 'integer', 'minimum': 0}


class ScopedPolicyCompliance(base.EfficacySpecification):
    """Violations found, violations the action plan leaves, and the live
    migrations it takes (those through a free host apart)."""

    def get_indicators_specifications(self) -> list:
        return [
            _Count(VIOLATIONS_BEFORE, 'Hard violations of scoped server '
                   'group and stack policies found by the audit.'),
            _Count(VIOLATIONS_AFTER, 'Hard violations left once the action '
                   'plan is applied (all of them when no repair exists).'),
            indicators.InstanceMigrationsCount(),
            _Count(TEMPORARY, 'Migrations that only make room: the server '
                   'moves on later in the plan.'),
        ]

    def get_global_efficacy_indicator(self, indicators_map=None) -> list:
        before = indicators_map.get(VIOLATIONS_BEFORE, 0) \
            if indicators_map else 0
        after = indicators_map.get(VIOLATIONS_AFTER, 0) \
            if indicators_map else 0
        value = 100.0 * (before - after) / before if before else 100.0
        return [efficacy.Indicator(
            name=REPAIRED_RATIO,
            description='Share of the hard violations found that the action '
            'plan ends (100 when none was found).',
            unit='%', value=value)]
