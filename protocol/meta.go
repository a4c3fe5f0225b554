package protocol

import (
	"encoding/json"
	"errors"
)

// WithMeta returns params as JSON with _meta.progressToken (when token != "")
// and the extra _meta keys set, when params is an object or nil. A token the
// caller already put there wins.
func WithMeta(params any, token string, extra map[string]any) (json.RawMessage, error) {
	raw, err := MarshalParams(params)
	if err != nil {
		return nil, err
	}
	if token == "" && len(extra) == 0 {
		return raw, nil
	}
	obj := map[string]json.RawMessage{}
	if len(raw) > 0 {
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			return raw, nil
		}
	}
	meta := map[string]json.RawMessage{}
	if m, ok := obj["_meta"]; ok {
		if json.Unmarshal(m, &meta) != nil || meta == nil {
			return raw, nil
		}
	}
	for k, v := range extra {
		meta[k], _ = json.Marshal(v)
	}
	if _, ok := meta["progressToken"]; !ok && token != "" {
		meta["progressToken"], _ = json.Marshal(token)
	}
	obj["_meta"], _ = json.Marshal(meta)
	return json.Marshal(obj)
}

func TokenSet(raw json.RawMessage, token string) bool {
	var p struct {
		Meta struct {
			Token string `json:"progressToken"`
		} `json:"_meta"`
	}
	return json.Unmarshal(raw, &p) == nil && p.Meta.Token == token
}

// StripMeta removes what mcpscope adds to _meta (the progress token and
// the stateless request metadata), so a replay, a retry or an edit starts
// from what the user would write; other _meta keys stay.
func StripMeta(raw json.RawMessage) json.RawMessage {
	return DeleteMeta(raw, "progressToken", MetaProtocolVersion, MetaClientInfo, MetaClientCapabilities, MetaLogLevel)
}

// DeleteMeta removes keys from params._meta (and _meta itself when empty).
func DeleteMeta(raw json.RawMessage, keys ...string) json.RawMessage {
	obj := map[string]json.RawMessage{}
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return raw
	}
	meta := map[string]json.RawMessage{}
	if m, ok := obj["_meta"]; !ok || json.Unmarshal(m, &meta) != nil || meta == nil {
		return raw
	}
	for _, k := range keys {
		delete(meta, k)
	}
	if len(meta) == 0 {
		delete(obj, "_meta")
	} else {
		obj["_meta"], _ = json.Marshal(meta)
	}
	out, _ := json.Marshal(obj)
	return out
}

func MarshalParams(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(p) > 0 && !json.Valid(p) {
			return nil, errors.New("params are not valid JSON")
		}
		return p, nil
	case []byte:
		if !json.Valid(p) {
			return nil, errors.New("params are not valid JSON")
		}
		return p, nil
	}
	return json.Marshal(params)
}
