package eval

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A task's repo_url makes the host's git connect somewhere. By default that is only over
// https:// or ssh://, and never to this machine (loopback), its link (link-local), a cloud's
// metadata service (which hands out the machine's credentials) or an unspecified address: a
// task set should not be able to make the operator's machine probe its own services. The
// host name is resolved by frognano, every address it resolves to is checked, and git is
// then pinned to those addresses (pinnedURL), so a name that answers differently the second
// time (DNS rebinding) is not asked again.

// defaultPorts are the ports git connects to when a URL names none.
var defaultPorts = map[string]string{"https": "443", "http": "80", "ssh": "22", "git": "9418"}

// metadataNames are the host names of cloud metadata services (they resolve to a metadata
// address inside the cloud, and to nothing or anything elsewhere).
var metadataNames = []string{"metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"}

// metadataAddrs are metadata services' addresses that no other rule covers (AWS's IPv6 one is
// a unique local address, Alibaba Cloud's a shared address space one); 169.254.169.254 is
// link-local and listed for its name in refusals.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("169.254.170.2"),
	netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("100.100.100.200"),
}

// hostLabelRe is one label of a host name. The last label must start with a letter: a
// resolver reads an all-numeric or hexadecimal name (`2130706433`, `0x7f.1`) as an address.
var hostLabelRe = regexp.MustCompile(`^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$`)

// repoURL is a repo_url that parsed.
type repoURL struct {
	u      *url.URL
	host   string // as written, without brackets
	name   string // host lower-cased, without a final dot: what is resolved and compared
	port   string // the URL's, or the scheme's default
	addr   netip.Addr
	isAddr bool // host is an address literal
}

// parseRepoURL checks repo_url's syntax: one of the four schemes git may use, a host that is
// an address literal or a host name, a port if any. Which of them a task may use is checkURL's.
func parseRepoURL(s string) (*repoURL, error) {
	if !urlRe.MatchString(s) {
		return nil, fieldErr("repo_url", "not an https://, ssh://, http:// or git:// URL")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fieldErr("repo_url", "not a URL")
	}
	r := &repoURL{u: u, host: u.Hostname(), port: u.Port()}
	if r.port == "" {
		r.port = defaultPorts[u.Scheme]
	} else if n, err := strconv.Atoi(r.port); err != nil || n < 1 || n > 65535 {
		return nil, fieldErr("repo_url", "port %q is not a port", r.port)
	}
	if a, err := netip.ParseAddr(r.host); err == nil {
		r.addr, r.isAddr, r.name = a, true, a.String()
		return r, nil
	}
	r.name = strings.TrimSuffix(strings.ToLower(r.host), ".")
	labels := strings.Split(r.name, ".")
	if r.name == "" || len(r.name) > 253 || slices.ContainsFunc(labels, func(l string) bool { return !hostLabelRe.MatchString(l) }) {
		return nil, fieldErr("repo_url", "%q is neither a host name nor an address", r.host)
	}
	if last := labels[len(labels)-1]; last[0] < 'a' || last[0] > 'z' {
		return nil, fieldErr("repo_url", "%q is not a host name (its last label must start with a letter; write an address in its usual form)", r.host)
	}
	return r, nil
}

// lookupFunc resolves a host name to its addresses.
type lookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

func defaultLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// pinnedURL is a repo_url that passed checkURL, with the addresses it was checked at.
type pinnedURL struct {
	*repoURL
	addrs []netip.Addr
}

