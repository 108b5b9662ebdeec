package egress

import (
	"fmt"
	"strings"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/frognano/frognano/runner/executor"
)

// sandboxQuestion is one question as the observer kept it: untrusted bytes.
type sandboxQuestion = executor.ObservedQuestion

// maxName bounds a name as shown: a DNS name has at most 253 characters, and each escaped
// byte takes four.
const maxName = 4 * 255

// questionNames parses each kept question and returns its name as shown ("" for a question
// that is not one).
func questionNames(keys []sandboxQuestion) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i], _ = parseQuestion(k.Question)
	}
	return out
}

// questionType is the type a question asks for (0 when it is not one).
func questionType(q []byte) uint16 {
	_, t := parseQuestion(q)
	return t
}

// parseQuestion reads the first question of q, the observer's key: a DNS query's bytes after
// its id and flags (the four section counts, then the sections, possibly cut short after the
// question). It is parsed by golang.org/x/net's DNS message parser behind a header of our own;
// anything the parser refuses is no question (""). The name is shown in lower case (DNS names
// ignore case) without its final dot, and every byte outside a host name's letters, digits,
// '-', '_', '.' and '*' is escaped as \xHH, so the name cannot carry markup, control or
// invisible characters, whatever bytes a process in the sandbox put in its labels.
func parseQuestion(q []byte) (name string, qtype uint16) {
	msg := make([]byte, 4, 4+len(q))
	msg[2] = 0x01 // a standard query asking for recursion, as every resolver sends
	msg = append(msg, q...)
	var p dnsmessage.Parser
	if _, err := p.Start(msg); err != nil {
		return "", 0
	}
	question, err := p.Question()
	if err != nil {
		return "", 0
	}
	return showName(question.Name.Data[:question.Name.Length]), uint16(question.Type)
}

// showName is a name's bytes as shown: see parseQuestion.
func showName(b []byte) string {
	var s strings.Builder
	for i, c := range b {
		if i == len(b)-1 && c == '.' && i > 0 {
			break
		}
		switch {
		case c >= 'A' && c <= 'Z':
			s.WriteByte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == '*':
			s.WriteByte(c)
		default:
			fmt.Fprintf(&s, `\x%02x`, c)
		}
		if s.Len() > maxName {
			break
		}
	}
	return s.String()
}
