#!/usr/bin/env bash
# The core's bottom layer stays at the bottom: the store (core/src/store/) and the sealing code
# (core/src/crypto.rs) may use only the shared vocabulary (ids, vocab, chain, fsutil), error and
# clock, never a module above them (service, lifecycle, partner, audit, ...), so the modules
# above can each do one job without import cycles. Test modules (from `#[cfg(test)]` on) may
# use anything.
set -euo pipefail
cd "$(dirname "$0")/.."
allowed='ids|vocab|chain|fsutil|error|clock|store'
bad=0
for f in core/src/crypto.rs core/src/store/*.rs; do
    # Code before the first test module; every `crate::<module>` path it names.
    while IFS= read -r hit; do
        echo "check-layers: $f: uses crate::$hit, above the bottom layer (allowed: ${allowed//|/, })" >&2
        bad=1
    done < <(awk '/^#\[cfg\((all\()?test/ { exit } { print }' "$f" \
        | grep -oE 'crate::(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)' \
        | sed -E 's/^crate:://; s/[{}]//g' | tr ',' '\n' | sed -E 's/^ *//; s/::.*//' \
        | grep -vxE "$allowed" | sort -u || true)
done
if [ "$bad" -ne 0 ]; then exit 1; fi
echo "check-layers: core/src/store/ and core/src/crypto.rs use only the bottom layer"