// checkURL decides whether a task may clone from raw: its scheme, its host's name, and every
// address the name resolves to now. It returns the addresses git must then connect to.
func (p *policy) checkURL(ctx context.Context, raw string) (*pinnedURL, error) {
	r, err := parseRepoURL(raw)
	if err != nil {
		return nil, err
	}
	switch r.u.Scheme {
	case "https", "ssh":
	default:
		if !p.allow.PlainURLs {
			return nil, fieldErr("repo_url", "%s:// neither encrypts the repository nor authenticates the server, so anyone on the way can read "+
				"and answer for it: use https:// or ssh://, or allow it with --allow-plain-urls", r.u.Scheme)
		}
	}
	if !p.allow.LocalAddresses && slices.Contains(metadataNames, r.name) {
		return nil, fieldErr("repo_url", "%q is a cloud metadata service's name: refused (--allow-local-urls allows it)", r.host)
	}
	addrs := []netip.Addr{r.addr}
	if !r.isAddr {
		found, err := p.lookup(ctx, r.name)
		if err != nil {
			return nil, fieldErr("repo_url", "resolving %q: %v", r.host, err)
		}
		addrs = nil
		for _, a := range found {
			if a = a.Unmap(); a.IsValid() && !slices.Contains(addrs, a) {
				addrs = append(addrs, a)
			}
		}
		if len(addrs) == 0 {
			return nil, fieldErr("repo_url", "%q resolves to no address", r.host)
		}
	}
	if !p.allow.LocalAddresses {
		for _, a := range addrs {
			if why := localAddress(a); why != "" {
				return nil, fieldErr("repo_url", "%q is %s (%s): frognano's git would reach this machine or its cloud's services; "+
					"refused (--allow-local-urls allows it)", r.host, why, a)
			}
		}
	}
	return &pinnedURL{repoURL: r, addrs: addrs}, nil
}

// localAddress says why a is an address a task may not make the host connect to by default
// ("" when it may): loopback, link-local, a metadata service, unspecified, and any of these
// carried inside an IPv6 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4).
func localAddress(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	switch {
	case slices.Contains(metadataAddrs, a):
		return "a cloud metadata address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified(), a.Is4() && a.As4()[0] == 0:
		return "an unspecified address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "a link-local address"
	}
	if a.Is6() {
		b := a.As16()
		var v4 [4]byte
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(a), netip.MustParsePrefix("::/96").Contains(a):
			copy(v4[:], b[12:])
		case netip.MustParsePrefix("2002::/16").Contains(a):
			copy(v4[:], b[2:6])
		default:
			return ""
		}
		if why := localAddress(netip.AddrFrom4(v4)); why != "" {
			return why + " inside an IPv6 address"
		}
	}
	return ""
}

// git returns the settings git clones with and the URL it is given, so that it connects to
// the checked addresses and to nothing else: curl gets them as its resolution of the host
// (http.curloptResolve) and follows no redirect (which could lead anywhere); ssh (the program
// ssh names, "" for ssh on PATH) connects to the first of them while it checks the host key
// recorded for the name (HostKeyAlias); the git protocol, which has no such setting, gets the
// address in the URL.
func (p *pinnedURL) git(ssh string) (config []string, cloneURL string) {
	switch p.u.Scheme {
	case "https", "http":
		config = []string{"-c", "http.followRedirects=false"}
		if !p.isAddr {
			var list []string
			for _, a := range p.addrs {
				s := a.String()
				if a.Is6() {
					s = "[" + s + "]"
				}
				list = append(list, s)
			}
			config = append(config, "-c", fmt.Sprintf("http.curloptResolve=%s:%s:%s", p.host, p.port, strings.Join(list, ",")))
		}
		return config, p.u.String()
	case "ssh":
		alias := p.name
		if p.port != "22" {
			alias = "[" + alias + "]:" + p.port // how known_hosts records a host on another port
		}
		return []string{"-c", fmt.Sprintf("core.sshCommand=%s -o HostName=%s -o 'HostKeyAlias=%s'", cmp.Or(ssh, "ssh"), p.addrs[0].String(), alias)}, p.u.String()
	default: // git://
		u := *p.u
		host := p.addrs[0].String()
		if p.addrs[0].Is6() {
			host = "[" + host + "]"
		}
		u.Host = host + ":" + p.port
		return nil, u.String()
	}
}
