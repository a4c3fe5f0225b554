package mock

import (
	"encoding/json"
	"fmt"

	"mcpscope/internal/near"
	"mcpscope/journal"
)

// Match levels, as the server reports them.
const (
	Exact  = "exact"   // method and params (ids and _meta aside)
	ByName = "by-name" // method and name; the params differ
)

// candidates are the recordings a request may be answered with: exact
// ones first, else those of the same method and name. how says which.
func (r *Recording) candidates(method string, params json.RawMessage) (exs []*Exchange, how string, key string) {
	canon, _ := canonicalParams(params)
	k := exactKey(method, canon)
	if exs := r.exact[k]; len(exs) > 0 {
		return exs, Exact, k
	}
	name := journal.ParamName(params)
	if exs := r.byName[method+"\x00"+name]; len(exs) > 0 {
		return exs, ByName, ""
	}
	return nil, "", ""
}

// mostAlike picks, among recordings of one method and name, the one whose
// top-level params are most alike: equal members count, the same set of
// members counts once more (an MRTR retry, with requestState, finds the
// recorded retry rather than the first round). The first wins a tie.
func mostAlike(exs []*Exchange, params json.RawMessage) *Exchange {
	_, keys := canonicalParams(params)
	best, bestScore := exs[0], -1
	for _, ex := range exs {
		score := 0
		same := len(ex.keys) == len(keys)
		for k, v := range keys {
			w, ok := ex.keys[k]
			if !ok {
				same = false
				continue
			}
			if w == v {
				score += 2
			}
		}
		if same {
			score++
		}
		if score > bestScore {
			best, bestScore = ex, score
		}
	}
	return best
}

// closest is the recording nearest to a request that matched none: of the
// same method, the nearest name; otherwise the nearest method.
func (r *Recording) closest(method, name string) *Exchange {
	var best *Exchange
	bestD := 1 << 30
	all := r.Calls
	for _, ex := range []*Exchange{r.Init, r.Discover} {
		if ex != nil {
			all = append(all, ex)
		}
	}
	for _, ex := range all {
		if ex.Method == method {
			if d := near.Distance(ex.Name, name); d < bestD {
				best, bestD = ex, d
			}
		}
	}
	if best != nil {
		return best
	}
	for _, ex := range all {
		if d := near.Distance(ex.Method, method); d < bestD {
			best, bestD = ex, d
		}
	}
	return best
}

// noMatch is the JSON-RPC error for a request no recording answers.
func (r *Recording) noMatch(method string, params json.RawMessage) (code int64, msg string, data any) {
	name := journal.ParamName(params)
	what := method
	if name != "" {
		what += " " + name
	}
	code, msg = -32601, "Method not found"
	for _, ex := range r.Calls {
		if ex.Method == method {
			code, msg = -32602, "Invalid params"
			break
		}
	}
	msg = fmt.Sprintf("%s: the recording %s has no %s", msg, r.Path, what)
	c := r.closest(method, name)
	if c == nil {
		return code, msg, nil
	}
	cw := c.Method
	if c.Name != "" {
		cw += " " + c.Name
	}
	msg += fmt.Sprintf("; the closest recording is %s (journal seq %d) with params %s", cw, c.Seq, cut(string(c.Params), 200))
	return code, msg, map[string]any{"closest": map[string]any{"method": c.Method, "name": c.Name, "seq": c.Seq, "params": c.Params}}
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
