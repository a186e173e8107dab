package kubeletapi

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"mime"
	"strings"
	"time"
)

// Limits on the answers, each far above what a kubelet serves (its /configz
// is ~5 KiB, /flagz ~5 KiB for 131 flags, /statusz ~0.4 KiB).
const (
	maxConfigz = 4 << 20
	maxFlagz   = 256 << 10
	maxStatusz = 64 << 10
	maxHealthz = 4 << 10
	// maxFlags bounds the flags of one /flagz answer.
	maxFlags = 2000
)

// The structured answers asked for (the kubelet answers text/plain
// otherwise, and 406 to application/json alone).
const (
	flagzAccept   = "application/json;as=Flagz;v=v1beta1;g=config.k8s.io"
	statuszAccept = "application/json;as=Statusz;v=v1beta1;g=config.k8s.io"
)

// Configz reads the kubelet's running configuration: the v1beta1
// KubeletConfiguration JSON inside /configz's answer.
func (c *Client) Configz(ctx context.Context, n Node) ([]byte, string, error) {
	a, err := c.get(ctx, n, "/configz", "", maxConfigz)
	if err != nil {
		return nil, c.URL(n, "/configz"), err
	}
	var wrapped struct {
		KubeletConfig json.RawMessage `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(a.body, &wrapped); err != nil || len(wrapped.KubeletConfig) == 0 || wrapped.KubeletConfig[0] != '{' {
		return nil, a.url, c.bad(n, "/configz", a, "not a /configz answer (no kubeletconfig object): %s", snippet(a.body))
	}
	return wrapped.KubeletConfig, a.url, nil
}

// Healthz asks the kubelet whether it is healthy (its sync loop included).
func (c *Client) Healthz(ctx context.Context, n Node) error {
	a, err := c.get(ctx, n, "/healthz", "", maxHealthz)
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(a.body)) != "ok" {
		return c.bad(n, "/healthz", a, "answered %q, not ok", snippet(a.body))
	}
	return nil
}

// Status is what /statusz says of the kubelet process.
type Status struct {
	// StartTime is when the process started, to the second.
	StartTime        time.Time `json:"startTime"`
	BinaryVersion    string    `json:"binaryVersion"`
	EmulationVersion string    `json:"emulationVersion,omitempty"`
	GoVersion        string    `json:"goVersion,omitempty"`
	// Form is how it was served: "config.k8s.io/v1beta1 Statusz" or
	// "text/plain".
	Form string `json:"form"`
}

// Statusz reads the kubelet's /statusz (served from 1.33 under
// ComponentStatusz: beta and on by default from 1.36).
func (c *Client) Statusz(ctx context.Context, n Node) (*Status, error) {
	a, err := c.structured(ctx, n, "/statusz", statuszAccept, maxStatusz)
	if err != nil {
		return nil, err
	}
	var st *Status
	if isJSON(a.contentType) {
		st, err = parseStatuszJSON(a.body)
	} else {
		st, err = parseStatuszText(a.body)
	}
	if err != nil {
		return nil, c.bad(n, "/statusz", a, "%v", err)
	}
	return st, nil
}

// structured asks for the structured answer, and for text/plain when the
// kubelet does not serve it (406).
func (c *Client) structured(ctx context.Context, n Node, path, accept string, limit int64) (*answer, error) {
	a, err := c.get(ctx, n, path, accept, limit)
	if e, ok := err.(*Error); ok && e.Status == 406 {
		a, err = c.get(ctx, n, path, "text/plain", limit)
	}
	return a, err
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

func (c *Client) bad(n Node, path string, a *answer, format string, args ...any) *Error {
	return &Error{Node: n.Name, Path: path, Via: c.via, URL: a.url, Reason: BadAnswer, Status: 200, Message: fmt.Sprintf(format, args...)}
}

func parseStatuszJSON(body []byte) (*Status, error) {
	var s struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Status
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("not a Statusz object: %v", err)
	}
	if s.Kind != "Statusz" || !strings.HasPrefix(s.APIVersion, "config.k8s.io/") {
		return nil, fmt.Errorf("not a Statusz object: kind %q, apiVersion %q", snippet([]byte(s.Kind)), snippet([]byte(s.APIVersion)))
	}
	if s.StartTime.IsZero() || s.BinaryVersion == "" {
		return nil, fmt.Errorf("Statusz without startTime or binaryVersion")
	}
	st := s.Status
	st.Form = s.APIVersion + " Statusz"
	return &st, nil
}

// parseStatuszText reads the text form: "Started<sep> <date>" and
// "Binary version<sep> <v>" lines, the separator picked at random by the
// kubelet (":", ": ", "=", " ").
func parseStatuszText(body []byte) (*Status, error) {
	st := &Status{Form: "text/plain"}
	for _, line := range strings.Split(string(body), "\n") {
		for key, set := range map[string]func(string) error{
			"Started": func(v string) error {
				t, err := time.Parse(time.UnixDate, v)
				st.StartTime = t
				return err
			},
			"Binary version":    func(v string) error { st.BinaryVersion = v; return nil },
			"Emulation version": func(v string) error { st.EmulationVersion = v; return nil },
			"Go version":        func(v string) error { st.GoVersion = v; return nil },
		} {
			rest, ok := strings.CutPrefix(line, key)
			if !ok || rest == "" || !strings.ContainsRune(":= ", rune(rest[0])) {
				continue
			}
			if err := set(html.UnescapeString(strings.TrimSpace(strings.TrimLeft(rest, ":=")))); err != nil {
				return nil, fmt.Errorf("%s: %v", key, err)
			}
		}
	}
	if st.StartTime.IsZero() || st.BinaryVersion == "" {
		return nil, fmt.Errorf("no Started or Binary version line: %s", snippet(body))
	}
	return st, nil
}
