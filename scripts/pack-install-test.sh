#!/usr/bin/env bash
# Installs Baton the way a user would, from the tarballs `npm pack` makes, into empty projects outside the repository:
#   1. builds every package (`npm run build`) and packs each one; checks every tarball ships dist/, no TypeScript
#      sources, its README and LICENSE;
#   2. a project that installs @baton/client alone: its dependency tree must hold no lmdb, piscina or openai;
#   3. a project that installs the CLI (and @baton/client): `baton --help`, then `baton up --nats <url>` from the
#      installed package against a nats-server this script starts on a free loopback port, and a small script of the
#      project that uses @baton/client against that daemon (open, append, status, runtime status) and must exit 0;
#      then `baton demo` (writers in worker threads, from dist/), `baton replay --verify` of its session, and
#      `baton inspect` on its data directory (page, static files, the session in the JSON API).
# The @baton/* packages come from the tarballs (npm `overrides`), everything else from the registry or npm's cache.
# Prints one line per step and `pack-install: ok` at the end; exits non-zero on the first failure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/baton-pack-install-XXXXXX")
TARBALLS="$WORK/tarballs"
NATS_PID=""
BATON_PID=""
START=$(date +%s)

stop_pid() {
  local pid=$1
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
  stop_pid "$BATON_PID"
  stop_pid "$NATS_PID"
  if [ "${KEEP_PACK_INSTALL_DIR:-}" = "1" ]; then echo "pack-install: kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

fail() {
  echo "pack-install: FAILED: $*" >&2
  exit 1
}

npm_quiet() {
  npm --no-audit --no-fund --loglevel=error "$@"
}

# 1. Build and pack.
cd "$ROOT"
npm run build --silent
mkdir -p "$TARBALLS"
mapfile -t WORKSPACES < <(node -p "require('./package.json').workspaces.join('\n')")
declare -A TARBALL_OF
for ws in "${WORKSPACES[@]}"; do
  name=$(node -p "require('./$ws/package.json').name")
  file=$(npm pack --silent --workspace "$ws" --pack-destination "$TARBALLS" | tail -n 1)
  [ -f "$TARBALLS/$file" ] || fail "npm pack of $ws made no tarball"
  listing=$(tar -tzf "$TARBALLS/$file")
  grep -qx 'package/dist/index.js' <<<"$listing" || fail "$file: no dist/index.js"
  grep -qx 'package/dist/index.d.ts' <<<"$listing" || fail "$file: no dist/index.d.ts"
  grep -qx 'package/LICENSE' <<<"$listing" || fail "$file: no LICENSE"
  grep -qx 'package/README.md' <<<"$listing" || fail "$file: no README.md"
  if grep -E '^package/src/|\.tsbuildinfo$|[^d]\.ts$' <<<"$listing" | grep -v '\.d\.ts$' | grep -q .; then
    fail "$file ships TypeScript sources or build state: $(grep -E '^package/src/|\.tsbuildinfo$|[^d]\.ts$' <<<"$listing" | grep -v '\.d\.ts$' | head -3 | tr '\n' ' ')"
  fi
  TARBALL_OF[$name]="$TARBALLS/$file"
  printf 'pack-install: packed %-20s %s (%s bytes, %s files)\n' "$name" "$file" "$(stat -c %s "$TARBALLS/$file")" "$(wc -l <<<"$listing")"
done

# A package.json for an empty project: `deps` (names of @baton packages) as dependencies, every @baton package
# overridden by its tarball, so a dependency of a dependency comes from the tarballs too.
write_project() {
  local dir=$1
  shift
  mkdir -p "$dir"
  local entries=()
  for name in "${!TARBALL_OF[@]}"; do entries+=("$name=${TARBALL_OF[$name]}"); done
  node - "$dir" "$*" "${entries[@]}" <<'EOF'
const [dir, deps, ...entries] = process.argv.slice(2);
const tarballs = Object.fromEntries(entries.map((e) => [e.slice(0, e.indexOf('=')), `file:${e.slice(e.indexOf('=') + 1)}`]));
const dependencies = Object.fromEntries(deps.split(' ').map((name) => [name, tarballs[name]]));
const pkg = { name: 'baton-install-check', version: '1.0.0', private: true, type: 'module', dependencies, overrides: tarballs };
require('node:fs').writeFileSync(`${dir}/package.json`, JSON.stringify(pkg, null, 2) + '\n');
EOF
}

# 2. @baton/client alone.
CLIENT_APP="$WORK/client-app"
write_project "$CLIENT_APP" @baton/client
(cd "$CLIENT_APP" && npm_quiet install --prefer-offline >/dev/null) || fail "npm install of @baton/client"
tree=$(cd "$CLIENT_APP" && npm ls --all --parseable)
heavy=$(grep -E '/node_modules/(lmdb|piscina|openai|@anthropic-ai/sdk|xstate|tsx|typescript)(/|$)' <<<"$tree" || true)
[ -z "$heavy" ] || fail "@baton/client pulled in: $heavy"
(cd "$CLIENT_APP" && node --input-type=module -e "const c = await import('@baton/client'); if (typeof c.BatonClient !== 'function') process.exit(1);") ||
  fail "import of the installed @baton/client"
echo "pack-install: @baton/client alone installs $(($(wc -l <<<"$tree") - 1)) packages, none of lmdb, piscina, openai"

# 3. The CLI, and a user's script against the daemon it starts.
APP="$WORK/app"
write_project "$APP" @baton/cli @baton/client
(cd "$APP" && npm_quiet install --prefer-offline >/dev/null) || fail "npm install of @baton/cli"
if (cd "$APP" && npm ls --all --parseable | grep -qE '/node_modules/(tsx|typescript)$'); then fail "the CLI's tree holds tsx or typescript"; fi
(cd "$APP" && npx --no-install baton --help | grep -q 'replay') || fail "baton --help from the installed CLI"
echo "pack-install: @baton/cli installed; baton --help runs"

NATS_BIN=$(command -v nats-server || echo /usr/sbin/nats-server)
[ -x "$NATS_BIN" ] || fail "nats-server is not installed (apt-get install -y nats-server)"
NATS_PORT=$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); });")
mkdir -p "$WORK/nats"
"$NATS_BIN" -a 127.0.0.1 -p "$NATS_PORT" -sd "$WORK/nats" >"$WORK/nats.log" 2>&1 &
NATS_PID=$!
for _ in $(seq 1 100); do grep -q 'Server is ready' "$WORK/nats.log" && break; sleep 0.1; done
grep -q 'Server is ready' "$WORK/nats.log" || fail "nats-server did not start: $(tail -3 "$WORK/nats.log")"
NATS_URL="nats://127.0.0.1:$NATS_PORT"

