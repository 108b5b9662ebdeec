package secrets

// A text file in UTF-16 (what PowerShell's redirection and many Windows tools write) puts a NUL
// byte beside every ASCII character, so no rule of gitleaks, which reads bytes as text, finds a
// key in it; GitHub shows such a file as text to whoever opens it. The scan therefore also reads
// the ASCII that a file spells in UTF-16, in either byte order and at either alignment, whatever
// surrounds it (a BOM or none, text or binary around), and runs the rules over that too.

// minWideRun is the fewest characters a run of UTF-16 ASCII must have to be read: a key is
// longer, and shorter runs are common in binary files.
const minWideRun = 8

// wideText returns the runs of printable ASCII (with tab, CR and LF) that content spells in
// UTF-16, each on lines of its own, and for each line of the returned text the 1-based line of
// content it starts on (counted by LF bytes, which UTF-16's LF holds). "" when content spells
// none: a file without NUL bytes costs one pass.
func wideText(content []byte) (string, []int) {
	var text []byte
	var lines []int
	// The line of content an offset is on, counted from the last offset asked for: each pass
	// asks in increasing order, so a pass reads content once.
	pos, line := 0, 1
	lineAt := func(off int) int {
		if off < pos {
			pos, line = 0, 1
		}
		for ; pos < off; pos++ {
			if content[pos] == '\n' {
				line++
			}
		}
		return line
	}
	// Every pass is read: a file in one byte order also reads, one byte on, as the other, less
	// its first character, and what both readings find on a line is one finding.
	for _, order := range []int{0, 1} { // 0: little-endian (char, NUL), 1: big-endian (NUL, char)
		for align := 0; align < 2; align++ {
			pos, line = 0, 1
			start, n := -1, 0
			flush := func(end int) {
				if start >= 0 && n >= minWideRun {
					at := lineAt(start)
					lines = append(lines, at)
					for i := start; i < end; i += 2 {
						c := content[i+order]
						text = append(text, c)
						if c == '\n' {
							at++
							lines = append(lines, at)
						}
					}
					text = append(text, '\n')
				}
				start, n = -1, 0
			}
			i := align
			for ; i+1 < len(content); i += 2 {
				c, z := content[i+order], content[i+1-order]
				if z == 0 && (c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' || c == '\r') {
					if start < 0 {
						start = i
					}
					n++
					continue
				}
				flush(i)
			}
			flush(i)
		}
	}
	if len(text) == 0 {
		return "", nil
	}
	return string(text), lines
}
