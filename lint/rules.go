// Package lint checks a server's catalog (tools, resources, templates,
// prompts) the way the hosts people use will read it: a tools/list that
// looks fine in every inspector can still be refused by Claude Code, an
// OpenAI model or Gemini. Each finding names its rule, the item and the
// JSON pointer in it, the host profiles it affects and why, in one line.
//
// Rules are of three sorts: the spec's (schema validity against its
// dialect, names, duplicates, descriptions, outputSchema, annotations),
// portability (what one host refuses or handles unevenly, by profile: the
// tables in profiles.go), and behaviour seen on the wire (a tools/list
// whose order changes, paging that repeats or loops, templates that are not
// RFC 6570, a recorded structuredContent that does not keep to its
// outputSchema). Severity error means some host refuses it; warning means
// hosts handle it unevenly.
package lint

// Severity is how hard a host takes a finding.
type Severity string

const (
	Error   Severity = "error"   // some host refuses it
	Warning Severity = "warning" // handled unevenly
)

func (s Severity) rank() int {
	switch s {
	case Error:
		return 2
	case Warning:
		return 1
	}
	return 0
}

// Rule is one check: its id, its severity when no profile decides it (the
// spec's rules and behaviour), whether profiles decide it, and what it is
// about.
type Rule struct {
	ID       string
	Severity Severity // for spec and behaviour rules; a portability rule's comes from the profiles
	Portable bool     // decided per host profile (profiles.go)
	Reason   string   // one line, as findings print it
	Explain  string   // the --rules paragraph (no links)
	Source   string   // where it comes from
}

// Rule ids.
const (
	SchemaInvalid        = "schema-invalid"
	SchemaDialect        = "schema-dialect"
	RootType             = "root-type"
	EmptySchema          = "empty-schema"
	OutputNotObject      = "output-not-object"
	ToolName             = "tool-name"
	DuplicateName        = "duplicate-name"
	Description          = "description"
	AnnotationsConflict  = "annotations-conflict"
	BoolSchema           = "bool-schema"
	Format               = "format"
	TypeArray            = "type-array"
	UntypedUnion         = "untyped-union"
	Ref                  = "ref"
	Discriminator        = "discriminator"
	AdditionalProperties = "additional-properties"
	ListOrder            = "list-order"
	Pagination           = "pagination"
	URITemplate          = "uri-template"
	StructuredContent    = "structured-content"
)

