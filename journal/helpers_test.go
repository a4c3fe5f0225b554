package journal

import (
	"fmt"
	"time"

	"mcpscope/transport"
)

func frameIn(i int, data string) transport.Frame {
	return transport.Frame{Time: time.Unix(1700000000, int64(i)).UTC(), Dir: transport.In, Kind: transport.Message, Data: []byte(data)}
}

func progressLine(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":%d,"message":"step %d"}}`, i, i)
}
