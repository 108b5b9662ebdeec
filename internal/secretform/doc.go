// Package secretform owns the forms in which frognano looks for a value it keeps secret (an
// operator's setup value, a token) in bytes it did not write: the value as is, as JSON spells it
// inside a string, base64-encoded (standard and URL alphabet, at every alignment, so that the
// value is found inside a longer encoded text too), hex-encoded (lower and upper case) and
// URL-encoded (as a query or a path spells it, and every byte as %XX), and UTF-16 (little- and
// big-endian: a text file a Windows tool wrote). It also says which of
// the operator's NAME=value settings are secrets (Settings), and finds every form of a set of
// secrets in one pass over the bytes (Matcher), with memory proportional to the forms.
//
// Three checks use it, so that they look for the same things: the environment seal check
// (runner/env, and the executor's -seal mode in the setup container, which searches the files
// setup changed), the published-tree check (check/patch, on every file a patch publishes,
// in the runner and again in githubapp's Publish), and the redactor's registry (githubapp),
// which feeds the second.
//
// secretform never prints, logs or returns a value: a Match names the secret (its setting's
// name, or nothing) and the form, never the bytes. It depends on the standard library alone,
// because the executor binary, which must stay static and standard-library only, imports it.
//
// Not found, by design: a value split, reversed, compressed, encrypted, wrapped across lines
// (base64 with line breaks), in another encoding (base32, base64 of UTF-16) or spread over file names,
// modes or times. These checks make leaking a value by accident, or by the obvious means,
// impossible; they cannot make it impossible for code that means to.
package secretform
