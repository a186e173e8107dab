package apply

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")

	changed, err := WriteFile(p, []byte("a: 1\n"))
	if err != nil || !changed {
		t.Fatalf("new file: changed=%v err=%v", changed, err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("a new config file is %v, want 0600", st.Mode().Perm())
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if changed, err := WriteFile(p, []byte("a: 2\n")); err != nil || !changed {
		t.Fatalf("replace: changed=%v err=%v", changed, err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("the replaced file's mode is %v, want it kept at 0640", st.Mode().Perm())
	}
	if got, _ := os.ReadFile(p); string(got) != "a: 2\n" {
		t.Errorf("content %q", got)
	}
	before, _ := os.Stat(p)
	time.Sleep(10 * time.Millisecond)
	if changed, err := WriteFile(p, []byte("a: 2\n")); err != nil || changed {
		t.Fatalf("same bytes: changed=%v err=%v, want no write", changed, err)
	}
	if after, _ := os.Stat(p); !after.ModTime().Equal(before.ModTime()) {
		t.Error("equal content was rewritten")
	}
	assertNoTemp(t, dir)
}

func TestWriteFileRefusesLinksAndDirectories(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "config.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFile(link, []byte("x\n")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("symlink target: err = %v, want ErrNotRegular", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "keep\n" {
		t.Error("the file behind the symlink was changed")
	}
	if _, err := WriteFile(dir, []byte("x\n")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: err = %v, want ErrNotRegular", err)
	}
	assertNoTemp(t, dir)
}

func TestWriteFileFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(p, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A directory that cannot hold the temporary file.
	if _, err := WriteFile(filepath.Join(dir, "missing", "config.yaml"), []byte("x")); err == nil {
		t.Fatal("writing into a missing directory should fail")
	}
	if got, _ := os.ReadFile(p); string(got) != "old\n" {
		t.Error("the old file was touched")
	}
	assertNoTemp(t, dir)
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".kubeletcfg-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestBackupNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	day := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	var names []string
	for i, content := range []string{"one\n", "two\n", "three\n"} {
		if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		name, err := Backup(p, day)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(name))
		if got, _ := os.ReadFile(name); string(got) != content {
			t.Errorf("backup %d holds %q, want %q", i, got, content)
		}
		if st, _ := os.Stat(name); st.Mode().Perm() != 0o640 {
			t.Errorf("backup mode %v, want 0640", st.Mode().Perm())
		}
	}
	want := []string{"config.yaml.bak.20261129T100000.000000000Z", "config.yaml.bak.20261129T100000.000000000Z.1", "config.yaml.bak.20261129T100000.000000000Z.2"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("backup names %v, want %v", names, want)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, want[0])); string(got) != "one\n" {
		t.Error("the first backup was overwritten")
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, lockName)
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	l, err := Acquire(dir, "kubeletcfg apply --node n1", now)
	if err != nil {
		t.Fatal(err)
	}
	// A second apply, in another process, is refused with the holder named.
	out, err := exec.Command("flock", "-n", p, "true").CombinedOutput()
	if err == nil {
		t.Fatalf("another process took the held lock: %s", out)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("flock", "-n", p, "true").CombinedOutput(); err != nil {
		t.Fatalf("the released lock is still held: %v %s", err, out)
	}
}

func TestLockHeldByAnotherProcessNamesItAndDiesWithIt(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, lockName)
	if err := os.WriteFile(p, []byte("kubeletcfg apply --node n1, pid 4242, since 2026-11-29T10:00:00Z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("flock", p, "sleep", "60")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // flock and its sleep, killed together
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-holder.Process.Pid, syscall.SIGKILL)
	// Wait until the other process holds it.
	for deadline := time.Now().Add(5 * time.Second); exec.Command("flock", "-n", p, "true").Run() == nil; {
		if time.Now().After(deadline) {
			t.Fatal("the other process never took the lock")
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, err := Acquire(dir, "second", time.Now())
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid 4242") {
		t.Fatalf("err = %v, want ErrLocked naming the holder", err)
	}
	// kill -9 of the holder frees the lock: nothing stays stuck.
	_ = syscall.Kill(-holder.Process.Pid, syscall.SIGKILL)
	_ = holder.Wait()
	// The kernel drops the lock when the last holder (the sleep) has exited.
	var l *Lock
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if l, err = Acquire(dir, "third", time.Now()); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	l.Release()
}

// Extended attributes (the SELinux label among them) stay on a replaced
// file and on its backup.
func TestWriteFileKeepsXattrs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(p, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setxattr(p, "user.kubeletcfg-test", []byte("label"), 0); err != nil {
		t.Skipf("no user extended attributes here: %v", err)
	}
	b, err := Backup(p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFile(p, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p, b} {
		v := make([]byte, 64)
		n, err := syscall.Getxattr(f, "user.kubeletcfg-test", v)
		if err != nil || string(v[:n]) != "label" {
			t.Errorf("%s: attribute %q, %v; want it kept", f, v[:max(n, 0)], err)
		}
	}
}
