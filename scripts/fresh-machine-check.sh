#!/usr/bin/env bash
# Checks the README's claim that `npm ci && npm test` needs nothing installed by hand, on a
# machine barer than any developer's: Debian bookworm from `debootstrap --variant=minbase`
# (about 90 packages: no libnss3, no fonts, no chromium, no git), this machine's node and
# npm copied in, a clean export of HEAD. In it: npm ci, then by default the unit tier and
# the browser tests (the ones that failed on fresh machines); with arguments, `npx vitest
# run ARGS` instead (`--project integration`, `browser` or `system` for the other tiers: long runs on 2 cores).
# Needs root and debootstrap (`apt-get install -y debootstrap`) and the npm registry.
# FRESH_ROOT=DIR keeps the bookworm tree there between runs (made once); by default it
# goes in a temporary folder, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "fresh-machine-check: needs root (debootstrap, chroot, mount)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh-machine-check: needs debootstrap: apt-get install -y debootstrap" >&2; exit 2; }

keep="${FRESH_ROOT:+yes}"
root="${FRESH_ROOT:-$(mktemp -d /tmp/fresh-machine.XXXXXX)}"
cleanup() {
  # Unmount before anything is removed: a bind-mounted /dev must never be deleted through.
  umount "$root/bookworm/dev" 2>/dev/null || true
  umount "$root/bookworm/proc" 2>/dev/null || true
  if [ -z "$keep" ] && ! grep -q " $root/" /proc/mounts; then rm -rf "$root"; fi
}
trap cleanup EXIT

tree="$root/bookworm"
if [ ! -x "$tree/bin/bash" ]; then
  echo "debootstrap --variant=minbase bookworm into $tree"
  debootstrap --variant=minbase bookworm "$tree" http://deb.debian.org/debian >"$root/debootstrap.log" 2>&1 \
    || { tail -20 "$root/debootstrap.log" >&2; exit 1; }
fi

# The machine's Node.js and npm (a fresh machine of this kind comes with them), its npm
# settings, name resolution and extra CA certificates (a proxy's, where there is one).
cp "$(command -v node)" "$tree/usr/bin/node"
mkdir -p "$tree/usr/lib/node_modules"
rm -rf "$tree/usr/lib/node_modules/npm" && cp -a "$(npm root -g)/npm" "$tree/usr/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$tree/usr/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$tree/usr/bin/npx"
# nodedir points at headers on the host only.
[ -f "$HOME/.npmrc" ] && grep -v '^nodedir' "$HOME/.npmrc" >"$tree/root/.npmrc" || true
cp /etc/resolv.conf /etc/hosts "$tree/etc/"
extra_ca=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  cp "$NODE_EXTRA_CA_CERTS" "$tree/etc/extra-ca.crt"
  extra_ca=(NODE_EXTRA_CA_CERTS=/etc/extra-ca.crt)
fi

rm -rf "$tree/project" && mkdir "$tree/project"
git archive HEAD | tar -xf - -C "$tree/project"
mount -t proc proc "$tree/proc"
mount --bind /dev "$tree/dev"

if [ "$#" -gt 0 ]; then
  tests="npx vitest run $(printf '%q ' "$@")"
else
  tests="npm run test:unit && npx vitest run test/ui/dashboard.browser.test.ts"
fi
chroot "$tree" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 "${extra_ca[@]}" /bin/bash -c "
  set -euo pipefail
  cd /project
  echo \"packages installed: \$(dpkg -l | grep -c '^ii')\"
  npm ci --no-audit --no-fund
  $tests
"
