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

// Unsealed is why the seal check refused an environment: where setup left a value the
// operator passes it, and what it could not check (it fails closed). A refusal, not a failure
// of setup: setup itself may have exited 0. Paths are setup's (untrusted; a value in a name is
// masked); the rest is frognano's words.
type Unsealed struct {
	Found    []SealItem // places that hold a value, with what each holds
	Problems []SealItem // places that could not be checked, with why
	Stopped  string     // why the check itself stopped before its end ("" when it did not)
}

// SealItem is one place of an environment: a path of its filesystem, or $FROGNANO_ENV with the
// Name of the variable setup exported there, and what it holds or why it could not be read.
type SealItem struct {
	Path, Name, What string
}

// String is the item in words: `"/etc/x.conf" holds ...`, `$FROGNANO_ENV sets NAME to what holds ...`.
func (i SealItem) String() string {
	if i.Name != "" {
		return i.Path + " sets " + i.Name + " to what " + i.What
	}
	return strconv.Quote(i.Path) + " " + i.What
}

// Reason is the refusal in one sentence, the first few places named in it: the run's note,
// the setup log's last line, SetupError.Reason.
func (u *Unsealed) Reason() string {
	var found, problems []string
	for _, f := range u.Found {
		found = append(found, f.String())
	}
	for _, p := range u.Problems {
		problems = append(problems, strconv.Quote(p.Path)+" could not be checked: "+p.What)
	}
	if u.Stopped != "" {
		problems = append(problems, "the check stopped: "+u.Stopped)
	}
	if len(found) > 0 {
		return fmt.Sprintf("the environment is not sealed: setup left a value the operator passes it (%s) where the model would read it: %s. "+
			"Nothing of it was kept. %s", "FROGNANO_SETUP_ENV", some(found), SealFix)
	}
	return fmt.Sprintf("the environment could not be checked for the values the operator passes setup (%s): %s. Nothing of it was kept",
		"FROGNANO_SETUP_ENV", some(problems))
}

// SealFix says how a repository lets setup use an operator's value without leaving it.
const SealFix = "Let setup use such a value without leaving it: through a credential helper or a file that the script deletes before it ends, " +
	"or in its own environment only (unset it once it is used); see docs/environments.md"

// seal checks the stopped setup's container and what it exported for the operator's values.
// It returns why the environment is refused (nil when it is sealed), or the machinery's error.
// Each finding is also a note of the setup log.
func (m *Manager) seal(ctx context.Context, sb *sandbox.Sandbox, log *setupLog, exported []string) (*Unsealed, error) {
	secrets, err := secretform.Settings(m.cfg.Env)
	if err != nil {
		return &Unsealed{Stopped: "the operator's setup values could not be read: " + err.Error()}, nil
	}
	matcher := secretform.New(secrets)
	if matcher.Empty() {
		return nil, nil // no value of secret length: nothing to look for
	}
	u := &Unsealed{}
	for _, kv := range exported {
		name, _, _ := strings.Cut(kv, "=")
		if f, ok := matcher.Find([]byte(kv)); ok {
			u.Found = append(u.Found, SealItem{Path: "$" + envFileVar, Name: matcher.Mask(name), What: "holds " + f.What()})
		}
	}
	values := make([]string, len(secrets))
	for i, s := range secrets {
		values[i] = s.Value
	}
	rep, err := sb.Seal(ctx, values, m.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	for _, l := range rep.Lines {
		where := matcher.Mask(rep.Paths[l.Path])
		if l.Problem != "" {
			u.Problems = append(u.Problems, SealItem{Path: where, What: l.Problem})
			continue
		}
		f := secretform.Match{Name: secrets[min(max(l.Value, 0), len(secrets)-1)].Name, Form: l.Form}
		switch l.Where {
		case executor.SealInName:
			u.Found = append(u.Found, SealItem{Path: where, What: "its name holds " + f.What()})
		case executor.SealInLink:
			u.Found = append(u.Found, SealItem{Path: where, What: "is a symbolic link to a name that holds " + f.What()})
		case executor.SealInXattr:
			u.Found = append(u.Found, SealItem{Path: where, What: "an extended attribute of it holds " + f.What()})
		default:
			u.Found = append(u.Found, SealItem{Path: where, What: "holds " + f.What()})
		}
	}
	u.Stopped = rep.End.Stopped
	for _, f := range u.Found {
		log.Note("not sealed: " + f.String())
	}
	for _, p := range u.Problems {
		log.Note("not sealed: " + strconv.Quote(p.Path) + " could not be checked: " + p.What)
	}
	if u.Stopped != "" {
		log.Note("not sealed: the check stopped: " + u.Stopped)
	}
	log.Note(fmt.Sprintf("seal check: %d paths setup changed, %d files and %s read, in %s (the engine's list of changes: %s)",
		len(rep.Paths), rep.End.Files, sandbox.FormatBytes(rep.End.Bytes), rep.Took.Round(100*time.Millisecond), rep.Listed.Round(100*time.Millisecond)))
	if len(u.Found)+len(u.Problems) == 0 && u.Stopped == "" {
		return nil, nil
	}
	return u, nil
}

// some joins the first maxSealItems of items, and says how many more the setup log lists.
func some(items []string) string {
	if len(items) <= maxSealItems {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:maxSealItems], "; ") + fmt.Sprintf("; and %d more (in the setup log)", len(items)-maxSealItems)
}
