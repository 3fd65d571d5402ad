#!/usr/bin/env bash
# Packs the package, installs the tarball into an empty project, and imports every subpath there
# in ESM and CJS: proves the package as a user gets it, not the sources.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

tarball="$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -n 1)"
cd "$work"
printf '{ "name": "smoke", "private": true, "version": "0.0.0" }\n' > package.json
npm install --no-audit --no-fund --prefer-offline --omit=dev "./$tarball" > install.log 2>&1 || {
  cat install.log
  exit 1
}
cp "$root/test/package/smoke.mjs" "$root/test/package/smoke.cjs" .
node smoke.mjs
node smoke.cjs
./node_modules/.bin/crossborder-callbacks --help > cli-help.txt
grep -q "simulate" cli-help.txt
grep -q "service <operation|list>" cli-help.txt
./node_modules/.bin/crossborder-callbacks service list > service-list.txt
grep -q "dispatchConsolidatedShipment" service-list.txt
echo "smoke: the CLI bin runs"
