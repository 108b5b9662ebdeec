// Package env owns a run's environment: the image its sandboxes are made from. A repository
// may hold .frognano/setup.sh; env runs it once, with network and without any credential, in a
// setup container made from the operator's sandbox image (runner/sandbox NewSetup), and keeps
// what it installed as an environment image, keyed by a content hash of the base image, the
// script and the files it reads (Key). Later runs with the same key reuse the image and start
// with no setup and no network. Images are kept within a size bound, least recently used first,
// and never one a run still needs (a run pins its image, and the engine refuses to remove an
// image a container uses).
//
// What env guarantees, and must never break:
//
//   - The script is read from the base commit of the run on the host (ScriptAt), never from a
//     working tree, and never from anything a sandbox wrote: a model that edits setup.sh
//     changes its patch, not what runs with network.
//   - Setup gets no credential: its environment holds the names env sets and what the operator
//     put in Config.Env, nothing of frognano's own environment.
//   - What setup writes in the working tree is not part of the environment: the workspace is a
//     volume the image does not contain, so every sandbox starts from a fresh copy of the
//     checkout and setup's files never reach the patch.
//   - Every sandbox made from an environment image is as locked down as one made from the base
//     image (runner/sandbox applies the same limits to both); only the setup container has
//     network.
//
// env never holds a GitHub token and never talks to GitHub.
package env
