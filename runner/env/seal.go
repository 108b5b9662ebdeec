package env

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/frognano/frognano/internal/secretform"
	"github.com/frognano/frognano/runner/executor"
	"github.com/frognano/frognano/runner/sandbox"
)

// An environment is sealed when nothing the operator handed setup (Config.Env: a mirror's
// token, a proxy's password) is left in it: not in a file of its layer, a link, an extended
// attribute, a name, nor in what setup exported ($FROGNANO_ENV, which becomes the image's
// environment). Setup is the repository's code and may write a value anywhere; a sandbox made
// from the image would then hand it to the model, which reads everything. So the value is
// looked for before the image exists (sandbox.Seal: the engine's list of what setup changed,
// read by frognano's own executor with nothing of setup running), in every form secretform
// knows, and an environment that holds one is refused like a failed setup: never committed,
// never cached, never used. The run says where and how, never the value, and how to fix it.
//
// The check fails closed: a path it could not read, a deadline or a byte budget reached, are
// a refusal too. What it cannot find is secretform's list of what is not promised (a value
// split, reversed, compressed or encrypted).

// LabelSealed marks an environment image whose layer and exported environment were checked
// for every value setup was given (sealVersion): useCached takes no other, so images made
// before the check are built again.
const (
	LabelSealed = "dev.frognano.env-sealed"
	sealVersion = "1"
)

// maxSealItems is how many findings the refusal's sentence names; the setup log has them all.
const maxSealItems = 3

// seal checks the stopped setup's container and what it exported for the operator's values.
// It returns why the environment is refused ("" when it is sealed), or the machinery's error.
// Each finding is also a note of the setup log.
func (m *Manager) seal(ctx context.Context, sb *sandbox.Sandbox, log *setupLog, exported []string) (string, error) {
	secrets, err := secretform.Settings(m.cfg.Env)
	if err != nil {
		return "the operator's setup values could not be checked: " + err.Error(), nil
	}
	matcher := secretform.New(secrets)
	if matcher.Empty() {
		return "", nil // no value of secret length: nothing to look for
	}
	var found, problems []string
	for _, kv := range exported {
		name, _, _ := strings.Cut(kv, "=")
		if f, ok := matcher.Find([]byte(kv)); ok {
			found = append(found, fmt.Sprintf("$%s sets %s to what holds %s", envFileVar, matcher.Mask(name), f.What()))
		}
	}
	values := make([]string, len(secrets))
	for i, s := range secrets {
		values[i] = s.Value
	}
	rep, err := sb.Seal(ctx, values, m.cfg.Timeout)
	if err != nil {
		return "", err
	}
	for _, l := range rep.Lines {
		where := strconv.Quote(matcher.Mask(rep.Paths[l.Path]))
		if l.Problem != "" {
			problems = append(problems, where+" could not be checked: "+l.Problem)
			continue
		}
		f := secretform.Match{Name: secrets[min(max(l.Value, 0), len(secrets)-1)].Name, Form: l.Form}
		switch l.Where {
		case executor.SealInName:
			found = append(found, "the name "+where+" holds "+f.What())
		case executor.SealInLink:
			found = append(found, "the symbolic link "+where+" points to a name that holds "+f.What())
		case executor.SealInXattr:
			found = append(found, "an extended attribute of "+where+" holds "+f.What())
		default:
			found = append(found, where+" holds "+f.What())
		}
	}
	if rep.End.Stopped != "" {
		problems = append(problems, "the check stopped: "+rep.End.Stopped)
	}
	for _, s := range append(found, problems...) {
		log.Note("not sealed: " + s)
	}
	log.Note(fmt.Sprintf("seal check: %d paths setup changed, %d files and %s read, in %s (the engine's list of changes: %s)",
		len(rep.Paths), rep.End.Files, sandbox.FormatBytes(rep.End.Bytes), rep.Took.Round(100*time.Millisecond), rep.Listed.Round(100*time.Millisecond)))
	switch {
	case len(found) > 0:
		return fmt.Sprintf("the environment is not sealed: setup left a value the operator passes it (%s) where the model would read it: %s. "+
			"Nothing of it was kept. Let setup use such a value without leaving it: through a credential helper or a file that the script deletes before it ends, "+
			"or in its own environment only (unset it once it is used); see docs/environments.md", "FROGNANO_SETUP_ENV", some(found)), nil
	case len(problems) > 0:
		return fmt.Sprintf("the environment could not be checked for the values the operator passes setup (%s): %s. Nothing of it was kept",
			"FROGNANO_SETUP_ENV", some(problems)), nil
	}
	return "", nil
}

// some joins the first maxSealItems of items, and says how many more the setup log lists.
func some(items []string) string {
	if len(items) <= maxSealItems {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:maxSealItems], "; ") + fmt.Sprintf("; and %d more (in the setup log)", len(items)-maxSealItems)
}
