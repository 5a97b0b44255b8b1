"""The what-if simulator: scenarios through the scheduler's own code path.

See ``shared/contracts/simulation.md`` and doc/source/user/simulator.rst.
"""
