package ui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpscope/connect"
	"mcpscope/session"
	"mcpscope/testkit/peers"
)

// server-everything asks roots/list as soon as it is initialized. By
// default it is answered at once, with the roots given (the working
// directory, from the command line), and the UI is only told: no prompt.
func TestEverythingRootsAnsweredWithoutPrompt(t *testing.T) {
	cmd, args := peers.EverythingStdio(t)
	root := session.Root{URI: "file:///work/my%20project", Name: "my project"}
	r := NewResponder([]session.Root{root}, false)
	s, err := connect.Connect(context.Background(), connect.Spec{Command: append([]string{cmd}, args...), NoJournal: true, NoState: true, Responder: r})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var caps struct {
		Roots *struct{} `json:"roots"`
	}
	if json.Unmarshal(r.Capabilities(), &caps) != nil || caps.Roots == nil {
		t.Fatalf("the client must declare roots: %s", r.Capabilities())
	}
	select {
	case p := <-r.ch:
		if p.req.Method != "roots/list" || p.told == "" {
			t.Fatalf("want roots/list answered without the user, got %s (told %q): a prompt", p.req.Method, p.told)
		}
		if !strings.Contains(p.told, root.URI+" (my project)") {
			t.Fatalf("note %q does not say what was answered", p.told)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server-everything never asked roots/list")
	}
	// What went back, as the server got it.
	res, rerr := r.Respond(context.Background(), session.ServerRequest{Method: "roots/list"})
	if rerr != nil || string(res) != `{"roots":[{"uri":"file:///work/my%20project","name":"my project"}]}` {
		t.Fatalf("answer %s %v", res, rerr)
	}
}

// With --root ask the request waits for the user, as before.
func TestRootsAskPrompts(t *testing.T) {
	r := NewResponder(nil, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _, _ = r.Respond(ctx, session.ServerRequest{Method: "roots/list"}) }()
	p := <-r.ch
	if p.told != "" {
		t.Fatalf("--root ask answered without asking: %q", p.told)
	}
}
