package scan

import "mcpscope/transport"

// Stream ties frames to calls as a session hands them over one at a time,
// the way Reader does for a journal: the live OpenTelemetry exporter reads
// a session with it while the session runs.
type Stream struct{ c *correlator }

// NewStream starts a stream of frames numbered from the journal's start.
func NewStream() *Stream { return &Stream{c: newCorrelator(nil, nil)} }

// Step reads the next frame. The Frame it returns is valid until the next
// Step.
func (s *Stream) Step(seq uint64, f transport.Frame) *Frame { return s.c.step(seq, f) }
