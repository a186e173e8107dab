package hostile

import "strings"

func init() { hostileCases = append(hostileCases, whyCases...) }

// A kubelet's journal records as journalctl -o json writes them.
const (
	kubeletRec = `{"_PID":"42","_COMM":"kubelet","_SYSTEMD_UNIT":"kubelet.service","_SYSTEMD_INVOCATION_ID":"aa","_BOOT_ID":"b","__REALTIME_TIMESTAMP":"1700000000000000","MESSAGE":`
	failedRec  = kubeletRec + `"E1203 13:35:43.822523      42 run.go:72] \"command failed\" err=\"failed to parse kubelet flag: unknown flag: --no-such-flag\""}`
	// journal is a journalctl that answers each of why's queries with
	// RUN for the kubelet's process (its newest record: failedRec).
	journalScript = `case "$*" in
*--reverse*) echo '` + failedRec + `' ;;
*_PID=1*) ;;
*) RUN ;;
esac
`
	wr = "--kubelet-version=1.37"
)

func journal(run string) map[string]string {
	return map[string]string{"journalctl": strings.Replace(journalScript, "RUN", run, 1)}
}

var imageJournal = map[string]string{"var/lib/kubelet/config.yaml": head, "var/log/journal/m/system.journal": ""}

var whyCases = []hostileCase{
	// --kubelet-log: what is not a regular file is refused; a huge,
	// binary or truncated log is read within bounds.
	{name: "why --kubelet-log /dev/zero", args: []string{"why", wr, "--kubelet-log", "/dev/zero", "--"}, code: 2,
		want: []string{"/dev/zero: a character device, not a regular file"}},
	{name: "why --kubelet-log a FIFO", in: map[string]string{"fifo": "<fifo>"}, args: []string{"why", wr, "--kubelet-log", "@I/fifo", "--"}, code: 2,
		want: []string{"@I/fifo: a FIFO"}},
	{name: "why --kubelet-log of 1 GiB of zero bytes: its last 32 MiB are read",
		in:   map[string]string{"k.log": "<sparse 1073741824>\nE1203 13:35:43.822523      42 run.go:72] \"command failed\" err=\"failed to parse kubelet flag: unknown flag: --no-such-flag\"\n"},
		args: []string{"why", wr, "--kubelet-log", "@I/k.log", "-o", "json", "--"}, code: 1,
		stdout: []string{`"class": "flag-unknown"`, `"truncated": true`}},
	{name: "why --kubelet-log: binary bytes and a 10 MiB line around the kubelet's words",
		gen:  map[string]func() []byte{"in/k.log": binaryLog},
		args: []string{"why", wr, "--kubelet-log", "@I/k.log", "--"}, code: 1,
		want: []string{"unknown flag (flag-unknown)"}},
	{name: "why --kubelet-log: a panic of 100,000 lines",
		gen:  map[string]func() []byte{"in/k.log": longPanic},
		args: []string{"why", wr, "--kubelet-log", "@I/k.log", "-o", "json", "--"}, code: 1,
		stdout: []string{`"class": "gate-unknown"`, `"panicLines": 100001`}},
	{name: "why --kubelet-log: a value cut off at the end",
		in:   map[string]string{"k.log": "E1203 13:35:43.822523      42 run.go:72] \"command failed\" err=<\n\tfailed to parse kubelet flag: unknown flag: --no-such-flag\n"},
		args: []string{"why", wr, "--kubelet-log", "@I/k.log", "--"}, code: 1,
		want: []string{"unknown flag (flag-unknown)"}},
	{name: "why --kubelet-log: lines of another process are not told apart, and it says so",
		in: map[string]string{"k.log": "E1203 13:35:43.822523      42 run.go:72] \"command failed\" err=\"failed to parse kubelet flag: unknown flag: --no-such-flag\"\n" +
			"E1203 13:35:44.822523      77 run.go:72] \"command failed\" err=\"failed to run Kubelet: running with swap on is not supported, please disable swap or set --fail-swap-on flag to false\"\n"},
		args: []string{"why", wr, "--kubelet-log", "@I/k.log", "--"}, code: 1,
		want: []string{"swap on with failSwapOn (swap-on)", "cannot tell the kubelet's lines from lines another process wrote"}},
	// The journal: journalctl's output bounded; only the kubelet's own
	// process counts.
	{name: "why: journalctl writes without end", root: imageJournal, progs: map[string]string{"journalctl": "yes '" + failedRec + "'\n"},
		args: []string{"why", wr, "--root", "@R"}, code: 1,
		want: []string{"unknown flag (flag-unknown)", "stopped reading the journal"}},
	{name: "why: journalctl hangs", root: imageJournal, progs: journal("echo '" + failedRec + "'; exec sleep 60"),
		args: []string{"why", wr, "--root", "@R", "--timeout", "2s"}, code: 1,
		want: []string{"unknown flag (flag-unknown)", "stopped reading the journal at the time limit"}},
	{name: "why: a panic of 100,000 records in the journal", root: imageJournal,
		progs: journal(`echo '` + kubeletRec + `"panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: unrecognized feature gate: Nope"}'; echo '` + kubeletRec + `""}'; seq 100000 | sed 's/.*/` + strings.ReplaceAll(kubeletRec, "/", `\/`) + `"\\tk8s.io\/kubernetes\/pkg\/kubelet.Run(0xc0000)"}/'`),
		args:  []string{"why", wr, "--root", "@R", "-o", "json"}, code: 1,
		stdout: []string{`"class": "gate-unknown"`, `"panicLines": 100001`, `"trusted": true`}},
	{name: "why: records of other processes that say the kubelet's words are not taken", root: imageJournal,
		progs: journal(`echo '{"_PID":"77","_COMM":"logger","_SYSTEMD_UNIT":"session-1.scope","UNIT":"kubelet.service","MESSAGE":"E1203 13:35:43.822523      42 run.go:72] \"command failed\" err=\"failed to run Kubelet: running with swap on is not supported\""}'; echo '` + failedRec + `'; echo '{"_PID":"43","_COMM":"kubelet","_SYSTEMD_UNIT":"kubelet.service","MESSAGE":"E1203 13:35:43.822523      43 run.go:72] \"command failed\" err=\"failed to run Kubelet: running with swap on is not supported\""}'`),
		args:  []string{"why", wr, "--root", "@R"}, code: 1,
		want: []string{"unknown flag (flag-unknown)"}},
	{name: "why: binary messages and garbage records", root: imageJournal,
		progs: journal(`echo '` + kubeletRec + `[255,254,0,1]}'; echo 'not json'; head -c 100000 /dev/urandom | tr -d '\n'; echo; echo '` + failedRec + `'`),
		args:  []string{"why", wr, "--root", "@R"}, code: 1,
		want: []string{"unknown flag (flag-unknown)"}},
	// --root: the image's journal files, never through a link out of it.
	{name: "why --root: /var/log/journal a link out of the root", root: map[string]string{"var/log/journal": "-> @O"},
		progs: journal("echo"), args: []string{"why", wr, "--root", "@R"}, code: 2,
		want: []string{"no journal files under /var/log/journal"}},
	{name: "why --root: a journal file linked to a FIFO outside", root: map[string]string{"var/log/journal/m/system.journal": "-> @O/fifo"},
		progs: journal("echo"), args: []string{"why", wr, "--root", "@R"}, code: 2,
		want: []string{"no journal files under /var/log/journal"}},
	// preflight under --root: files through the image's links only.
	{name: "preflight --root: a client CA linked out of the root", sample: true,
		root: map[string]string{"etc/kubernetes/pki/ca.crt": "-> @O/config.yaml", "etc/systemd/logind.conf": "-> @O/fifo"},
		args: []string{"preflight", V, "--root", "@R"}, code: 1,
		want: []string{"refused   client-ca-missing", "condition swap-on"}},
}

func binaryLog() []byte {
	var b []byte
	for i := 0; i < 1<<20; i++ {
		b = append(b, byte(i*7), byte(i>>3))
	}
	b = append(b, '\n')
	b = append(b, []byte(strings.Repeat("x", 10<<20))...)
	b = append(b, '\n')
	return append(b, "E1203 13:35:43.822523      42 run.go:72] \"command failed\" err=\"failed to parse kubelet flag: unknown flag: --no-such-flag\"\n"...)
}

func longPanic() []byte {
	var b strings.Builder
	b.WriteString("I1203 13:35:43.822523      42 server.go:1] \"Kubelet version\" kubeletVersion=\"v1.37.2\"\n")
	b.WriteString("panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: unrecognized feature gate: Nope\n\n")
	for i := 0; i < 100000; i++ {
		b.WriteString("\tk8s.io/kubernetes/pkg/kubelet.(*Kubelet).Run(0xc000123456, 0x1)\n")
	}
	return []byte(b.String())
}
