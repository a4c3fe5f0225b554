package connect

import "time"

// SetStdioProbeTimeout sets how long a stdio server gets to answer
// server/discover once it has read it, for a test; the returned func puts
// it back.
func SetStdioProbeTimeout(d time.Duration) (restore func()) {
	old := stdioProbeTimeout
	stdioProbeTimeout = d
	return func() { stdioProbeTimeout = old }
}
