// Package env owns a run's environment: the image its sandboxes are made from. A repository
// may hold .frognano/setup.sh; env runs it once, with network and without any credential, in a
// setup container made from the operator's sandbox image (runner/sandbox NewSetup), and keeps
// what it installed as an environment image, keyed by the repository's scope, the base image,
// the script and what setup saw of the repository (Key). Later runs of the same repository with
// the same key reuse the image and start with no setup and no network. Images are kept within a size bound, least recently used first,
// and never one a run still needs (a run pins its image, and the engine refuses to remove an
// image a container uses).
//
// What env guarantees, and must never break:
//
//   - The script is read from the base commit of the run on the host (ScriptAt), never from a
//     working tree, and never from anything a sandbox wrote: a model that edits setup.sh
//     changes its patch, not what runs with network.
//   - Everything setup sees of the repository, and everything the key hashes, comes from the
//     setup commit's tree in git's objects (ReadInputs, sandbox.PackCommit): the whole commit,
//     or only the files .frognano/setup-inputs lists. A working tree (a pull request branch a
//     follow-up checked out, a local edit) never reaches setup.
//   - An environment belongs to one repository (Scope: the installation and the repository's
//     immutable id, or `frognano run`'s checkout): two repositories never share one, and the
//     cache evicts the largest tenant's images first, so no tenant evicts another's at will.
//   - Setup gets no credential: its environment holds the names env sets and what the operator
//     put in Config.Env, nothing of frognano's own environment.
//   - An environment holds nothing of Config.Env (seal.go): after setup, with every process it
//     left killed and nothing of the image running, the files of its layer (the engine's list of
//     its changes) and what it exported are searched for each operator value in every form
//     internal/secretform knows, by frognano's own executor (runner/sandbox Seal). One that holds
//     one, or that could not be checked, is refused like a failed setup: never committed, cached
//     or used; the reason names the place and the form, never the value. Only images labelled
//     LabelSealed are reused.
//   - What setup writes in the working tree is not part of the environment: the workspace is a
//     volume the image does not contain, so every sandbox starts from a fresh copy of the
//     checkout and setup's files never reach the patch.
//   - Every sandbox made from an environment image is as locked down as one made from the base
//     image (runner/sandbox applies the same limits to both); only the setup container has
//     network.
//
// env never holds a GitHub token and never talks to GitHub.
package env
