#!/usr/bin/env bash
# Install and use the tarballs `make dist` writes, the way a partner would, with no cargo or
# rustc on PATH:
#   - C: unpack to a fresh prefix, build examples/c and examples/cpp with pkg-config against it
#     (the relocatable rampart.pc), check the SONAME, run both under valgrind;
#   - server: unpack, start it on a fresh SQLite file, `partner create`, the README's curl
#     walkthrough (create2fa, enable2fa with a real code, status, verify, disable2fa), SIGTERM.
#
#   scripts/dist-test.sh DIST_DIR VERSION
set -euo pipefail
dist=$(cd "$1" && pwd)
version=$2
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
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
ldd "$work/backend_c" | grep -q "librampart.so.$major => $prefix/lib/" ||
  { echo "dist-test: the C example does not load the tarball's librampart" >&2; exit 1; }
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
expect() { # expect WANT ACTUAL WHAT
  [ "$2" = "$1" ] || { echo "dist-test: $3: got $2, want $1" >&2; cat "$work/server.log" >&2; exit 1; }
}
manual=$(curl -s -H "$H" "$url/v1/auth/create2fa?contactId=$C" | python3 -c 'import json,sys; print(json.load(sys.stdin)["details"]["manual"])')
expect '{"message":"Successfully enabled 2fa!","code":200}' \
  "$(curl -s -H "$H" -d "{\"contactId\":\"$C\",\"token\":\"$(code "$manual" -1)\"}" "$url/v1/auth/enable2fa")" enable2fa
expect '{"message":"2FA is true.","code":200,"status":true}' "$(curl -s -H "$H" "$url/v1/auth/2fa?contactId=$C")" status
expect '{"message":"2FA token is valid.","code":200}' \
  "$(curl -s -H "$H" -d "{\"contactId\":\"$C\",\"token\":\"$(code "$manual")\"}" "$url/v1/auth/verify2fa")" verify2fa
expect '{"message":"Successfully disbaled 2fa!","code":200}' \
  "$(curl -s -H "$H" -d "{\"contactId\":\"$C\",\"token\":\"$(code "$manual" 1)\"}" "$url/v1/auth/disable2fa")" disable2fa
kill -TERM "$server"
status=0
wait "$server" || status=$?
server=
expect 0 "$status" "exit status after SIGTERM"
echo "   - dist artifacts: C and server tarballs installed and used without cargo"
