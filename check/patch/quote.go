package patch

import (
	"errors"
	"strings"
)

// unquoteC decodes one C-style quoted string at the start of s, as git writes paths
// that contain control characters, '"', '\\' or (with core.quotePath, the default)
// bytes >= 0x80. It returns the decoded value and the rest of s after the closing
// quote. Git's escapes are \a \b \t \n \v \f \r \" \\ and three octal digits.
func unquoteC(s string) (val, rest string, err error) {
	if len(s) == 0 || s[0] != '"' {
		return "", s, errors.New("quoted name does not start with '\"'")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			i++
			if i >= len(s) {
				return "", "", errors.New("quoted name ends inside an escape")
			}
			switch e := s[i]; e {
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'v':
				b.WriteByte('\v')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\':
				b.WriteByte(e)
			case '0', '1', '2', '3':
				if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
					return "", "", errors.New("quoted name has a short octal escape")
				}
				b.WriteByte((e-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
				i += 2
			default:
				return "", "", errors.New("quoted name has an unknown escape")
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errors.New("quoted name has no closing quote")
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// parseName reads a whole name field: a quoted string, or the text as is.
func parseName(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		v, rest, err := unquoteC(s)
		if err != nil {
			return "", err
		}
		if rest != "" {
			return "", errors.New("text after a quoted name")
		}
		return v, nil
	}
	return s, nil
}

// headerNames splits the text after "diff --git " into the old and new names with
// their "a/" and "b/" prefixes removed. Like git apply, it only trusts an unquoted
// header when it can be split without doubt: both names identical ("a/x y b/x y"), or
// exactly one space. ok is false when the split is ambiguous; the caller then needs
// "rename from/to" or "---/+++" lines.
func headerNames(s string) (oldName, newName string, ok bool, err error) {
	var first, second string
	switch {
	case strings.HasPrefix(s, `"`):
		v, rest, err := unquoteC(s)
		if err != nil {
			return "", "", false, err
		}
		if !strings.HasPrefix(rest, " ") {
			return "", "", false, errors.New("no space after the first quoted name")
		}
		w, err := parseName(rest[1:])
		if err != nil {
			return "", "", false, err
		}
		first, second = v, w
	case strings.HasSuffix(s, `"`):
		// Unquoted first name, quoted second: the quoted part starts at the last
		// ` "b/` that unquotes to the end of the line.
		found := false
		for i := strings.LastIndex(s, ` "`); i >= 0; i = strings.LastIndex(s[:i], ` "`) {
			if w, err := parseName(s[i+1:]); err == nil {
				first, second, found = s[:i], w, true
				break
			}
		}
		if !found {
			return "", "", false, errors.New("cannot split the header names")
		}
	default:
		n := strings.Count(s, " ")
		switch {
		case n == 0:
			return "", "", false, errors.New("header has a single name")
		case n == 1:
			first, second, _ = strings.Cut(s, " ")
		case len(s)%2 == 1 && s[len(s)/2] == ' ' && strings.HasPrefix(s, "a/") &&
			strings.HasPrefix(s[len(s)/2+1:], "b/") && s[2:len(s)/2] == s[len(s)/2+3:]:
			// "a/NAME b/NAME": the only split git itself accepts for unquoted names.
			first, second = s[:len(s)/2], s[len(s)/2+1:]
		default:
			return "", "", false, nil
		}
	}
	o, okA := strings.CutPrefix(first, "a/")
	n, okB := strings.CutPrefix(second, "b/")
	if !okA || !okB {
		return "", "", false, errors.New(`header names lack the "a/" and "b/" prefixes`)
	}
	return o, n, true, nil
}
