// quic-go-peer: the quic-go peer of scripts/interop.
//
//	quic-go-peer client -url https://10.77.0.2:4433/file -out FILE
//	quic-go-peer server -listen 10.77.0.2:4433 -root DIR -cert C -key K
//
// The client downloads one URL over HTTP/3 into FILE and prints a JSON line
// with the byte count and the time from the request to the last byte; the
// server serves the files under DIR over HTTP/3. Both raise quic-go's
// flow-control windows far above a 600 ms satellite path's
// bandwidth-delay product, so that flow control never limits a transfer,
// and write qlog (.sqlog) to $QLOGDIR when it is set.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/qlog"
)

const (
	// 64 MiB per stream, 96 MiB per connection: 600 ms at 20 Mbit/s is
	// 1.5 MB in flight.
	streamWindow     = 64 << 20
	connectionWindow = 96 << 20
)

func quicConfig() *quic.Config {
	return &quic.Config{
		InitialStreamReceiveWindow:     streamWindow,
		MaxStreamReceiveWindow:         streamWindow,
		InitialConnectionReceiveWindow: connectionWindow,
		MaxConnectionReceiveWindow:     connectionWindow,
		MaxIdleTimeout:                 60 * time.Second,
		HandshakeIdleTimeout:           20 * time.Second,
		Tracer:                         qlog.DefaultConnectionTracer,
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "quic-go-peer: "+format+"\n", args...)
	os.Exit(1)
}

func client(args []string) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	url := fs.String("url", "", "URL to download (https://...)")
	out := fs.String("out", "", "file to write the body to")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" || *out == "" {
		return errors.New("client: -url and -out are required")
	}
	transport := &http3.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		QUICConfig:      quicConfig(),
	}
	defer transport.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return fmt.Errorf("bad URL: %w", err)
	}
	start := time.Now()
	resp, err := transport.RoundTrip(req)
	if err != nil {
		return fmt.Errorf("request failed: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("download failed after %d bytes: %w", n, err)
	}
	elapsed := time.Since(start).Seconds()
	line, _ := json.Marshal(map[string]any{"bytes": n, "elapsed_s": elapsed})
	fmt.Println(string(line))
	return nil
}

func server(args []string) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:4433", "address to listen on")
	root := fs.String("root", ".", "directory to serve")
	cert := fs.String("cert", "", "certificate (PEM)")
	key := fs.String("key", "", "private key (PEM)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cert == "" || *key == "" {
		return errors.New("server: -cert and -key are required")
	}
	if st, err := os.Stat(*root); err != nil || !st.IsDir() {
		return fmt.Errorf("server: -root %s is not a directory", *root)
	}
	s := &http3.Server{
		Addr:       *listen,
		Handler:    http.FileServer(http.Dir(*root)),
		QUICConfig: quicConfig(),
	}
	fmt.Fprintf(os.Stderr, "quic-go-peer: listening on %s, serving %s\n", *listen, *root)
	return s.ListenAndServeTLS(*cert, *key)
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: quic-go-peer client|server [flags]")
	}
	var err error
	switch os.Args[1] {
	case "client":
		err = client(os.Args[2:])
	case "server":
		err = server(os.Args[2:])
	default:
		fail("unknown mode %q: expected client or server", os.Args[1])
	}
	if err != nil {
		fail("%v", err)
	}
}
