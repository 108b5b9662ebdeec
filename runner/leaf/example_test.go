package leaf_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/frognano/frognano/runner/leaf"
)

type echoTools struct{}

func (echoTools) Call(_ context.Context, name, arguments string) (string, error) {
	return "ran " + name, nil
}

func ExampleRun() {
	// A model server that calls Glob once, then answers.
	turn := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		turn++
		if turn == 1 {
			io.WriteString(w, `{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c1","type":"function",`+
				`"function":{"name":"Glob","arguments":"{\"pattern\":\"*.go\"}"}}]},"finish_reason":"tool_calls"}],`+
				`"usage":{"total_tokens":1200}}`)
			return
		}
		io.WriteString(w, `{"choices":[{"message":{"content":"Fixed."},"finish_reason":"stop"}],"usage":{"total_tokens":1300}}`)
	}))
	defer srv.Close()

	cfg := leaf.DefaultConfig()
	cfg.BaseURL = srv.URL + "/v1"
	cfg.Logger = slog.New(slog.DiscardHandler)
	r := leaf.Run(context.Background(), cfg, "Fix issue #1", echoTools{}, func(s leaf.Step) {
		fmt.Printf("step %d: %d observations\n", s.Index, len(s.Observations))
	})
	fmt.Println(r.ExitReason, r.FinalMessage, r.ContextTokens)
	fmt.Println(r.Messages[3].Role, r.Messages[3].Text())
	// Output:
	// step 0: 1 observations
	// step 1: 0 observations
	// agent Fixed. 1300
	// tool ran Glob
}
