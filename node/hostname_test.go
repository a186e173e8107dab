package node

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestHostnameOfAnImage(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "hostname")
	if err := os.WriteFile(outside, []byte("outside\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		setup   func(etc string) error
		want    string
		wantErr string
	}{
		{"a name", func(etc string) error {
			return os.WriteFile(filepath.Join(etc, "hostname"), []byte("# c\n\nworker-3\n"), 0o644)
		}, "worker-3", ""},
		{"no file", func(string) error { return nil }, "", "the image has no /etc/hostname"},
		{"only comments", func(etc string) error { return os.WriteFile(filepath.Join(etc, "hostname"), []byte("# c\n"), 0o644) }, "", "names none"},
		{"a link out of the image", func(etc string) error { return os.Symlink(outside, filepath.Join(etc, "hostname")) }, "", "the image has no /etc/hostname"},
		{"a FIFO", func(etc string) error { return syscall.Mkfifo(filepath.Join(etc, "hostname"), 0o600) }, "", "a FIFO"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			etc := filepath.Join(root, "etc")
			if err := os.MkdirAll(etc, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.setup(etc); err != nil {
				t.Fatal(err)
			}
			got, err := Hostname(root)
			if got != tc.want || (tc.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Hostname = %q, %v; want %q, error with %q", got, err, tc.want, tc.wantErr)
			}
			if err != nil && strings.Contains(tc.wantErr, "no /etc/hostname") && !errors.Is(err, ErrNoHostname) {
				t.Errorf("error %v is not ErrNoHostname", err)
			}
		})
	}
}
