package main

// Container logs, stored and served the way a kubelet does.
//
// Each container run writes its stdout and stderr to a file in the CRI log format
// ("<RFC3339Nano time> <stream> <F|P> <text>"). The kubelet endpoint on every node's address
// serves GET /containerLogs/{namespace}/{pod}/{container} with follow, tailLines, timestamps,
// previous, sinceSeconds, sinceTime and limitBytes, which is what the API server's
// /api/v1/namespaces/NS/pods/NAME/log calls.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// logWriter turns one stream of a process into CRI log records in a shared file.
type logFile struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

func newLogFile(path string) (*logFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &logFile{path: path, f: f}, nil
}

const maxLogLine = 16 * 1024

// copyStream reads r until EOF and writes its lines as records tagged with stream.
func (l *logFile) copyStream(stream string, r io.Reader) {
	br := bufio.NewReaderSize(r, maxLogLine)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			tag := "P"
			if line[len(line)-1] == '\n' {
				tag = "F"
				line = line[:len(line)-1]
			}
			l.write(stream, tag, line)
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

func (l *logFile) write(stream, tag string, text []byte) {
	var b bytes.Buffer
	b.WriteString(time.Now().UTC().Format(time.RFC3339Nano))
	b.WriteByte(' ')
	b.WriteString(stream)
	b.WriteByte(' ')
	b.WriteString(tag)
	b.WriteByte(' ')
	b.Write(text)
	b.WriteByte('\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		_, _ = l.f.Write(b.Bytes())
	}
}

func (l *logFile) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

type logRecord struct {
	ts     time.Time
	tsRaw  string
	full   bool
	text   []byte
	stream string
}

func parseRecord(line []byte) (logRecord, bool) {
	parts := bytes.SplitN(line, []byte{' '}, 4)
	if len(parts) < 3 {
		return logRecord{}, false
	}
	ts, err := time.Parse(time.RFC3339Nano, string(parts[0]))
	if err != nil {
		return logRecord{}, false
	}
	rec := logRecord{ts: ts, tsRaw: string(parts[0]), stream: string(parts[1]), full: string(parts[2]) == "F"}
	if len(parts) == 4 {
		rec.text = parts[3]
	}
	return rec, true
}

type logOptions struct {
	follow     bool
	timestamps bool
	tailLines  int64 // -1: all
	since      time.Time
	limitBytes int64 // 0: no limit
}

// logOutput writes records to w, honouring timestamps, since and limitBytes.
type logOutput struct {
	w        io.Writer
	opts     logOptions
	written  int64
	atLineSt bool
}

func (o *logOutput) emit(rec logRecord) error {
	if !o.opts.since.IsZero() && rec.ts.Before(o.opts.since) {
		return nil
	}
	var b bytes.Buffer
	if o.opts.timestamps && o.atLineSt {
		b.WriteString(rec.tsRaw)
		b.WriteByte(' ')
	}
	b.Write(rec.text)
	if rec.full {
		b.WriteByte('\n')
	}
	o.atLineSt = rec.full
	out := b.Bytes()
	if o.opts.limitBytes > 0 {
		left := o.opts.limitBytes - o.written
		if left <= 0 {
			return io.EOF
		}
		if int64(len(out)) > left {
			out = out[:left]
		}
	}
	n, err := o.w.Write(out)
	o.written += int64(n)
	if f, ok := o.w.(http.Flusher); ok && o.opts.follow {
		f.Flush()
	}
	if err != nil {
		return err
	}
	if o.opts.limitBytes > 0 && o.written >= o.opts.limitBytes {
		return io.EOF
	}
	return nil
}

// serveLogFile writes the log at path to w. When follow is set, it keeps reading until done()
// says the writer has finished and the file is drained, or ctx ends.
func serveLogFile(ctx context.Context, path string, opts logOptions, w io.Writer, done func() bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	out := &logOutput{w: w, opts: opts, atLineSt: true}

	var pending []byte // bytes read past the last complete record
	readRecords := func() ([]logRecord, error) {
		buf := make([]byte, 64*1024)
		var recs []logRecord
		for {
			n, err := f.Read(buf)
			if n > 0 {
				pending = append(pending, buf[:n]...)
				for {
					i := bytes.IndexByte(pending, '\n')
					if i < 0 {
						break
					}
					if rec, ok := parseRecord(pending[:i]); ok {
						rec.text = append([]byte(nil), rec.text...)
						recs = append(recs, rec)
					}
					pending = pending[i+1:]
				}
			}
			if err == io.EOF {
				return recs, nil
			}
			if err != nil {
				return recs, err
			}
		}
	}

	recs, err := readRecords()
	if err != nil {
		return err
	}
	if opts.tailLines >= 0 {
		// Keep the records of the last tailLines lines (a line may span several P records).
		lines, start := int64(0), len(recs)
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].full || i == len(recs)-1 {
				if lines == opts.tailLines {
					break
				}
				lines++
			}
			start = i
		}
		if opts.tailLines == 0 {
			start = len(recs)
		}
		recs = recs[start:]
	}
	for _, r := range recs {
		if err := out.emit(r); err != nil {
			return nil
		}
	}
	if !opts.follow {
		return nil
	}
	for {
		finished := done()
		recs, err := readRecords()
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := out.emit(r); err != nil {
				return nil
			}
		}
		if finished && len(recs) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// kubeletServer serves one node's kubelet endpoint.
