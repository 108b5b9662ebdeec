package githubapp

import (
	"context"
	"slices"
	"testing"
)

// TestRemoveLabelWhateverItsName: a label's name is a repository's choice (its settings file's
// `label:`, or whatever GitHub sent as the label of the event that started a run), so removing
// it removes that label and nothing else, whatever characters it holds: a slash, `#`, `?`, `%`
// or dot segments never make the request reach another path (DELETE on a branch's ref, or on
// every label of the issue).
func TestRemoveLabelWhateverItsName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"area/ui", "ai#fix", "why?", "50% done", "ai fix", "../../../git/refs/heads/main", "ai-fix/.."} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.gh.AddLabel(b.repo, 12, "ai")
			b.gh.AddLabel(b.repo, 12, name)
			if err := b.client.RemoveLabel(context.Background(), 12, name); err != nil {
				t.Fatalf("RemoveLabel(%q): %v", name, err)
			}
			if got := b.gh.Labels(b.repo, 12); !slices.Equal(got, []string{"ai"}) {
				t.Errorf("labels after removing %q: %q, want [ai]", name, got)
			}
			if b.gh.Branch(b.repo, "main") == nil {
				t.Errorf("removing label %q deleted branch main", name)
			}
		})
	}
	// A label named only by dots cannot be named in a path GitHub reads as that label: it is
	// refused, and nothing is requested.
	for _, name := range []string{".", ".."} {
		b := setup(t)
		b.gh.AddLabel(b.repo, 12, "ai")
		b.gh.AddLabel(b.repo, 12, name)
		if err := b.client.RemoveLabel(context.Background(), 12, name); err == nil {
			t.Errorf("RemoveLabel(%q) = nil, want an error", name)
		}
		if got := b.gh.Labels(b.repo, 12); !slices.Equal(got, []string{"ai", name}) {
			t.Errorf("labels after removing %q: %q, want both still there", name, got)
		}
	}
}
