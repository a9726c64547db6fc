#!/usr/bin/env bash
# Install and use the artifacts `make dist` writes, the way a partner would:
#   - Python sdist (the one artifact built from source, so cargo is still on PATH for it): a
#     fresh venv pip-installs it (maturin fetched by pip's build isolation), then the checks below;
# and then with no cargo or rustc on PATH:
#   - C: unpack to a fresh prefix, build examples/c and examples/cpp with pkg-config against it
#     (the relocatable rampart.pc), check the SONAME, run both under valgrind;
#   - server: unpack, start it on a fresh SQLite file, `partner create`, the README's curl
#     walkthrough (create2fa, enable2fa with a real code, status, verify by code and by recovery
#     code, disable2fa), SIGTERM;
#   - Python wheel: a fresh venv installs it; the FastAPI example's tests over HTTP with pyotp
#     codes, mypy --strict on it, the standard-library example's self-test, a pyotp lifecycle;
#   - Node tarball: a fresh directory npm-installs it (no compiler); the Express example's
#     tests over HTTP with otplib codes, the TypeScript example with tsc --strict;
#   - widget package: installed there too, imported and required where there is no DOM
#     (widget/test/pack.test.mjs bundles and type-checks it; widget/e2e renders it in Chromium).
#
#   scripts/dist-test.sh DIST_DIR VERSION GLIBC
set -euo pipefail
dist=$(cd "$1" && pwd)
version=$2
glibc=$3
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
expect() { # expect WANT ACTUAL WHAT (while the server runs, its log is shown too)
  [ "$2" = "$1" ] && return
  echo "dist-test: $3: got $2, want $1" >&2
  [ -z "${server:-}" ] || cat "$work/server.log" >&2
  exit 1
}
pip_install() { # pip_install VENV ARGS...: quietly, from the registry or pip's cache
  local venv=$1
  shift
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
}

# A fresh venv holding an installed rampart: the examples and a lifecycle run against it, never
# against the repository's sources (they are copied out; bindings/python is not on the path).
python_checks() { # python_checks VENV WHAT
  local venv=$1 what=$2 here="$work/py-$2"
  pip_install "$venv" -r "$root/examples/fastapi/requirements.txt" mypy
  mkdir -p "$here"
  cp "$root/examples/fastapi/app.py" "$root/examples/fastapi/test_app.py" "$root/examples/python/partner_backend.py" "$here/"
  (
    cd "$here"
    "$venv/bin/python" -m pytest -q -p no:cacheprovider test_app.py >"$here/pytest.out" ||
      { cat "$here/pytest.out"; exit 1; }
    "$venv/bin/python" -m mypy --strict --cache-dir "$here/.mypy" app.py >/dev/null
    "$venv/bin/python" partner_backend.py --self-test >"$here/self-test.out" 2>&1 || { cat "$here/self-test.out"; exit 1; }
    "$venv/bin/python" - "$version" <<'PY'
import pathlib, sys, time, uuid
from importlib.metadata import distribution

import pyotp
import rampart

package = pathlib.Path(rampart.__file__).parent
assert package.is_relative_to(sys.prefix), f"rampart comes from {package}, not the venv"
for stub in ("py.typed", "_rampart.pyi"):
    assert (package / stub).is_file(), f"the installed package lacks {stub}"
installed = distribution("rampart")
assert installed.version == sys.argv[1], installed.version
assert any(str(f).endswith("licenses/LICENSE") for f in installed.files or []), "no licence file"
with rampart.Service() as service:
    partner = service.create_partner("Dist test").partner_id
    contact = str(uuid.uuid4())
    totp = pyotp.TOTP(service.create_2fa(partner, contact).manual)
    now = time.time()
    service.enable_2fa(partner, contact, totp.at(now - 30))
    assert service.status_2fa(partner, contact)
    assert service.verify_2fa(partner, contact, totp.at(now))
    assert not service.verify_2fa(partner, contact, totp.at(now)), "a replayed code verified"
    service.disable_2fa(partner, contact, totp.at(now + 30))
    assert not service.status_2fa(partner, contact)
PY
  )
  echo "   - Python $what: installed in a fresh venv; FastAPI example over HTTP ($(tail -n 1 "$here/pytest.out")), mypy --strict, self-test, pyotp lifecycle"
}

echo "   - Python sdist: pip install in a fresh venv (maturin from pip's build isolation; cargo needed, the dev profile)"
python3 -m venv "$work/venv-sdist"
MATURIN_PEP517_ARGS="--profile dev" pip_install "$work/venv-sdist" "$dist/rampart-$version.tar.gz"
python_checks "$work/venv-sdist" sdist