# No writer runs in this check (a few messages stay far below the first threshold); the model endpoint is only named.
# The installed bin itself (what npx runs), so the pid stopped below is the daemon's own: `exec env …` (bash forks for
# an `exec` with variable assignments in front), and the bin's shell line execs node in the same process.
(cd "$APP" && exec env OPENAI_BASE_URL=http://127.0.0.1:9/v1 OPENAI_API_KEY=unused ./node_modules/.bin/baton up \
  --nats "$NATS_URL" --data-dir "$WORK/data" --port 0 --pool-size 1 --log-level warn >"$WORK/baton.out" 2>"$WORK/baton.err") &
BATON_PID=$!
for _ in $(seq 1 300); do grep -q 'ready' "$WORK/baton.out" && break; kill -0 "$BATON_PID" 2>/dev/null || break; sleep 0.1; done
grep -q 'ready' "$WORK/baton.out" || fail "baton up did not get ready: $(cat "$WORK/baton.out" "$WORK/baton.err" | tail -5)"
echo "pack-install: $(head -1 "$WORK/baton.out")"
# The launcher's shell line started node with the allocator settings (Linux: the daemon's environment is readable).
if [ -z "${GLIBC_TUNABLES+set}" ] && [ -r "/proc/$BATON_PID/environ" ]; then
  daemon_tunables=$(tr '\0' '\n' <"/proc/$BATON_PID/environ" | grep '^GLIBC_TUNABLES=' || true)
  # glibc parses the variable in place at start-up; some versions leave only its first setting readable here
  [[ "$daemon_tunables" == GLIBC_TUNABLES=glibc.malloc.arena_max=2* ]] ||
    fail "the installed baton did not start node with the allocator settings (${daemon_tunables:-no GLIBC_TUNABLES})"
  echo "pack-install: the daemon runs with the launcher's $daemon_tunables"
fi

cat >"$APP/use-client.mjs" <<'EOF'
// A user's script: attaches to the daemon over NATS with the installed @baton/client.
import { BatonClient, NatsTransport } from '@baton/client';

