package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// SelfCPUEnv names a directory where bench serve and bench drain each
// write, as they end, the CPU they used themselves (nanoseconds, in a
// file named after them). The flood rows take both from the CPU of the
// whole run: what is left is the process between them alone, not the
// difference of two runs whose server and client each vary more than the
// relay costs.
const SelfCPUEnv = "MCPSCOPE_BENCH_SELFCPU"

// ReportSelfCPU writes this process's own CPU as name under SelfCPUEnv's
// directory, when it is set and the CPU can be read.
func ReportSelfCPU(name string) {
	dir := os.Getenv(SelfCPUEnv)
	if dir == "" {
		return
	}
	if c, ok := selfCPU(); ok {
		os.WriteFile(filepath.Join(dir, name), []byte(strconv.FormatInt(int64(c), 10)), 0o600)
	}
}

// reportedCPU reads what ReportSelfCPU wrote as name in dir, and removes it
// for the next run.
func reportedCPU(dir, name string) (time.Duration, bool) {
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	os.Remove(p)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return time.Duration(n), err == nil
}