# No Rust toolchain from here on.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
  echo "dist-test: cargo or rustc is still on PATH ($PATH)" >&2
  exit 1
fi
major=${version%%.*}

echo "   - C tarball: unpack, SONAME, pkg-config build of examples/c and examples/cpp, valgrind"
tar -xzf "$dist/rampart-c-$version-linux-x86_64.tar.gz" -C "$work"
prefix="$work/rampart-c-$version-linux-x86_64"
for f in LICENSE README.md include/rampart.h lib/librampart.a "lib/librampart.so.$version" lib/pkgconfig/rampart.pc; do
  [ -e "$prefix/$f" ] || { echo "dist-test: the C tarball lacks $f" >&2; exit 1; }
done
soname=$(objdump -p "$prefix/lib/librampart.so.$version" | awk '/SONAME/ {print $2}')
[ "$soname" = "librampart.so.$major" ] || { echo "dist-test: SONAME is '$soname', want librampart.so.$major" >&2; exit 1; }
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[ "$(pkg-config --modversion rampart)" = "$version" ] || { echo "dist-test: rampart.pc version" >&2; exit 1; }
flags=$(pkg-config --cflags --libs rampart)
warn="-Wall -Wextra -Wpedantic -Werror"
# shellcheck disable=SC2086
cc -std=c99 $warn "$root/examples/c/partner_backend.c" $flags -Wl,-rpath,"$prefix/lib" -o "$work/backend_c"
# shellcheck disable=SC2086
c++ -std=c++17 $warn "$root/examples/cpp/partner_backend.cpp" $flags -Wl,-rpath,"$prefix/lib" -o "$work/backend_cpp"
# Capture first: `ldd | grep -q` under pipefail fails whenever grep exits before ldd's last write
# (SIGPIPE), which happened in CI.
linked=$(ldd "$work/backend_c")
grep -q "librampart.so.$major => $prefix/lib/" <<<"$linked" ||
  { echo "dist-test: the C example does not load the tarball's librampart:" >&2; echo "$linked" >&2; exit 1; }
vg="valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=99"
$vg "$work/backend_c" "$work/c.db" >/dev/null
$vg "$work/backend_cpp" "$work/cpp.db" >/dev/null

echo "   - server tarball: unpack, start, partner create, the curl walkthrough, SIGTERM"
tar -xzf "$dist/rampart-server-$version-linux-x86_64.tar.gz" -C "$work"
home="$work/rampart-server-$version-linux-x86_64"
for f in LICENSE README.md bin/rampart-server share/rampart/rampart-server.service share/rampart/Dockerfile; do
  [ -e "$home/$f" ] || { echo "dist-test: the server tarball lacks $f" >&2; exit 1; }
done
bin="$home/bin/rampart-server"
[ "$("$bin" --version)" = "rampart-server $version" ] || { echo "dist-test: --version says $("$bin" --version)" >&2; exit 1; }
partner=$("$bin" partner create --db "$work/server.db" --name "Dist test" --environment sandbox)
key=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["secretKey"])' <<<"$partner")
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RUST_LOG=info "$bin" --db "$work/server.db" --listen "127.0.0.1:$port" >"$work/server.out" 2>"$work/server.log" &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
url="http://127.0.0.1:$port"
H="Authorization: Bearer $key"
C=$(python3 -c 'import uuid; print(uuid.uuid4())')
code() { # the current TOTP code of a base32 secret (RFC 6238, SHA-1, 6 digits, 30 s)
  python3 - "$1" "${2:-0}" <<'PY'
import base64, hmac, struct, sys, time
key = base64.b32decode(sys.argv[1] + "=" * (-len(sys.argv[1]) % 8))
step = int(time.time()) // 30 + int(sys.argv[2])
mac = hmac.new(key, struct.pack(">Q", step), "sha1").digest()
offset = mac[-1] & 15
print("%06d" % ((struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 1000000))
PY
}
manual=$(curl -s -H "$H" "$url/v1/auth/create2fa?contactId=$C" | python3 -c 'import json,sys; print(json.load(sys.stdin)["details"]["manual"])')
enabled=$(curl -s -H "$H" -d "{\"contactId\":\"$C\",\"token\":\"$(code "$manual" -1)\"}" "$url/v1/auth/enable2fa")
expect 'Successfully enabled 2fa! 200 10' "$(python3 -c 'import json,sys; b = json.load(sys.stdin)
print(b["message"], b["code"], len(b["details"]["recoveryCodes"]))' <<<"$enabled")" enable2fa
recovery=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["details"]["recoveryCodes"][0])' <<<"$enabled")
expect '{"message":"2FA is true.","code":200,"status":true,"recoveryCodesRemaining":10}' \
  "$(curl -s -H "$H" "$url/v1/auth/2fa?contactId=$C")" status