// Rules are every rule, in the order --rules prints them.
var Rules = []Rule{
	{ID: SchemaInvalid, Severity: Error, Reason: "not a valid JSON Schema of its dialect",
		Explain: "The schema does not validate against its dialect's meta-schema (2020-12 unless $schema names draft-07), " +
			"or the JSON Schema library cannot resolve it (a pattern that is not a regular expression, a $ref to nothing). " +
			"Hosts that compile tool schemas refuse it, some the whole tool list with it.",
		Source: "MCP 2025-11-25 and 2026-07-28, JSON Schema usage; checked with github.com/google/jsonschema-go"},
	{ID: SchemaDialect, Severity: Warning, Reason: "$schema names a dialect other than 2020-12 or draft-07",
		Explain: "MCP requires clients to support JSON Schema 2020-12 and lets them document others; draft-07 is the one " +
			"other dialect in common use. A schema in any other dialect is read as each host guesses (and is not checked here).",
		Source: "MCP 2025-11-25, JSON Schema usage: supported dialects"},
	{ID: RootType, Severity: Error, Reason: `inputSchema must have "type": "object" at its root`,
		Explain: `Tool arguments are a JSON object, and the protocol's schema requires "type": "object" at the root of ` +
			"inputSchema. Model APIs take the schema as function parameters and refuse one without it.",
		Source: "MCP schema 2025-11-25 and 2026-07-28, Tool.inputSchema"},
	{ID: EmptySchema, Severity: Error, Reason: "the schema is empty: an SDK conversion probably lost it",
		Explain: `A schema holding nothing but $schema (or nothing at all) is what an SDK publishes when its schema ` +
			`converter does not understand the validator library it is given (zod 4 objects through a zod 3 converter: ` +
			`server-filesystem 2025.7.1 lists every input schema as {"$schema": …}). The tool then takes no arguments as ` +
			`far as hosts know, and has no "type": "object".`,
		Source: "field report: server-filesystem 2025.7.1 after the zod 4 change"},
	{ID: OutputNotObject, Severity: Error, Reason: `outputSchema must be an object schema ("type": "object")`,
		Explain: `In the initialize era (up to 2025-11-25) the protocol's schema requires "type": "object" at the root of ` +
			"outputSchema, and clients built on it refuse anything else; 2026-07-28 allows any schema, so there it is a " +
			"warning: clients of the older era still meet it.",
		Source: "MCP schema 2025-11-25 Tool.outputSchema; 2026-07-28 changelog"},
	{ID: ToolName, Severity: Warning, Reason: "tool names should be 1 to 128 characters of A-Z a-z 0-9 _ - .",
		Explain: "The spec says tool names SHOULD be between 1 and 128 characters and use only ASCII letters, digits, " +
			"underscore, hyphen and dot (no spaces, commas or other special characters). Hosts prefix and validate names " +
			"for model APIs, which are stricter still. An empty name is an error: the name is required.",
		Source: "MCP 2025-11-25 and 2026-07-28, Tools: Tool Names"},
	{ID: DuplicateName, Severity: Error, Reason: "two items share one name",
		Explain: "Tool names (and prompt names, resource URIs, template URI templates) identify the item: two tools of one " +
			"name cannot both be called, and model APIs refuse a request whose tools repeat a name.",
		Source: "MCP 2025-11-25 and 2026-07-28, Tools: tool names SHOULD be unique within a server"},
	{ID: Description, Severity: Warning, Reason: "the tool has no description",
		Explain: "The description is what the model reads to choose a tool; without one hosts show a bare name and models " +
			"call it by guesswork.",
		Source: "MCP Tool.description"},
	{ID: AnnotationsConflict, Severity: Warning, Reason: "readOnlyHint and destructiveHint are both true",
		Explain: "destructiveHint is meaningful only when readOnlyHint is false: a tool cannot be both read-only and " +
			"destructive. Hosts that ask before destructive calls read one or the other.",
		Source: "MCP schema ToolAnnotations"},
	{ID: BoolSchema, Portable: true, Reason: "a bare true/false property schema",
		Explain: "A property whose schema is the boolean true or false (what Go's interface{} or any becomes) has no type. " +
			"Claude Code refuses the whole tool list when one tool has one; other hosts drop or guess the property.",
		Source: "field report: modelcontextprotocol/inspector#1005"},
	{ID: Format, Portable: true, Reason: "a string format outside the host's list",
		Explain: `Model APIs accept only some values of "format" (OpenAI's structured outputs: date-time, time, date, ` +
			`duration, email, hostname, ipv4, ipv6, uuid; Gemini: date-time and enum) and some models refuse the request ` +
			`for any other: "uri", which z.url() emits, is the common one.`,
		Source: `field report: format "uri" from z.url() hard-rejected by some OpenAI models`},
	{ID: TypeArray, Portable: true, Reason: `a type array or nullable form ("type": [..], "nullable")`,
		Explain: `"type": ["string", "null"] (and OpenAPI's "nullable": true) is read as nullable by some hosts, as its ` +
			`first type by others, and refused by a few; a single type with the property left optional reads the same everywhere.`,
		Source: "field reports: nullable type arrays handled unevenly (Gemini, OpenAI)"},
	{ID: UntypedUnion, Portable: true, Reason: "an anyOf/oneOf branch without a type",
		Explain: "Gemini's function declarations need a type on every anyOf branch and break on one without it; oneOf " +
			"is not in its subset at all. Give each branch its type.",
		Source: "field report: anyOf branches without type break Gemini"},
	{ID: Ref, Portable: true, Reason: "$ref/$defs: references the host does not resolve",
		Explain: "Gemini does not resolve $ref (nor $defs/definitions) in function declarations, and some hosts pass " +
			"the schema on without its definitions. Inline the referenced schema.",
		Source: "field report: $defs/$ref break Gemini"},
	{ID: Discriminator, Portable: true, Reason: "discriminator is OpenAPI, not JSON Schema",
		Explain: `"discriminator" is an OpenAPI keyword: JSON Schema validators ignore it, and strict model APIs refuse ` +
			"keywords they do not know. A oneOf of typed branches with a const property says the same.",
		Source: "mcp-ts-core's portability lint; the official Inspector's --strict (inspector PR #2121)"},
	{ID: AdditionalProperties, Portable: true, Reason: `an object schema without "additionalProperties": false`,
		Explain: `Strict modes (OpenAI's strict function calling, structured outputs) require "additionalProperties": ` +
			"false on every object with properties and refuse the schema otherwise; hosts that do not turn strict mode on accept it.",
		Source: "OpenAI strict mode; the official Inspector's --strict (inspector PR #2121)"},
	{ID: ListOrder, Severity: Warning, Reason: "tools/list answered in another order the second time",
		Explain: "2026-07-28: servers SHOULD return tools in a deterministic order, so clients can cache the list and " +
			"model prompt caches hit. mcpscope lists twice on a live server and compares.",
		Source: "MCP 2026-07-28, Tools: Listing Tools"},
	{ID: Pagination, Severity: Error, Reason: "paging repeats itself or does not end",
		Explain: "A nextCursor seen before (a loop), an item on two pages, or pages past the limit: a client that follows " +
			"nextCursor never ends, or lists an item twice.",
		Source: "MCP 2025-11-25 and 2026-07-28, Pagination"},
	{ID: URITemplate, Severity: Warning, Reason: "not a valid RFC 6570 URI template",
		Explain: "Resource templates are RFC 6570 URI templates; one that does not parse (an unclosed brace, an operator " +
			"or a variable name RFC 6570 does not have) is refused by SDKs that parse it and matched by guesswork elsewhere.",
		Source: "MCP Resources: resource templates (RFC 6570)"},
	{ID: StructuredContent, Severity: Error, Reason: "a recorded structuredContent does not keep to its outputSchema",
		Explain: "Servers MUST return structured results that conform to the tool's outputSchema, and clients (the " +
			"TypeScript SDK's among them) validate them and turn a mismatch into an error. Checked on the tool results a journal recorded.",
		Source: "MCP 2025-11-25 and 2026-07-28, Tools: Output Schema"},
}

// RuleByID finds a rule.
func RuleByID(id string) (Rule, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
