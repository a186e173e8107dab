package why

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The one-pass scanner reads what encoding/json reads, in journalctl's
// spacing ("KEY" : "value"), with escapes, byte arrays and nulls; what is
// not a flat object is refused.
func TestScanRecord(t *testing.T) {
	for _, line := range []string{
		`{ "__CURSOR" : "s=1;i=2", "__REALTIME_TIMESTAMP" : "1700000000000000", "_PID" : "42", "_COMM" : "kubelet", "_SYSTEMD_UNIT" : "kubelet.service", "MESSAGE" : "E1203 13:35:43.822523      42 run.go:72] \"command failed\" err=\"a\\tb \\u00e9 \\\\\"", "_BOOT_ID" : "b" }`,
		`{"_PID":"1","UNIT":"kubelet.service","MESSAGE":[255,254,0,1],"MESSAGE_ID":"98e322203f7a4ed290d09fe03c09fe15","EXIT_CODE":"killed","EXIT_STATUS":"9"}`,
		`{"_PID":"7","MESSAGE":null,"INVOCATION_ID":"x","UNIT_RESULT":"oom-kill","JOB_TYPE":"stop","JOB_RESULT":"done","_SYSTEMD_INVOCATION_ID":"y"}`,
		`{}`,
	} {
		var want, got record
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatal(err)
		}
		if !scanRecord([]byte(line), &got) {
			t.Errorf("refused %s", line)
			continue
		}
		want.decode("kubelet.service")
		got.decode("kubelet.service")
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(record{}), cmp.Comparer(func(a, b json.RawMessage) bool { return journalMessage(a) == journalMessage(b) })); diff != "" {
			t.Errorf("%s (-json +scan):\n%s", line, diff)
		}
	}
	for _, bad := range []string{``, `not json`, `{"a":`, `{"a":"b"`, `{"a" "b"}`, `{"a":[1,"x"]}`, `{"a":{"b":1}}`, `["a"]`} {
		var r record
		if scanRecord([]byte(bad), &r) {
			t.Errorf("took %q", bad)
		}
	}
}
