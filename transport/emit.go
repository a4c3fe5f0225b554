package transport

import (
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

func (h *sinkHolder) event(name string, m Meta) {
	m.Event = name
	h.emit(Frame{Dir: Local, Kind: Event, Meta: m})
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
