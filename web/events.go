package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/run"
)

// handleEvents streams a run's new events as server-sent events until the run is terminal:
// "step" (a finished step, rendered to HTML on the server, with its group when it opens one),
// "timeline" (an entry of the timeline, as HTML), "state" (the run's state) and "end" (the run
// ended: the page reloads to show the whole run). Every HTML fragment is rendered by the same
// templates as the page, so the browser inserts only escaped text. Each event carries its id,
// so a browser that reconnects (Last-Event-ID) resumes where it was.
func (p *Pages) handleEvents(w http.ResponseWriter, r *http.Request) {
	rec, ok := p.readableRun(w, r, false)
	if !ok {
		return
	}
	v, _ := p.cfg.Auth.Viewer(r)
	release, ok := p.holdStream(v.Login)
	if !ok {
		w.Header().Set("Retry-After", "10")
		http.Error(w, "you have too many open event streams; close some pages of running runs", http.StatusTooManyRequests)
		return
	}
	defer release()
	select {
	case p.streams <- struct{}{}:
		defer func() { <-p.streams }()
	default:
		w.Header().Set("Retry-After", "10")
		http.Error(w, "too many open event streams; try again shortly", http.StatusServiceUnavailable)
		return
	}
	after := int64(0)
	for _, s := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("after")} {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
			after = n
			break
		}
	}
	rc := http.NewResponseController(w)
	// The public server's write timeout is for ordinary answers; a stream lasts up to maxStream.
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: pass events on at once
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	s := &stream{p: p, w: w, rc: rc, runID: rec.ID, b: newStepBuilder(), still: func(ctx context.Context) bool {
		// Access is asked again as the stream goes on: a person removed from the repository
		// (or signed out) stops receiving within Config.RecheckInterval.
		if _, ok := p.cfg.Auth.Viewer(r); !ok {
			return false
		}
		can, err := p.cfg.Auth.CanRead(ctx, v, rec.RepoID)
		return err == nil && can
	}}
	if err := s.follow(r.Context(), after); err != nil && r.Context().Err() == nil {
		p.cfg.Logger.WarnContext(r.Context(), "streaming a run's events", logging.RunID(rec.ID), logging.Err(err))
	}
}

type stream struct {
	p     *Pages
	w     http.ResponseWriter
	rc    *http.ResponseController
	runID int64
	b     *stepBuilder               // replays every event, so that step groups are named as on the page
	last  int64                      // the last event read
	still func(context.Context) bool // whether the viewer may still read the run
}

func (s *stream) follow(ctx context.Context, after int64) error {
	deadline := time.Now().Add(maxStream)
	tick := time.NewTicker(s.p.cfg.PollInterval)
	defer tick.Stop()
	lastWrite, lastCheck := time.Now(), time.Now()
	for {
		if time.Since(lastCheck) >= s.p.cfg.RecheckInterval {
			if !s.still(ctx) {
				return nil
			}
			lastCheck = time.Now()
		}
		// The state first: a run seen terminal has written all its events but its end, which
		// the page does not need (it reloads).
		state, err := s.p.cfg.Runs.State(ctx, s.runID)
		if err != nil {
			return err
		}
		n, err := s.send(ctx, after)
		if err != nil {
			return err
		}
		if n > 0 {
			lastWrite = time.Now()
		}
		if !run.Unfinished(state) {
			return s.event(s.last, "end", state)
		}
		if time.Since(lastWrite) >= heartbeatEvery {
			if _, err := fmt.Fprint(s.w, ": still running\n\n"); err != nil {
				return err
			}
			if err := s.rc.Flush(); err != nil {
				return err
			}
			lastWrite = time.Now()
		}
		if time.Now().After(deadline) {
			return nil // the browser reconnects with Last-Event-ID
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.p.done:
			return nil
		case <-tick.C:
		}
	}
}

// send reads the events after s.last and writes those after `after`; it returns how many it wrote.
func (s *stream) send(ctx context.Context, after int64) (int, error) {
	written := 0
	for {
		evs, err := s.p.cfg.Runs.Events(ctx, s.runID, s.last)
		if err != nil {
			return written, err
		}
		for _, e := range evs {
			s.last = e.ID
			emit := e.ID > after
			if err := s.one(e, emit); err != nil {
				return written, err
			}
			if emit {
				written++
			}
		}
		if len(evs) < run.MaxEventsRead {
			break
		}
	}
	if written > 0 {
		return written, s.rc.Flush()
	}
	return 0, nil
}

// one replays e into the step groups and, when emit, writes what the page needs of it.
func (s *stream) one(e run.Event, emit bool) error {
	switch e.Kind {
	case run.EventStep:
		var st run.StepEvent
		if json.Unmarshal(e.Data, &st) != nil {
			return nil
		}
		g, created, sv := s.b.add(e.At, st)
		if !emit {
			return nil
		}
		msg := struct {
			Group     string `json:"group"`
			GroupHTML string `json:"group_html,omitempty"`
			HTML      string `json:"html"`
		}{Group: g.ID}
		var err error
		if created {
			if msg.GroupHTML, err = s.p.fragment("group", &stepGroup{ID: g.ID, Title: g.Title}); err != nil {
				return err
			}
		}
		if msg.HTML, err = s.p.fragment("step", sv); err != nil {
			return err
		}
		return s.json(e.ID, "step", msg)
	case run.EventAttempt:
		s.b.try++
	}
	if !emit {
		return nil
	}
	if e.Kind == run.EventAttempt {
		if err := s.event(e.ID, "state", run.StateRunning); err != nil {
			return err
		}
	}
	it, ok := timelineOf(e)
	if !ok {
		return nil
	}
	html, err := s.p.fragment("timeline-item", it)
	if err != nil {
		return err
	}
	return s.json(e.ID, "timeline", struct {
		HTML string `json:"html"`
	}{html})
}

func (s *stream) json(id int64, name string, v any) error {
	b, err := json.Marshal(v) // one line: newlines in strings are escaped
	if err != nil {
		return err
	}
	return s.event(id, name, string(b))
}

// event writes one server-sent event; data must be one line.
func (s *stream) event(id int64, name, data string) error {
	_, err := fmt.Fprintf(s.w, "id: %d\nevent: %s\ndata: %s\n\n", id, name, data)
	if err != nil {
		return err
	}
	return s.rc.Flush()
}
