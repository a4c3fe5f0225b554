package filter_test

import (
	"fmt"
	"time"

	"mcpscope/filter"
)

func ExampleParse() {
	f, err := filter.Parse("~m tools/call ~dur>1.5s | ~t 'get weather'")
	if err != nil {
		panic(err)
	}
	fmt.Println(f)
	fmt.Println(f.Match(&filter.Subject{Kind: "response", Method: "tools/call", Duration: 2 * time.Second}))
	fmt.Println(f.Match(&filter.Subject{Kind: "request", Method: "tools/call", Tool: "Get Weather"}))
	fmt.Println(f.NeedsContent())
	// Output:
	// ~m tools/call & ~dur >1500ms | ~t "get weather"
	// true
	// true
	// false
}

func ExampleSyntaxError_Caret() {
	_, err := filter.Parse("~k response & (~e | ~s canceled)")
	fmt.Println(err)
	fmt.Println(err.(*filter.SyntaxError).Caret())
	// Output:
	// column 24: ~s takes one of ok, error, cancelled, late, lost, detached, pending, streaming, input, not "canceled"
	// ~k response & (~e | ~s canceled)
	//                        ^
}
