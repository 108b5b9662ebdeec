package dockerproxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
)

// forwardUpgrade forwards an attach or exec start that asks to upgrade the connection to a raw
// stream (Docker's hijack): the request goes to the engine on a connection of its own, and
// after the engine's 101 both connections are joined byte for byte. Each side's end of input
// is passed on as a half-close (the executor's stdin closing, a watcher's StdinOnce), and the
// joint ends when both directions have.
func (p *Proxy) forwardUpgrade(w http.ResponseWriter, out *http.Request) {
	ctx := out.Context()
	engine, err := p.dial(ctx)
	if err != nil {
		writeError(w, http.StatusBadGateway, "frognano docker-proxy: the Docker engine did not answer: "+err.Error())
		return
	}
	out.Header.Del("Content-Length")
	if err := out.Write(engine); err != nil {
		engine.Close()
		writeError(w, http.StatusBadGateway, "frognano docker-proxy: sending to the engine: "+err.Error())
		return
	}
	eb := bufio.NewReader(engine)
	resp, err := http.ReadResponse(eb, out)
	if err != nil {
		engine.Close()
		writeError(w, http.StatusBadGateway, "frognano docker-proxy: reading the engine's answer: "+err.Error())
		return
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		// An error (or an engine that does not upgrade): an ordinary answer.
		defer engine.Close()
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	client, cb, err := http.NewResponseController(w).Hijack()
	if err != nil {
		engine.Close()
		writeError(w, http.StatusInternalServerError, "frognano docker-proxy: cannot take over the connection: "+err.Error())
		return
	}
	resp.Body = nil
	if err := resp.Write(cb); err == nil {
		err = cb.Flush()
	}
	if err != nil {
		client.Close()
		engine.Close()
		return
	}
	join(client, cb.Reader, engine, eb)
}

// join copies client→engine and engine→client until both directions ended, passing each end
// on as a half-close, then closes both connections. The readers hold what was read past the
// headers already.
func join(client net.Conn, fromClient io.Reader, engine net.Conn, fromEngine io.Reader) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(engine, fromClient)
		closeWrite(engine)
	}()
	go func() {
		defer wg.Done()
		_, _ = io.Copy(client, fromEngine)
		closeWrite(client)
	}()
	wg.Wait()
	client.Close()
	engine.Close()
}

// closeWrite half-closes c when it can, else closes it.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		if cw.CloseWrite() == nil {
			return
		}
	}
	c.Close()
}
