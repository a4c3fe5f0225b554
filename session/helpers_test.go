package session_test

import (
	"bytes"
	"encoding/json"
	"io"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