expect '{"message":"2FA token is valid.","code":200,"method":"token","recoveryCodesRemaining":10}' \
  "$(curl -s -H "$H" -d "{\"contactId\":\"$C\",\"token\":\"$(code "$manual")\"}" "$url/v1/auth/verify2fa")" verify2fa
expect '{"message":"2FA token is valid.","code":200,"method":"recoveryCode","recoveryCodesRemaining":9}' \
  "$(curl -s -H "$H" -d "{\"contactId\":\"$C\",\"recoveryCode\":\"$recovery\"}" "$url/v1/auth/verify2fa")" \
  "verify2fa by recovery code"
expect '{"message":"Successfully disbaled 2fa!","code":200}' \
  "$(curl -s -H "$H" -d "{\"contactId\":\"$C\",\"token\":\"$(code "$manual" 1)\"}" "$url/v1/auth/disable2fa")" disable2fa
kill -TERM "$server"
status=0
wait "$server" || status=$?
server=
expect 0 "$status" "exit status after SIGTERM"

wheel="$dist/rampart-$version-cp310-abi3-manylinux_${glibc/./_}_x86_64.whl"
echo "   - Python wheel: $(basename "$wheel"), pip install in a fresh venv"
python3 -m venv "$work/venv-wheel"
pip_install "$work/venv-wheel" --only-binary=:all: "$wheel"
python_checks "$work/venv-wheel" wheel

echo "   - Node tarball: npm install in a fresh directory, the Express example over HTTP, the TypeScript example"
app="$work/node-app"
mkdir -p "$app"
echo '{ "name": "dist-test-app", "version": "1.0.0", "private": true }' >"$app/package.json"
pinned() { # pinned EXAMPLE PACKAGE: the version an example's package.json pins
  node -p "const p = require('$root/examples/$1/package.json'); ({ ...p.dependencies, ...p.devDependencies })['$2']"
}
(cd "$app" && npm install --prefer-offline --no-audit --no-fund --loglevel=error "$dist/rampart-$version.tgz" \
  "express@$(pinned express express)" "otplib@$(pinned express otplib)" \
  "typescript@$(pinned typescript typescript)" "@types/node@$(pinned typescript @types/node)" >/dev/null)
installed="$app/node_modules/rampart"
[ -d "$installed" ] && [ ! -L "$installed" ] || { echo "dist-test: node_modules/rampart is not an installed copy" >&2; exit 1; }
files=$(cd "$installed" && find . -type f | sort | tr '\n' ' ')
expect "./LICENSE ./README.md ./index.d.ts ./index.js ./main.js ./package.json ./rampart.linux-x64-gnu.node " "$files" "the Node package's files"
newest=$(objdump -T "$installed/rampart.linux-x64-gnu.node" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
expect "$glibc" "$newest" "the newest glibc symbol version the addon links"
grep -qF "const GLIBC = '$glibc'" "$installed/main.js" || { echo "dist-test: main.js states another glibc than $glibc" >&2; exit 1; }
cp "$root/examples/express/app.js" "$root/examples/express/app.test.js" "$app/"
(cd "$app" && node --test app.test.js >"$work/express.out") || { cat "$work/express.out" >&2; exit 1; }
echo "   - Express example against the tarball: $(grep -E '^# (pass|fail) ' "$work/express.out" | tr '\n' ' ')"
cp "$root/examples/typescript/lifecycle.ts" "$root/examples/typescript/tsconfig.json" "$app/"
"$root/scripts/typescript-example.sh" "$app" --misuse

echo "   - widget loader package: npm install, import and require where there is no DOM (server-side rendering)"
(cd "$app" && npm install --offline --no-audit --no-fund --loglevel=error "$dist/rampart-widget-$version.tgz" >/dev/null)
files=$(cd "$app/node_modules/@rampart/widget" && find . -type f | sort | tr '\n' ' ')
expect "./LICENSE ./README.md ./index.cjs ./index.d.cts ./index.d.ts ./index.js ./package.json " "$files" "the widget package's files"
ssr='const probe = (w) => { try { w.render({}); return "rendered" } catch (e) { return `${e.name} ${e.code}` } };'
expect "RampartWidgetError no_browser" "$(cd "$app" && node --input-type=module -e "$ssr import * as w from '@rampart/widget'; console.log(probe(w))")" "import in Node"
expect "RampartWidgetError no_browser" "$(cd "$app" && node -e "$ssr console.log(probe(require('@rampart/widget')))")" "require in Node"
echo "   - dist artifacts: C, server, Python (wheel, sdist), Node and the widget package installed and used"
