// Package testkit holds the fixtures the tests of more than one package
// use (the e2e tests, fleet's fake API server, node's proxy test, the
// Ansible harness, the migrate corpus): a kubeconfig file and a copy of a
// node tree. The shipped binary does not import it.
package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Kubeconfig is a kubeconfig with one cluster, one user and the context
// that joins them.
type Kubeconfig struct {
	Server string
	// CAFile is the cluster's CA; without it the server's certificate is
	// not checked (insecure-skip-tls-verify).
	CAFile string
	// Token, or ClientCert and ClientKey, authenticate the user.
	Token, ClientCert, ClientKey string
}

// String is the kubeconfig's YAML.
func (k Kubeconfig) String() string {
	q := strconv.Quote
	cluster := "{server: " + q(k.Server) + ", insecure-skip-tls-verify: true}"
	if k.CAFile != "" {
		cluster = "{server: " + q(k.Server) + ", certificate-authority: " + q(k.CAFile) + "}"
	}
	var user []string
	if k.Token != "" {
		user = append(user, "token: "+q(k.Token))
	}
	if k.ClientCert != "" {
		user = append(user, "client-certificate: "+q(k.ClientCert), "client-key: "+q(k.ClientKey))
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: %s
users:
- name: u
  user: {%s}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`, cluster, strings.Join(user, ", "))
}

// Write writes the kubeconfig to path, mode 0600.
func (k Kubeconfig) Write(path string) error {
	return os.WriteFile(path, []byte(k.String()), 0o600)
}

// CopyTree copies the directories and regular files under src to dst (files
// 0644, directories 0755); a link or another kind of file is an error.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		default:
			return fmt.Errorf("copy %s: not a regular file or a directory", p)
		}
	})
}

// WriteTree writes files (a path relative to dir: its content) under dir,
// making the directories they need (files 0644, directories 0755).
func WriteTree(dir string, files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}
