package validate

import (
	"testing"

	"github.com/kubeletcfg/kubeletcfg/schema"
)

func TestEveryChangeHasAKnownRelease(t *testing.T) {
	for ch := cgroupV1Unsupported; ch <= containerLogMaxFilesOne; ch++ {
		minor, ok := since[ch]
		if !ok {
			t.Errorf("change %d has no release", ch)
			continue
		}
		v, err := schema.Resolve(minor)
		if err != nil {
			t.Errorf("change %d: %v", ch, err)
			continue
		}
		if !has(v, ch) {
			t.Errorf("change %d: kubelet %s does not have it", ch, minor)
		}
	}
	if len(since) != int(containerLogMaxFilesOne)+1 {
		t.Errorf("since has %d entries for %d changes", len(since), containerLogMaxFilesOne+1)
	}
}
