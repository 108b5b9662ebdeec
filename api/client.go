package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Client asks for runs through the API, as `frognano runs start` does.
type Client struct {
	BaseURL string // the service's address, such as https://frognano.example.com
	Token   string // an API token (fna_...)
	HTTP    *http.Client
}

// AnswerError is the API's refusal of a request: its status and what it said.
type AnswerError struct {
	Status int
	ErrorAnswer
}

func (e *AnswerError) Error() string {
	return fmt.Sprintf("the API answered %d %s: %s", e.Status, http.StatusText(e.Status), e.ErrorAnswer.Error)
}

// Start asks for a run (POST /api/v1/runs) and returns the API's answer; a refusal is an
// *AnswerError (a 409's names the active run).
func (c *Client) Start(ctx context.Context, req StartRequest) (RunAnswer, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return RunAnswer{}, fmt.Errorf("encoding the request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+"/api/v1/runs", bytes.NewReader(body))
	if err != nil {
		return RunAnswer{}, fmt.Errorf("making the request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+c.Token)
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: time.Minute}
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		return RunAnswer{}, fmt.Errorf("asking %s for a run: %w", c.BaseURL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return RunAnswer{}, fmt.Errorf("reading the API's answer: %w", err)
	}
	if resp.StatusCode != http.StatusCreated {
		ae := &AnswerError{Status: resp.StatusCode}
		if json.Unmarshal(raw, &ae.ErrorAnswer) != nil || ae.ErrorAnswer.Error == "" {
			ae.ErrorAnswer.Error = "(no explanation: is " + c.BaseURL + " frognano serve?)"
		}
		return RunAnswer{}, ae
	}
	var ans RunAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return RunAnswer{}, fmt.Errorf("reading the API's answer: %w", err)
	}
	return ans, nil
}