func (a *Agent) startKubeletServer(n *node) error {
	cert, err := selfSignedCert(n.name, n.ip)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(n.ip.String(), strconv.Itoa(a.cfg.kubeletPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("kubelet endpoint of %s on %s: %w", n.name, addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/containerLogs/", func(w http.ResponseWriter, r *http.Request) { a.serveContainerLogs(n, w, r) })
	srv := &http.Server{
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 30 * time.Second,
	}
	a.servers = append(a.servers, srv)
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && err != http.ErrServerClosed {
			a.log.Printf("kubelet endpoint of %s: %v", n.name, err)
		}
	}()
	return nil
}

func (a *Agent) serveContainerLogs(n *node, w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if len(parts) != 3 {
		http.Error(w, "path must be /containerLogs/{namespace}/{pod}/{container}", http.StatusBadRequest)
		return
	}
	ns, podName, ctrName := parts[0], parts[1], parts[2]
	q := r.URL.Query()
	opts := logOptions{tailLines: -1}
	opts.follow = boolParam(q.Get("follow"))
	opts.timestamps = boolParam(q.Get("timestamps"))
	previous := boolParam(q.Get("previous"))
	if v := q.Get("tailLines"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			http.Error(w, "invalid tailLines", http.StatusBadRequest)
			return
		}
		opts.tailLines = n
	}
	if v := q.Get("limitBytes"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			http.Error(w, "invalid limitBytes", http.StatusBadRequest)
			return
		}
		opts.limitBytes = n
	}
	if v := q.Get("sinceSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			http.Error(w, "invalid sinceSeconds", http.StatusBadRequest)
			return
		}
		opts.since = time.Now().Add(-time.Duration(n) * time.Second)
	}
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			http.Error(w, "invalid sinceTime", http.StatusBadRequest)
			return
		}
		opts.since = t
	}
	pw := a.workerByName(ns, podName)
	if pw == nil || pw.node != n {
		http.Error(w, fmt.Sprintf("pod %s/%s not found on node %s", ns, podName, n.name), http.StatusNotFound)
		return
	}
	path, done, err := pw.logPath(ctrName, previous)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	if err := serveLogFile(r.Context(), path, opts, w, done); err != nil {
		a.log.Printf("serve logs %s/%s/%s: %v", ns, podName, ctrName, err)
	}
}

func boolParam(v string) bool {
	b, _ := strconv.ParseBool(v)
	return b
}

func selfSignedCert(name string, ip net.IP) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{name},
		IPAddresses:  []net.IP{ip},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
