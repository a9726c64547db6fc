#!/usr/bin/env bash
# The TypeScript example (examples/typescript, or a copy with the npm tarball installed):
# `tsc -p` with its strict tsconfig against the package's index.d.ts, then the compiled
# lifecycle run, its answers compared with SPEC section 3's. With --misuse, also checks that a
# wrong use of the API fails to type-check, so the declarations are really in use.
#
#   scripts/typescript-example.sh DIR [--misuse]
set -euo pipefail
dir=$1
cd "$dir"
node_modules/.bin/tsc -p .
want='create2fa 200 {"message":"Successfully created 2fa!","code":200} (with qrCode and manual)
enable2fa 200 {"message":"Successfully enabled 2fa!","code":200} (with 10 recoveryCodes)
2fa 200 {"message":"2FA is true.","code":200,"status":true,"recoveryCodesRemaining":10}
verify2fa 200 {"message":"2FA token is valid.","code":200,"method":"token","recoveryCodesRemaining":10}
verify2fa (replayed) 401 {"message":"Google 2FA failed","code":401}
verify2fa (recovery code) 200 {"message":"2FA token is valid.","code":200,"method":"recoveryCode","recoveryCodesRemaining":9}
2fa (unknown partner) 404 {"message":"Partner not found","code":404}'
got=$(node build/lifecycle.js)
[ "$got" = "$want" ] || { echo "typescript example: got"; echo "$got"; echo "want"; echo "$want"; exit 1; } >&2
if [ "${2:-}" = --misuse ]; then
  # status2fa resolves to a boolean; createPartner takes a string.
  printf '%s\n' "import { Service } from 'rampart'" "export async function f(s: Service): Promise<number> {" \
    "  await s.createPartner(42)" "  return await s.status2fa('p', 'c')" "}" > misuse.ts
  if out=$(node_modules/.bin/tsc --ignoreConfig --noEmit --strict --module node16 --target es2022 --types node misuse.ts); then
    echo "typescript example: misuse.ts type-checked; index.d.ts is not in use" >&2
    exit 1
  fi
  for want_error in "misuse.ts(3,25): error TS2345" "misuse.ts(4,3): error TS2322"; do
    grep -qF "$want_error" <<<"$out" || { echo "typescript example: no '$want_error' in:"; echo "$out"; exit 1; } >&2
  done
  rm misuse.ts
fi
echo "   - examples/typescript: tsc --strict against index.d.ts, the lifecycle's answers as SPEC section 3 says"
