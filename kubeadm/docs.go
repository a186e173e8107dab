package kubeadm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// document is one YAML document of a file, as apimachinery's YAMLReader
// (k8s.io/apimachinery/pkg/util/yaml) cuts it: lines up to a "---" line.
type document struct {
	Line int    // 1-based line of its first line in the file
	Data []byte // its lines, each ending in "\n"
}

// splitDocuments cuts data as the YAMLReader kubeadm uses does: a line that
// starts with "---" ends a document (only blanks or a comment may follow the
// dashes on it, anything else is an error) and is dropped, unless no line
// came before it, when it starts the next document.
func splitDocuments(data []byte) ([]document, error) {
	var docs []document
	r := bufio.NewReader(bytes.NewReader(data))
	var buf bytes.Buffer
	start, line := 1, 0
	for {
		text, err := readLine(r)
		if err != nil && err != io.EOF {
			return nil, err
		}
		if err != io.EOF || len(text) > 1 {
			line++
		}
		if strings.HasPrefix(string(text), "---") {
			rest := strings.TrimSpace(string(text[3:]))
			if rest != "" && rest[0] != '#' {
				return nil, fmt.Errorf("line %d: invalid YAML document separator: %s", line, rest)
			}
			if buf.Len() != 0 {
				docs = append(docs, document{Line: start, Data: append([]byte(nil), buf.Bytes()...)})
				buf.Reset()
				continue
			}
			if err == io.EOF {
				return docs, nil
			}
			// A separator before any line of a document is kept in it.
		}
		if err == io.EOF {
			if buf.Len() != 0 {
				docs = append(docs, document{Line: start, Data: append([]byte(nil), buf.Bytes()...)})
			}
			return docs, nil
		}
		if buf.Len() == 0 {
			start = line
		}
		buf.Write(text)
	}
}

// readLine is apimachinery's LineReader: a line without its end ("\n" or
// "\r\n"), then "\n"; io.EOF with the last (empty) read.
func readLine(r *bufio.Reader) ([]byte, error) {
	var b bytes.Buffer
	isPrefix, err := true, error(nil)
	var l []byte
	for isPrefix && err == nil {
		l, isPrefix, err = r.ReadLine()
		b.Write(l)
	}
	b.WriteByte('\n')
	if errors.Is(err, io.EOF) {
		err = io.EOF
	}
	return b.Bytes(), err
}
