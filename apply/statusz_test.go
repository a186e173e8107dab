package apply

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
)

// /statusz proves the restart where served: the start time moved, and is
// the pinned process's; a contradiction rolls back; a kubelet that does not
// serve it leaves the proof to the process.
func TestRunStatusz(t *testing.T) {
	n := newNode(t, nil)
	n.kubelet.startedAt = n.clock.Now().Add(-time.Hour)
	var answer func() (*kubeletapi.Status, error)
	truthful := func() (*kubeletapi.Status, error) {
		return &kubeletapi.Status{StartTime: n.kubelet.startedAt.Truncate(time.Second), BinaryVersion: "1.37.2"}, nil
	}
	reads := 0
	n.opts.Statusz = func(context.Context) (*kubeletapi.Status, error) { reads++; return answer() }
	n.opts.started = func(int) time.Time { return n.kubelet.startedAt }

	answer = truthful
	out, err := n.apply(t, "maxPods: 111\n")
	if err != nil || out.Statusz == nil || !out.Statusz.Proven || !strings.Contains(out.Statusz.Said, "after the old kubelet's") || reads != 2 {
		t.Fatalf("a restart /statusz proves: %+v %v (%d reads)", out.Statusz, err, reads)
	}
	// Within the second the old kubelet started: the process proves it.
	n.kubelet.startedAt = n.clock.Now()
	out, err = n.apply(t, "maxPods: 112\n")
	if err != nil || out.Statusz.Proven || !strings.Contains(out.Statusz.Said, "proven by the pinned process") {
		t.Fatalf("a restart within the second: %+v %v", out.Statusz, err)
	}
	// A kubelet whose start time is not the pinned process's: rolled back.
	answer = func() (*kubeletapi.Status, error) {
		return &kubeletapi.Status{StartTime: n.kubelet.startedAt.Add(-time.Minute).Truncate(time.Second), BinaryVersion: "1.37.2"}, nil
	}
	n.kubelet.startedAt = n.clock.Now().Add(-time.Hour)
	out, err = n.apply(t, "maxPods: 113\n")
	if !errors.Is(err, ErrRolledBack) || !strings.Contains(out.Cause, "/statusz") {
		t.Fatalf("a contradiction: %+v %v", out, err)
	}
	n.configIs(t, "maxPods: 112\n")
	// Not served, or refused: applied, and said.
	answer = func() (*kubeletapi.Status, error) {
		return nil, &kubeletapi.Error{Node: "n1", Path: "/statusz", Reason: kubeletapi.NotServed, Message: "404 Not Found"}
	}
	out, err = n.apply(t, "maxPods: 114\n")
	if err != nil || out.Statusz == nil || !strings.Contains(out.Statusz.Unread, "not-served") || !strings.Contains(out.Statusz.String(), "by the process alone") {
		t.Fatalf("not served: %+v %v", out.Statusz, err)
	}
	// Another node's kubelet answering: rolled back.
	answer = func() (*kubeletapi.Status, error) {
		return nil, &kubeletapi.Error{Node: "n1", Path: "/statusz", Reason: kubeletapi.OtherNode, Message: "the serving certificate is node \"n2\"'s"}
	}
	out, err = n.apply(t, "maxPods: 115\n")
	if !errors.Is(err, ErrRolledBack) || !strings.Contains(out.Cause, `node "n2"`) {
		t.Fatalf("another node: %+v %v", out, err)
	}
}

func TestProcessStarted(t *testing.T) {
	self := processStarted(os.Getpid())
	if self.IsZero() || self.After(time.Now()) || time.Since(self) > time.Hour {
		t.Errorf("this test process started at %s", self)
	}
	if !processStarted(0).IsZero() {
		t.Error("pid 0 has a start time")
	}
}
