package main

// dralloc.go: one long-lived dralloc process per question kind, asked over JSON Lines
// (`dralloc allocate --fixture -`, `dralloc cel eval --stdin`): a million questions
// without a million process starts. A process that dies (a crash is a finding) is
// reported with its stderr and started again for the next question.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"sync"
)

type lineProc struct {
	bin  string
	args []string
	mu   sync.Mutex
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	errb *bytes.Buffer
}

func newLineProc(bin string, args ...string) *lineProc { return &lineProc{bin: bin, args: args} }

func (p *lineProc) start() error {
	p.cmd = exec.Command(p.bin, p.args...)
	p.errb = &bytes.Buffer{}
	p.cmd.Stderr = p.errb
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		return err
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	p.out = bufio.NewReaderSize(out, 1<<20)
	return p.cmd.Start()
}

// ask sends one line (no newline inside) and returns the answer line.
func (p *lineProc) ask(line []byte) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		if err := p.start(); err != nil {
			return nil, err
		}
	}
	if _, err := p.in.Write(append(line, '\n')); err != nil {
		return nil, p.died(err)
	}
	ans, err := p.out.ReadBytes('\n')
	if err != nil {
		return nil, p.died(err)
	}
	return bytes.TrimRight(ans, "\n"), nil
}

func (p *lineProc) died(err error) error {
	_ = p.in.Close()
	werr := p.cmd.Wait()
	msg := fmt.Errorf("dralloc %v died (%v, %v): %s", p.args, err, werr, truncateStr(p.errb.String(), 2000))
	p.cmd = nil
	return msg
}

func (p *lineProc) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		_ = p.in.Close()
		_ = p.cmd.Wait()
		p.cmd = nil
	}
}

func truncateStr(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
