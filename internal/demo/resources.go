package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	readmeURI   = "demo://readme"
	configURI   = "demo://config.json"
	pixelURI    = "demo://gradient.png"
	clockURI    = "demo://clock"
	itemsURITpl = "demo://items/{id}"
)

const readme = `# mcpscope demo server

This server exists to show what an MCP inspector sees. Things to try:

- **slow** {seconds, steps, task}: progress notifications ("step 3/10"); cancel it mid-way. On 2026-07-28 over HTTP a long one (30 s or more, or task "always") runs as a task (the tasks extension): detach it, rejoin it from anywhere.
- **echo** {message}: the simplest round trip.
- **log** {level, message, count}: log notifications; set a level first (logging/setLevel).
- **ask**: an elicitation form (name, age, colour); answer, decline or cancel it.
- **sample** {prompt}: a sampling request to the client's model.
- **burst** {count, kind}: a flood of notifications.
- **big** {megabytes}: a large result.
- **fail** {message}: a tool error (isError: true).
- **toggle-extra**: adds or removes a tool, a resource and a prompt (list_changed notifications).

Resources: this readme, demo://config.json, demo://gradient.png (a binary blob),
demo://items/{id} (a template: try demo://items/42), and demo://clock, which changes every
few seconds: subscribe to it to get notifications/resources/updated.

Prompts: greeting {name, style} and tour.
`

func staticText(s string) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: s}}}, nil
	}
}

func (d *Demo) addResources() {
	d.Server.AddResource(&mcp.Resource{
		URI: readmeURI, Name: "readme", Title: "Read me first", MIMEType: "text/markdown",
		Description: "What this demo server can do and what to try.",
		Annotations: &mcp.Annotations{Audience: []mcp.Role{"user", "assistant"}, Priority: 1},
		Size:        int64(len(readme)),
	}, staticText(readme))

	cfg, _ := json.MarshalIndent(map[string]any{
		"server":        d.opts.Name,
		"version":       d.opts.Version,
		"clockInterval": d.opts.ClockInterval.String(),
		"limits": map[string]any{
			"maxSeconds": maxSeconds, "maxSteps": maxSteps, "maxBurst": maxBurst, "maxMegabytes": maxMegabytes,
		},
		"features": []string{"progress", "cancellation", "logging", "elicitation", "sampling", "subscriptions", "listChanged", "completions"},
	}, "", "  ")
	d.Server.AddResource(&mcp.Resource{
		URI: configURI, Name: "config.json", Title: "Demo configuration", MIMEType: "application/json",
		Description: "A small JSON document: this server's settings and limits.",
		Size:        int64(len(cfg)),
	}, staticText(string(cfg)))

	d.Server.AddResource(&mcp.Resource{
		URI: pixelURI, Name: "gradient.png", Title: "A small image", MIMEType: "image/png",
		Description: "A 16x16 PNG, to show a binary (blob) resource.",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: gradientPNG()}}}, nil
	})

	d.Server.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: itemsURITpl, Name: "item", Title: "Item by id", MIMEType: "application/json",
		Description: "One item of a made-up catalogue, as JSON. Any id works; try demo://items/42.",
	}, readItem)

	d.Server.AddResource(&mcp.Resource{
		URI: clockURI, Name: "clock", Title: "Server clock", MIMEType: "text/plain",
		Description: "The server's current time. Subscribe to it: while subscribed, the server sends notifications/resources/updated every " + d.opts.ClockInterval.String() + ".",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: time.Now().Format(time.RFC3339Nano)}}}, nil
	})
}

func readItem(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id := strings.TrimPrefix(req.Params.URI, "demo://items/")
	if id == "" || strings.Contains(id, "/") {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	// Derive the fields from the id so every read of an item agrees.
	h := fnv.New32a()
	h.Write([]byte(id))
	n := h.Sum32()
	colours := []string{"red", "green", "blue", "amber", "violet"}
	b, _ := json.MarshalIndent(map[string]any{
		"id":      id,
		"name":    "Item " + id,
		"price":   float64(n%10000) / 100,
		"inStock": n%3 != 0,
		"colour":  colours[n%uint32(len(colours))],
	}, "", "  ")
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
}

var gradientPNG = sync.OnceValue(func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for y := range 16 {
		for x := range 16 {
			img.Set(x, y, color.RGBA{R: uint8(x * 16), G: uint8(y * 16), B: 160, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
})

// Any resource may be subscribed to (the others simply never change); only
// demo://clock starts the ticker.
func (d *Demo) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if req.Params.URI == clockURI {
		d.clock.add(req.Session)
	}
	return nil
}

func (d *Demo) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	if req.Params.URI == clockURI {
		d.clock.remove(req.Session)
	}
	return nil
}

// clock sends notifications/resources/updated for demo://clock every
// interval, but only while at least one live session is subscribed: the
// ticker goroutine starts with the first subscriber and ends with the last
// (unsubscribed or disconnected) or when the demo is closed.
type clock struct {
	srv      *mcp.Server
	interval time.Duration
	done     <-chan struct{} // the demo was closed

	mu      sync.Mutex
	subs    map[*mcp.ServerSession]bool
	watched map[*mcp.ServerSession]bool // sessions with a goroutine waiting for their end
	stop    chan struct{}               // non-nil while the ticker runs
	closed  bool
	wg      sync.WaitGroup

	onStart, onIdle func() // test hooks: the ticker goroutine started, exited
}

func newClock(srv *mcp.Server, interval time.Duration, done <-chan struct{}) *clock {
	return &clock{
		srv: srv, interval: interval, done: done,
		subs: map[*mcp.ServerSession]bool{}, watched: map[*mcp.ServerSession]bool{},
	}
}

func (c *clock) add(ss *mcp.ServerSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.subs[ss] = true
	// The SDK forgets a closed session's subscriptions without calling
	// UnsubscribeHandler, so watch for the session's end ourselves.
	if !c.watched[ss] {
		c.watched[ss] = true
		go c.watch(ss)
	}
	if c.stop == nil {
		c.stop = make(chan struct{})
		c.wg.Add(1)
		go c.run(c.stop)
	}
}

func (c *clock) watch(ss *mcp.ServerSession) {
	ss.Wait()
	c.mu.Lock()
	delete(c.watched, ss)
	c.mu.Unlock()
	c.remove(ss)
}

func (c *clock) remove(ss *mcp.ServerSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.subs, ss)
	if len(c.subs) == 0 && c.stop != nil {
		close(c.stop)
		c.stop = nil
	}
}

// running reports whether the ticker is (still meant to be) running.
func (c *clock) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stop != nil
}

func (c *clock) run(stop <-chan struct{}) {
	defer c.wg.Done()
	if c.onStart != nil {
		c.onStart()
	}
	defer func() {
		if c.onIdle != nil {
			c.onIdle()
		}
	}()
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-c.done:
			return
		case <-t.C:
			// The SDK sends it to every session subscribed to the URI.
			c.srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: clockURI})
		}
	}
}

// close stops the ticker and waits for it; later subscriptions are ignored.
func (c *clock) close() {
	c.mu.Lock()
	c.closed = true
	if c.stop != nil {
		close(c.stop)
		c.stop = nil
	}
	c.mu.Unlock()
	c.wg.Wait()
}
