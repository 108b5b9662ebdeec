package doctor

import (
	"github.com/frognano/frognano/githubapp"
)

// CommitSigning says whether GitHub signs frognano's commits: it does when they carry no
// author or committer of their own (FROGNANO_COMMIT_NAME and FROGNANO_COMMIT_EMAIL unset), so
// they show as Verified and a ruleset that requires signed commits accepts them. Set, they are
// unsigned: a warning, since many repositories do not require signatures.
func CommitSigning(cfg githubapp.Config) Result {
	const name = "commit-signing"
	if cfg.CommitName == "" && cfg.CommitEmail == "" {
		return pass(name, "frognano's commits carry no identity of their own: GitHub makes the App's bot their author and signs them (Verified)")
	}
	return warn(name, githubapp.EnvCommitName+"/"+githubapp.EnvCommitEmail+" are set, so frognano's commits carry that author and are NOT signed: "+
		"they do not show as Verified, and a ruleset that requires signed commits on frognano/* refuses them",
		"unset "+githubapp.EnvCommitName+" and "+githubapp.EnvCommitEmail+" to have GitHub sign frognano's commits")
}
