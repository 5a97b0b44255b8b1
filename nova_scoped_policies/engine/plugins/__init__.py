"""One plugin per policy type, plus the min_domains rule."""
