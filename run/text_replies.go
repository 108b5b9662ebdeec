package run

// This file words the replies: comments that answer a request other than a run's own status
// comment (its reply, text_status.go): the answer to `@APP stop`, to a mention while the
// issue's run is active, and what is said of requests that were counted on a refused run
// instead of running.

import (
	"fmt"
	"strings"

	"github.com/frognano/frognano/settings"
)

// StopReply answers `@APP stop`: which runs were stopped (active: queued or running; waiting:
// requests that waited for them), or that there was none.
func StopReply(requester string, active, waiting []int64) string {
	if len(active) == 0 && len(waiting) == 0 {
		return fmt.Sprintf("@%s: there is no waiting, queued or running frognano follow-up on this pull request, so there was nothing to stop.", requester)
	}
	names := func(ids []int64) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = fmt.Sprintf("run %d", id)
		}
		return out
	}
	what := strings.Join(names(active), " and ")
	if len(waiting) > 0 {
		if what != "" {
			what += ", and "
		}
		what += fmt.Sprintf("%s that waited for %s (%s)", plural(len(waiting), "request"), pick(len(active) > 0, "it", "an earlier run"), strings.Join(names(waiting), ", "))
	}
	return fmt.Sprintf("🛑 @%s: frognano stopped %s at your request; nothing more will be pushed for it. "+
		"Ask again with a new comment when you want another follow-up.", requester, what)
}

// StopIssueReply answers `@APP stop` on an issue: which run was stopped, or that there was none.
func StopIssueReply(requester string, stopped []int64) string {
	if len(stopped) == 0 {
		return fmt.Sprintf("@%s: there is no queued or running frognano run on this issue, so there was nothing to stop.", requester)
	}
	names := make([]string, len(stopped))
	for i, id := range stopped {
		names[i] = fmt.Sprintf("run %d", id)
	}
	return fmt.Sprintf("🛑 @%s: frognano stopped %s at your request. Ask again when you want another run.", requester, strings.Join(names, " and "))
}

// ActiveRunReply answers a mention of the App on an issue whose run (runID, its page; "" none)
// is already active: no second run starts.
func ActiveRunReply(requester string, runID int64, page string) string {
	name := fmt.Sprintf("run %d", runID)
	if page != "" {
		name = fmt.Sprintf("[run %d](%s)", runID, page)
	}
	return fmt.Sprintf("@%s: frognano's %s is already working on this issue, so no second run was started. "+
		"Ask again once it has ended if you want another.", requester, name)
}

// requestsNotRunReply tells the pull request that n requests counted on a refused run were not
// run (sayWhatWaited).
func requestsNotRunReply(n int) string {
	them := "it was"
	if n > 1 {
		them = "they were"
	}
	return fmt.Sprintf("%s on this pull request were counted on the request above instead of waiting their turn "+
		"(one person waits with one request at a time, and at most %d wait); %s not run. Ask again to start a follow-up.",
		plural(n, "more request"), MaxWaitingRuns, them)
}

// followUpsOffReply answers a request on a pull request of a repository whose settings file
// turned follow-ups off (follow_ups: false); no run starts.
func followUpsOffReply(runID int64, requester string) string {
	return fmt.Sprintf("%s\n@%s, follow-ups are off in this repository (`follow_ups: false` in its %s), so frognano does not act on "+
		"requests on its pull requests. No run was started.", statusMarker(runID), requester, settings.Path)
}
