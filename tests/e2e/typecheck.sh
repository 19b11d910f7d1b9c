#!/usr/bin/env bash
# Type-checks the web page without a build: generates the API's types from the committed OpenAPI document
# (docs/openapi.json, by openapi-typescript) as `trove-api`, then runs `tsc --noEmit` over adapters/http/web/*.js
# (each `// @ts-check`, typed by JSDoc), so a field renamed in the API fails where a view reads it.
#
# Needs: node 20+ with npm (the test package's locked dependencies are installed here).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
[ -d node_modules/typescript ] && [ -d node_modules/oidc-provider ] || npm ci --no-audit --no-fund --loglevel=error
mkdir -p types
npx --no-install openapi-typescript "$root/docs/openapi.json" -o types/api.d.ts --silent
npx --no-install tsc -p tsconfig.json
echo "typecheck: the web page agrees with docs/openapi.json"
