package export

import (
	"bufio"
	"encoding/json"
	"io"

	"mcpscope/artifact/scan"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
)

// JSONL writes the journal's header and the frames the filter matches, as
// journal records: the output is itself a journal (mcpscope journal, serve
// and replay read it), byte for byte the input when nothing is filtered
// out. Secrets an older build journaled in the target, URLs and headers are
// redacted already, as every journal read redacts them.
func JSONL(w io.Writer, path string, o Options) error {
	h, err := scan.Header(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	head, _ := json.Marshal(h)
	bw.Write(termsafe.JSON(head))
	bw.WriteByte('\n')
	m := newMatcher(o.Filter)
	var buf []byte
	_, err = scan.File(path, scan.Options{Final: m.final(), Bare: o.Filter == nil}, func(fr *scan.Frame) error {
		if !m.match(fr) {
			return nil
		}
		var werr error
		buf, werr = journal.WriteRecord(bw, buf, fr.Seq, fr.Frame) // a huge frame is encoded a piece at a time
		return werr
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}
