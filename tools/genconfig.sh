#!/usr/bin/env bash
# Generate etc/nova-scoped-policies/nova-scoped-policies.conf.sample (every
# option of the project with its help) in the project's virtualenv.
# oslo-config-generator run through our package, which silences eventlet's
# deprecation warning (oslo.messaging's options import it).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/venv.sh
exec "$NSP_VENV/bin/python" -c '
import sys
import nova_scoped_policies.cmd  # noqa: F401 (no eventlet warning)
from oslo_config import generator
sys.exit(generator.main())' \
    --config-file etc/nova-scoped-policies/config-generator.conf "$@"