const transport = await NatsTransport.connect({ servers: process.argv[2] });
const client = new BatonClient(transport);
const check = (ok, what) => {
  if (!ok) throw new Error(`unexpected: ${what}`);
};
try {
  const opened = await client.open({
    project_id: 'pack-install',
    model: { id: 'gpt-4o', context_window: 128_000, max_output_tokens: 16_000 },
    system: 'You are a coding agent.',
    tools: [],
  });
  check(opened.ok && !opened.resumed && opened.thresholds.length > 0, `open reply ${JSON.stringify(opened)}`);
  const messages = [
    { id: 'm1', role: 'user', content: 'Fix the login bug' },
    { id: 'm2', role: 'assistant', content: 'Looking at auth.ts.' },
  ];
  const appended = await client.append(opened.session_id, messages);
  check(appended.accepted === 2 && appended.duplicates === 0, `append reply ${JSON.stringify(appended)}`);
  const again = await client.append(opened.session_id, messages.slice(0, 1));
  check(again.accepted === 0 && again.duplicates === 1, `repeated append ${JSON.stringify(again)}`);
  const status = await client.status(opened.session_id);
  check(status.ok && status.state.usable_window === opened.usable_window && status.state.writer === 'idle', `status ${JSON.stringify(status)}`);
  const runtime = await client.runtimeStatus();
  check(runtime.sessions >= 1, `runtime status ${JSON.stringify(runtime)}`);
  console.log(`pack-install: client script: session ${opened.session_id} opened, 2 messages appended (1 repeat deduplicated), status: usable window ${status.state.usable_window}, writer ${status.state.writer}; daemon: ${runtime.sessions} session(s), ${runtime.pool.threads} worker thread(s)`);
} finally {
  await transport.close();
}
EOF
(cd "$APP" && node use-client.mjs "$NATS_URL") || fail "the client script against the installed daemon"
(cd "$APP" && npx --no-install baton status --nats "$NATS_URL" >"$WORK/status.out") || fail "baton status: $(cat "$WORK/status.out")"

stop_pid "$BATON_PID"
wait "$BATON_PID" 2>/dev/null || true
BATON_PID=""
[ ! -s "$WORK/baton.err" ] || fail "baton up wrote to stderr: $(tail -5 "$WORK/baton.err")"

# The demo: writer runs in the installed runtime's worker threads (plain JavaScript from dist/) against the loopback
# model of the installed @baton/testing, a rebuild, then `baton replay --verify` of the recorded session.
(cd "$APP" && ./node_modules/.bin/baton demo --data-dir "$WORK/demo" --pool-size 1 >"$WORK/demo.out" 2>&1) || fail "baton demo: $(tail -5 "$WORK/demo.out")"
DEMO_SESSION=$(grep -oE 'baton replay [A-Za-z0-9_-]+' "$WORK/demo.out" | head -1 | cut -d' ' -f3)
[ -n "$DEMO_SESSION" ] || fail "baton demo named no session to replay: $(tail -5 "$WORK/demo.out")"
(cd "$APP" && ./node_modules/.bin/baton replay "$DEMO_SESSION" --data-dir "$WORK/demo" --verify >"$WORK/verify.out") || fail "baton replay --verify: $(cat "$WORK/verify.out")"
echo "pack-install: baton demo: $(grep -m1 '^Done in' "$WORK/demo.out") replay --verify: $(cat "$WORK/verify.out")"

# The inspector from the install: its page, its own static files and uPlot's, and the demo's session in its API.
(cd "$APP" && exec ./node_modules/.bin/baton inspect --data-dir "$WORK/demo" --port 0 >"$WORK/inspect.out" 2>"$WORK/inspect.err") &
BATON_PID=$!
for _ in $(seq 1 300); do grep -q 'http://' "$WORK/inspect.out" && break; kill -0 "$BATON_PID" 2>/dev/null || break; sleep 0.1; done
INSPECT_URL=$(grep -oE 'http://[^ ]+/' "$WORK/inspect.out" | head -1)
[ -n "$INSPECT_URL" ] || fail "baton inspect did not print its URL: $(cat "$WORK/inspect.out" "$WORK/inspect.err" | tail -5)"
node --input-type=module - "$INSPECT_URL" "$DEMO_SESSION" <<'EOF_NODE' || fail "the installed inspector"
const [base, session] = process.argv.slice(2);
for (const path of ['', 'static/app.js', 'vendor/uPlot.esm.js']) {
  const res = await fetch(base + path);
  if (!res.ok || (await res.text()).length === 0) throw new Error(`GET /${path}: ${res.status}`);
}
const sessions = await (await fetch(`${base}api/sessions`)).text();
if (!sessions.includes(session)) throw new Error(`/api/sessions does not list ${session}: ${sessions.slice(0, 300)}`);
EOF_NODE
stop_pid "$BATON_PID"
wait "$BATON_PID" 2>/dev/null || true
BATON_PID=""
echo "pack-install: baton inspect serves its page, uPlot and the demo's session ($INSPECT_URL)"
echo "pack-install: ok ($(($(date +%s) - START)) s)"
