package demo

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var greetingStyles = []string{"casual", "formal", "pirate"}

func (d *Demo) addPrompts() {
	d.Server.AddPrompt(&mcp.Prompt{
		Name:        "greeting",
		Title:       "Greet someone",
		Description: "Asks the model to greet `name` in a given `style`.",
		Arguments: []*mcp.PromptArgument{
			{Name: "name", Title: "Name", Description: "who to greet", Required: true},
			{Name: "style", Title: "Style", Description: "casual, formal or pirate (default casual)"},
		},
	}, greeting)

	d.Server.AddPrompt(&mcp.Prompt{
		Name:        "tour",
		Title:       "Tour of the demo server",
		Description: "Asks the model to explain this server, with demo://readme embedded in the prompt.",
	}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{
			Description: "A tour of the mcpscope demo server",
			Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Here is the readme of an MCP server. Explain in a few lines what I can try with it."}},
				{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: readmeURI, MIMEType: "text/markdown", Text: readme}}},
			},
		}, nil
	})
}

func greeting(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	name := req.Params.Arguments["name"]
	if name == "" {
		return nil, fmt.Errorf("greeting: the name argument is required")
	}
	style := req.Params.Arguments["style"]
	if style == "" {
		style = "casual"
	}
	return &mcp.GetPromptResult{
		Description: "Greet " + name,
		Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("Please greet %s in a %s style, in one sentence.", name, style)}},
		},
	}, nil
}

// complete offers values for the greeting prompt's arguments and for the id
// in demo://items/{id}.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var candidates []string
	ref, arg := req.Params.Ref, req.Params.Argument
	switch {
	case ref.Type == "ref/prompt" && ref.Name == "greeting" && arg.Name == "style":
		candidates = greetingStyles
	case ref.Type == "ref/prompt" && ref.Name == "greeting" && arg.Name == "name":
		candidates = []string{"Ada", "Alan", "Grace", "Linus", "Margaret"}
	case ref.Type == "ref/resource" && ref.URI == itemsURITpl && arg.Name == "id":
		for i := 1; i <= 50; i++ {
			candidates = append(candidates, strconv.Itoa(i))
		}
	}
	values := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), strings.ToLower(arg.Value)) {
			values = append(values, c)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}
