//go:build !unix

package e2e

import "os"

// Windows cannot pause a process: Process.Signal fails for anything but
// os.Kill there. The test that pauses a holder skips first (peers.POSIX);
// the cleanup's resume fails harmlessly.
var sigStop, sigCont os.Signal = os.Interrupt, os.Interrupt

// peakRSS is unknown (0) here: runMeasured skips on Windows.
func peakRSS(*os.ProcessState) int64 { return 0 }
