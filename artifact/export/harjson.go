package export

import (
	"encoding/json"
	"math"
	"strconv"

	"mcpscope/internal/jsonscan"
)

// appendHAREntry appends e as json.Marshal writes it, byte for byte (a
// test compares the two), without its reflection: marshalling entries
// was a tenth of export --format har's CPU. A time JSON cannot hold
// (never made from a duration) is left to json.Marshal, which fails.
func appendHAREntry(buf []byte, e *harEntry) ([]byte, error) {
	t := &e.Timings
	for _, f := range [...]float64{e.Time, t.Blocked, t.DNS, t.Connect, t.Send, t.Wait, t.Receive, t.SSL} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			b, err := json.Marshal(e)
			return append(buf, b...), err
		}
	}
	buf = append(buf, `{"startedDateTime":`...)
	buf = jsonscan.AppendMarshalString(buf, e.StartedDateTime)
	buf = append(buf, `,"time":`...)
	buf = appendMarshalFloat(buf, e.Time)

	rq := &e.Request
	buf = append(buf, `,"request":{"method":`...)
	buf = jsonscan.AppendMarshalString(buf, rq.Method)
	buf = append(buf, `,"url":`...)
	buf = jsonscan.AppendMarshalString(buf, rq.URL)
	buf = append(buf, `,"httpVersion":`...)
	buf = jsonscan.AppendMarshalString(buf, rq.HTTPVersion)
	buf = append(buf, `,"cookies":`...)
	buf = appendNVs(buf, rq.Cookies)
	buf = append(buf, `,"headers":`...)
	buf = appendNVs(buf, rq.Headers)
	buf = append(buf, `,"queryString":`...)
	buf = appendNVs(buf, rq.QueryString)
	if rq.PostData != nil {
		buf = append(buf, `,"postData":{"mimeType":`...)
		buf = jsonscan.AppendMarshalString(buf, rq.PostData.MimeType)
		buf = append(buf, `,"text":`...)
		buf = jsonscan.AppendMarshalString(buf, rq.PostData.Text)
		buf = append(buf, '}')
	}
	buf = append(buf, `,"headersSize":`...)
	buf = strconv.AppendInt(buf, int64(rq.HeadersSize), 10)
	buf = append(buf, `,"bodySize":`...)
	buf = strconv.AppendInt(buf, int64(rq.BodySize), 10)
	buf = appendComment(buf, rq.Comment)

	rs := &e.Response
	buf = append(buf, `},"response":{"status":`...)
	buf = strconv.AppendInt(buf, int64(rs.Status), 10)
	buf = append(buf, `,"statusText":`...)
	buf = jsonscan.AppendMarshalString(buf, rs.StatusText)
	buf = append(buf, `,"httpVersion":`...)
	buf = jsonscan.AppendMarshalString(buf, rs.HTTPVersion)
	buf = append(buf, `,"cookies":`...)
	buf = appendNVs(buf, rs.Cookies)
	buf = append(buf, `,"headers":`...)
	buf = appendNVs(buf, rs.Headers)
	buf = append(buf, `,"content":{"size":`...)
	buf = strconv.AppendInt(buf, int64(rs.Content.Size), 10)
	buf = append(buf, `,"mimeType":`...)
	buf = jsonscan.AppendMarshalString(buf, rs.Content.MimeType)
	buf = append(buf, `,"text":`...)
	buf = jsonscan.AppendMarshalString(buf, rs.Content.Text)
	buf = append(buf, `},"redirectURL":`...)
	buf = jsonscan.AppendMarshalString(buf, rs.RedirectURL)
	buf = append(buf, `,"headersSize":`...)
	buf = strconv.AppendInt(buf, int64(rs.HeadersSize), 10)
	buf = append(buf, `,"bodySize":`...)
	buf = strconv.AppendInt(buf, int64(rs.BodySize), 10)
	buf = appendComment(buf, rs.Comment)

	buf = append(buf, `},"cache":{},"timings":{"blocked":`...)
	buf = appendMarshalFloat(buf, t.Blocked)
	buf = append(buf, `,"dns":`...)
	buf = appendMarshalFloat(buf, t.DNS)
	buf = append(buf, `,"connect":`...)
	buf = appendMarshalFloat(buf, t.Connect)
	buf = append(buf, `,"send":`...)
	buf = appendMarshalFloat(buf, t.Send)
	buf = append(buf, `,"wait":`...)
	buf = appendMarshalFloat(buf, t.Wait)
	buf = append(buf, `,"receive":`...)
	buf = appendMarshalFloat(buf, t.Receive)
	buf = append(buf, `,"ssl":`...)
	buf = appendMarshalFloat(buf, t.SSL)
	buf = append(buf, '}')
	if e.Connection != "" {
		buf = append(buf, `,"connection":`...)
		buf = jsonscan.AppendMarshalString(buf, e.Connection)
	}
	buf = appendComment(buf, e.Comment)

	m := &e.MCP
	buf = append(buf, `,"_mcpscope":{`...)
	if m.Stream != "" {
		buf = append(buf, `"stream":`...)
		buf = jsonscan.AppendMarshalString(buf, m.Stream)
		buf = append(buf, ',')
	}
	if m.Resumes != "" {
		buf = append(buf, `"resumes":`...)
		buf = jsonscan.AppendMarshalString(buf, m.Resumes)
		buf = append(buf, ',')
	}
	buf = append(buf, `"seqs":[`...)
	buf = strconv.AppendUint(buf, m.Seqs[0], 10)
	buf = append(buf, ',')
	buf = strconv.AppendUint(buf, m.Seqs[1], 10)
	buf = append(buf, ']')
	if m.SSEEvents != 0 {
		buf = append(buf, `,"sseEvents":`...)
		buf = strconv.AppendInt(buf, int64(m.SSEEvents), 10)
	}
	return append(buf, '}', '}'), nil
}

// appendNVs appends name-value pairs as json.Marshal does (nil is null).
func appendNVs(buf []byte, nvs []harNV) []byte {
	if nvs == nil {
		return append(buf, "null"...)
	}
	buf = append(buf, '[')
	for i := range nvs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"name":`...)
		buf = jsonscan.AppendMarshalString(buf, nvs[i].Name)
		buf = append(buf, `,"value":`...)
		buf = jsonscan.AppendMarshalString(buf, nvs[i].Value)
		buf = append(buf, '}')
	}
	return append(buf, ']')
}

// appendComment appends an omitempty "comment" member.
func appendComment(buf []byte, c string) []byte {
	if c == "" {
		return buf
	}
	buf = append(buf, `,"comment":`...)
	return jsonscan.AppendMarshalString(buf, c)
}
