// Package protocol is what MCP's messages mean, with no session behind
// them: versions and eras, reserved _meta keys and error codes, the HTTP
// headers of the 2026-07-28 era, the tasks extension's words, and paging.
package protocol

import (
	"bytes"
	"encoding/json"
)

// The stateless protocol (2026-07-28): no initialize, no session; every
// request carries its own _meta, and HTTP requests mirror routing fields in
// headers (SEP-2243).
const (
	ModernVersion = "2026-07-28"
	EraLegacy     = "legacy"
	EraModern     = "modern"
)

// ModernVersions are the stateless versions mcpscope speaks.
var ModernVersions = []string{ModernVersion}

// Reserved _meta keys of the stateless protocol.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Errors of the stateless protocol.
const (
	CodeHeaderMismatch             = -32020
	CodeMissingRequiredCapability  = -32021
	CodeUnsupportedProtocolVersion = -32022
)

// resultIsError reads a result's isError flag, however it is spaced.
func IsToolError(result json.RawMessage) bool {
	if !bytes.Contains(result, []byte(`"isError"`)) {
		return false // the common case, without a decode
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(result, &r) == nil && r.IsError
}

// KnownResultType reports whether rt is a resultType this client
// understands: "complete" (or none), "input_required" (MRTR) and "task"
// (the tasks extension, declared on every request).
func KnownResultType(rt string) bool {
	switch rt {
	case "", "complete", "input_required", "task":
		return true
	}
	return false
}

// ReadOnly reports whether a request only reads, so sending it again in a
// new session changes nothing on the server.
func ReadOnly(method string) bool {
	switch method {
	case "ping", "tools/list", "prompts/list", "prompts/get", "resources/list", "resources/templates/list", "resources/read",
		"completion/complete":
		return true
	}
	return false
}

// Implementation names a client or server (clientInfo / serverInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// InitResult is the server's answer to initialize.
type InitResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      Implementation  `json:"serverInfo"`
	Instructions    string          `json:"instructions,omitempty"`
}

// DiscoverResult is the answer to server/discover.
type DiscoverResult struct {
	SupportedVersions []string                   `json:"supportedVersions"`
	Capabilities      json.RawMessage            `json:"capabilities"`
	Instructions      string                     `json:"instructions,omitempty"`
	Meta              map[string]json.RawMessage `json:"_meta,omitempty"`
}
