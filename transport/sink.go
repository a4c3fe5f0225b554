package transport

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// sinkHolder is the sink every transport hands frames to, set by Start.
// Embedded, it gives a transport its emit and event methods.
type sinkHolder struct {
	sink atomic.Pointer[Sink]
}

func (h *sinkHolder) emit(f Frame) {
	if f.Time.IsZero() {
		f.Time = time.Now()
	}
	if s := h.sink.Load(); s != nil {
		(*s)(f)
	}
}

func (h *sinkHolder) event(name string, m Meta) { h.eventAt(name, m, time.Time{}) }

// eventAt is event for what happened at a time already known (zero: now).
func (h *sinkHolder) eventAt(name string, m Meta, at time.Time) {
	m.Event = name
	h.emit(Frame{Time: at, Dir: Local, Kind: Event, Meta: m})
}

// applyHeaders sets the bearer, then each header map in order, so a later
// (more specific) header wins; a Host entry sets the request's host, since
// net/http ignores a Host header field.
func applyHeaders(req *http.Request, bearer string, maps ...map[string]string) {
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for _, hs := range maps {
		for k, v := range hs {
			if strings.EqualFold(k, "Host") {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
	}
}

// reportBadStatus records a non-2xx answer: an http-error event carrying the
// body (an excerpt when it is JSON, all of it otherwise), and a JSON body as
// an In message too, since a JSON-RPC error body is protocol data.
func (h *sinkHolder) reportBadStatus(base Meta, body []byte, excerpt string) {
	m := base
	isJSON := len(bytes.TrimSpace(body)) > 0 && json.Valid(body)
	if isJSON {
		m.Detail = excerpt
	} else {
		m.Detail = string(body)
	}
	h.event(EvHTTPError, m)
	if isJSON {
		h.emit(Frame{Dir: In, Kind: Message, Data: body, Meta: base})
	}
}

// Waiting records that the connection waits for a person (a browser login;
// detail says where to go), or with on false that the wait is over. The
// session holds its call timers meanwhile.
func (h *sinkHolder) Waiting(on bool, detail string) {
	name := EvAuthDone
	if on {
		name = EvAuthWait
	}
	h.event(name, Meta{Detail: detail})
}

// Note records a line about what happens around the wire (the OAuth flow's
// steps, for one), so the journal has it beside the frames.
func (h *sinkHolder) Note(detail string) {
	h.event(EvNote, Meta{Detail: detail})
}
