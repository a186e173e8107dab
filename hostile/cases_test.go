package hostile

import "strings"

// hostileCases: each runs kubeletcfg once. Paths: @R the node image, @I
// other inputs, @O the sentinels outside the root (see sentinels).
var hostileCases = []hostileCase{
	// Unbounded reads: devices, FIFOs and huge files are refused, exit 2.
	{name: "validate /dev/zero", args: []string{"validate", V, "/dev/zero"}, code: 2,
		want: []string{"/dev/zero: a character device, not a regular file"}},
	{name: "validate /dev/urandom", args: []string{"validate", V, "/dev/urandom"}, code: 2,
		want: []string{"/dev/urandom: a character device"}},
	{name: "validate a FIFO", in: map[string]string{"fifo": "<fifo>"}, args: []string{"validate", V, "@I/fifo"}, code: 2,
		want: []string{"@I/fifo: a FIFO, not a regular file"}},
	{name: "validate a directory", in: map[string]string{"d": "<dir>"}, args: []string{"validate", V, "@I/d"}, code: 2,
		want: []string{"@I/d: a directory"}},
	{name: "validate a 6 MiB file", gen: map[string]func() []byte{"in/big.yaml": repeat("#2345678\n", 6<<20/9)},
		args: []string{"validate", V, "@I/big.yaml"}, code: 2,
		want: []string{"@I/big.yaml: the file is 6.0 MiB; kubeletcfg reads at most 4 MiB of a kubelet configuration file (kubeletcfg's limit, not the kubelet's)"}},
	{name: "validate -o json of /dev/zero answers in JSON", args: []string{"validate", V, "-o", "json", "/dev/zero"}, code: 2,
		stdout: []string{`"error": "read /dev/zero: a character device`}},
	{name: "effective --config /dev/zero", args: []string{"effective", V, "--config", "/dev/zero"}, code: 2,
		want: []string{"/dev/zero: a character device"}},
	{name: "effective with a drop-in that is /dev/zero", in: map[string]string{"c.yaml": head, "d/10.conf": "-> /dev/zero"},
		args: []string{"effective", "--kubelet-version=1.37", "--config", "@I/c.yaml", "--config-dir", "@I/d"}, code: 2,
		want: []string{"@I/d/10.conf: a character device"}},
	{name: "diff NEW=/dev/zero", in: map[string]string{"c.yaml": head}, args: []string{"diff", V, "/dev/zero", "--against", "@I/c.yaml"}, code: 2,
		want: []string{"/dev/zero: a character device"}},
	{name: "diff --against a FIFO", in: map[string]string{"c.yaml": head, "fifo": "<fifo>"}, args: []string{"diff", V, "@I/c.yaml", "--against", "@I/fifo"}, code: 2,
		want: []string{"@I/fifo: a FIFO"}},
	{name: "migrate --from /dev/zero", args: []string{"migrate", V, "--from", "/dev/zero"}, code: 2,
		want: []string{"/dev/zero: a character device"}},
	{name: "migrate --from a 5 MiB env file", gen: map[string]func() []byte{"in/big.env": repeat("A=123456789\n", 5<<20/12)},
		args: []string{"migrate", V, "--from", "@I/big.env"}, code: 2,
		want: []string{"kubeletcfg reads at most 4 MiB of a environment file"}},
	{name: "apply -f /dev/zero", sample: true, args: []string{"apply", V, "--dry-run", "--root", "@R", "--node", "n", "-f", "/dev/zero"}, code: 2,
		want: []string{"/dev/zero: a character device"}},
	{name: "apply -f broken.yaml names the -f file", sample: true, in: map[string]string{"broken.yaml": head + "maxPods: [\n"},
		args: []string{"apply", V, "--dry-run", "--root", "@R", "--node", "node-1", "-f", "@I/broken.yaml"}, code: 2,
		want: []string{"the new configuration: @I/broken.yaml:3: not valid YAML"}},
	{name: "apply -f with an unknown field names the -f file", sample: true, in: map[string]string{"new.yaml": head + "maxPodz: 4\n"},
		args: []string{"apply", V, "--dry-run", "--root", "@R", "--node", "node-1", "-f", "@I/new.yaml"}, code: 2,
		want: []string{"@I/new.yaml:3:1: maxPodz: unknown field"}},
	{name: "apply: image's /etc/hostname a FIFO", sample: true, root: map[string]string{"etc/hostname": "-> /dev/zero", "dev/zero": "<fifo>"},
		in: map[string]string{"c.yaml": head}, args: []string{"apply", V, "--dry-run", "--root", "@R", "--node", "n", "-f", "@I/c.yaml"}, code: 2,
		want: []string{"the node's name: read /etc/hostname: a FIFO"}},
	{name: "apply: image's /etc/hostname of 1 MiB", sample: true, gen: map[string]func() []byte{"root/etc/hostname": repeat("n", 1<<20)},
		in: map[string]string{"c.yaml": head}, args: []string{"apply", V, "--dry-run", "--root", "@R", "--node", "n", "-f", "@I/c.yaml"}, code: 2,
		want: []string{"kubeletcfg reads at most 64 KiB of a hostname file"}},
	{name: "apply: image's /etc/hostname a link out of the root", sample: true, root: map[string]string{"etc/hostname": "-> @O/etc/hostname"},
		in: map[string]string{"c.yaml": head}, args: []string{"apply", V, "--dry-run", "--force-unmanaged", "--root", "@R", "--node", "n", "-f", "@I/c.yaml"}, code: 1,
		want: []string{"the node's name is not known (no --hostname-override, no /etc/hostname in the image): taking --node n"}},
	{name: "apply: an image without /etc/hostname takes --node", sample: true, root: map[string]string{"etc/hostname": "-> /nowhere"},
		in: map[string]string{"c.yaml": head}, args: []string{"apply", V, "--dry-run", "--force-unmanaged", "--root", "@R", "--node", "n", "-f", "@I/c.yaml"}, code: 1,
		want: []string{"taking --node n", `cgroupDriver: "systemd" -> "cgroupfs"`}},
	{name: "apply: image's /etc/hostname a directory", sample: true, root: map[string]string{"etc/hostname": "<dir>"},
		in: map[string]string{"c.yaml": head}, args: []string{"apply", V, "--dry-run", "--root", "@R", "--node", "n", "-f", "@I/c.yaml"}, code: 2,
		want: []string{"the node's name: read /etc/hostname: a directory"}},
	{name: "apply --dropin: a device and a FIFO not named *.conf in the --config-dir are not read",
		in:   map[string]string{"c.yaml": head, "d/10.conf": head, "d/notes.txt": "-> /dev/zero", "d/fifo": "<fifo>", "d/sub/urandom": "-> /dev/urandom", "new.conf": head + "maxPods: 9\n"},
		args: []string{"apply", "--kubelet-version=1.37", "--dry-run", "--node", "@H", "--dropin", "50-new.conf=@I/new.conf", "--", "--config=@I/c.yaml", "--config-dir=@I/d"}, code: 1,
		stdout: []string{"maxPods: 110 -> 9"}},
	{name: "apply --dropin: a drop-in linked to the sentinel FIFO is not opened through the copy",
		in:   map[string]string{"c.yaml": head, "d/10.conf": head, "d/x.yaml": "-> @O/fifo", "new.conf": head + "maxPods: 9\n"},
		args: []string{"apply", "--kubelet-version=1.37", "--dry-run", "--node", "@H", "--dropin", "50-new.conf=@I/new.conf", "--", "--config=@I/c.yaml", "--config-dir=@I/d"}, code: 1,
		stdout: []string{"maxPods: 110 -> 9"}},
	{name: "apply --dropin NAME=broken.conf names the file given",
		in:   map[string]string{"c.yaml": head, "d/10.conf": head, "bad.conf": head + "maxPods: [\n", "new.conf": head},
		args: []string{"apply", "--kubelet-version=1.37", "--dry-run", "--node", "@H", "--dropin", "50-new.conf=@I/bad.conf", "--dropin", "60-more.conf=@I/new.conf", "--", "--config=@I/c.yaml", "--config-dir=@I/d"}, code: 2,
		want: []string{"failed to load kubelet dropin file, path: @I/bad.conf, error: @I/bad.conf:3: not valid YAML"}},
	// In an image, /dev/zero is the image's: a FIFO stands for a device there.
	{name: "image's config.yaml a link to /dev/zero", sample: true, root: map[string]string{"var/lib/kubelet/config.yaml": "-> /dev/zero", "dev/zero": "<fifo>"},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"@R/dev/zero: a FIFO"}},
	{name: "image's config.yaml a link to the host's /dev/zero", sample: true, root: map[string]string{"var/lib/kubelet/config.yaml": "-> /dev/zero"},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"@R/dev/zero: no such file or directory"}},
	{name: "image's dpkg status a link to /dev/zero", sample: true, root: map[string]string{"var/lib/dpkg/status": "-> /dev/zero", "dev/zero": "<fifo>"},
		args: []string{"effective", "--root", "@R"}, code: 2, want: []string{"/var/lib/dpkg/status: a FIFO"}},
	{name: "image's kubeadm-flags.env a FIFO", sample: true, root: map[string]string{"var/lib/kubelet/kubeadm-flags.env": "<fifo>"},
		args: []string{"effective", V, "--root", "@R"}, code: 0, want: []string{"EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env skipped: read /var/lib/kubelet/kubeadm-flags.env: a FIFO"}},
	{name: "image's /etc/default/kubelet a FIFO, required", root: map[string]string{
		"usr/lib/systemd/system/kubelet.service": "[Service]\nEnvironmentFile=/etc/default/kubelet\nExecStart=/usr/bin/kubelet $KUBELET_EXTRA_ARGS\n",
		"etc/default/kubelet":                    "<fifo>"},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"/etc/default/kubelet: a FIFO"}},
	{name: "image's unit a link to /dev/urandom", sample: true, root: map[string]string{"etc/systemd/system/kubelet.service": "-> /dev/urandom", "dev/urandom": "<fifo>"},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"/etc/systemd/system/kubelet.service: a FIFO"}},
	{name: "%H with /etc/hostname a link to /dev/zero", root: map[string]string{
		"etc/hostname":                           "-> /dev/zero",
		"dev/zero":                               "<fifo>",
		"usr/lib/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --hostname-override=%H\n"},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"/etc/hostname: a FIFO"}},

	{name: "diff --live --kubeconfig a FIFO", in: map[string]string{"c.yaml": head, "kc": "<fifo>"},
		args: []string{"diff", V, "--live", "--kubeconfig", "@I/kc", "--node", "n", "@I/c.yaml"}, code: 2, want: []string{"read @I/kc: a FIFO"}},
	{name: "diff --live --kubelet-ca /dev/zero", in: map[string]string{"c.yaml": head},
		args: []string{"diff", V, "--live", "--kubelet-url", "https://127.0.0.1:1/configz", "--kubelet-ca", "/dev/zero", "@I/c.yaml"}, code: 2, want: []string{"read /dev/zero: a character device"}},

	// Quadratic time: long continuations, many keys, long keys.
	{name: "ExecStart continued over 250,000 lines", gen: map[string]func() []byte{
		"root/usr/lib/systemd/system/kubelet.service": func() []byte {
			return []byte("[Service]\nExecStart=/usr/bin/kubelet \\\n" + strings.Repeat("a\\\n", 250000) + "\n")
		}},
		args: []string{"effective", V, "--root", "@R"}, code: 1, want: []string{"kubelet.service:2: \"a\": the kubelet takes no positional arguments"}},
	{name: "ExecStart continued past systemd's 1 MiB", gen: map[string]func() []byte{
		"root/usr/lib/systemd/system/kubelet.service": func() []byte {
			return []byte("[Service]\nExecStart=/usr/bin/kubelet \\\n" + strings.Repeat("ab\\\n", 400000) + "\n")
		}},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"kubelet.service:2: continued line too long"}},
	{name: "ExecStart continued over 100,000 lines", gen: map[string]func() []byte{
		"root/usr/lib/systemd/system/kubelet.service": func() []byte {
			return []byte("[Service]\nExecStart=/usr/bin/kubelet \\\n" + strings.Repeat("\\\n", 100000) + "--max-pods=7\n")
		}},
		args: []string{"effective", V, "--root", "@R"}, code: 0, stdout: []string{"maxPods: 7"}},
	{name: "30,000 unknown keys", gen: map[string]func() []byte{"in/c.yaml": func() []byte {
		var b strings.Builder
		b.WriteString(head)
		for i := range 30000 {
			b.WriteString("maxPodz" + strings.Repeat("x", i%20) + string(rune('a'+i%26)) + itoa(i) + ": 1\n")
		}
		return []byte(b.String())
	}},
		args: []string{"validate", V, "@I/c.yaml"}, code: 1, want: []string{"and 29900 more errors not shown"}},
	{name: "effective on 30,000 unknown keys", gen: map[string]func() []byte{"in/c.yaml": func() []byte {
		var b strings.Builder
		b.WriteString(head)
		for i := range 30000 {
			b.WriteString("k" + itoa(i) + ": 1\n")
		}
		return []byte(b.String())
	}},
		args: []string{"effective", V, "--config", "@I/c.yaml"}, code: 0, want: []string{"and 29900 more warnings not shown"}},
	{name: "a 1 MB key", gen: map[string]func() []byte{"in/c.yaml": func() []byte {
		return []byte(head + "? " + strings.Repeat("m", 1<<20) + "\n: 1\n")
	}},
		args: []string{"validate", V, "@I/c.yaml"}, code: 1, want: []string{"c.yaml:3:3: mmmm", "more bytes"}},
	{name: "an env file value continued over 200,000 lines", gen: map[string]func() []byte{"in/k.env": func() []byte {
		return []byte("KUBELET_EXTRA_ARGS=--max-pods=8 \\\n" + strings.Repeat(" \\\n", 200000) + "\n")
	}},
		args: []string{"effective", V, "--from", "@I/k.env"}, code: 0, stdout: []string{"maxPods: 8"}},
	{name: "a 3 MB flag in an env file is not echoed whole", gen: map[string]func() []byte{"in/k.env": func() []byte {
		return []byte("KUBELET_EXTRA_ARGS=--no-such-flag=" + strings.Repeat("z", 3<<20) + "\n")
	}},
		args: []string{"effective", V, "--from", "@I/k.env"}, code: 1, want: []string{"k.env:1 ($KUBELET_EXTRA_ARGS): \"--no-such-flag\": kubelet 1.31 has no such flag"}},
	{name: "100,000 flags in an env file", gen: map[string]func() []byte{"in/k.env": func() []byte {
		return []byte("KUBELET_EXTRA_ARGS=\"" + strings.Repeat("--max-pods=9 ", 100000) + "\"\n")
	}},
		args: []string{"effective", V, "--from", "@I/k.env"}, code: 0, stdout: []string{"maxPods: 9"}},
	{name: "100,000 node labels in one flag", gen: map[string]func() []byte{"in/k.env": manyLabels},
		args: []string{"effective", V, "--from", "@I/k.env"}, code: 0},
	{name: "migrate of 100,000 node labels", gen: map[string]func() []byte{"in/k.env": manyLabels},
		args: []string{"migrate", V, "--from", "@I/k.env"}, code: 0, want: []string{"# Remaining flags: --config=/var/lib/kubelet/config.yaml --node-labels=k0=v,k1=v", "more bytes"}},
	{name: "50,000 unknown feature gates in one flag", gen: map[string]func() []byte{"in/k.env": func() []byte {
		var b strings.Builder
		b.WriteString("KUBELET_EXTRA_ARGS=--feature-gates=")
		for i := range 50000 {
			b.WriteString("NoSuchGate" + itoa(i) + "=true,")
		}
		b.WriteString("Last=true\n")
		return []byte(b.String())
	}},
		args: []string{"effective", V, "--from", "@I/k.env"}, code: 1, want: []string{"NoSuchGate"}},
	{name: "50,000 eviction thresholds in one flag", gen: map[string]func() []byte{"in/k.env": func() []byte {
		var b strings.Builder
		b.WriteString("KUBELET_EXTRA_ARGS=--eviction-hard=")
		for i := range 50000 {
			b.WriteString("memory.available<" + itoa(i+1) + "Mi,")
		}
		b.WriteString("nodefs.available<5%\n")
		return []byte(b.String())
	}},
		args: []string{"effective", V, "--from", "@I/k.env"}, code: 0, stdout: []string{"nodefs.available: 5%"}},
	{name: "billion laughs", in: map[string]string{"c.yaml": head + laughs},
		args: []string{"validate", V, "@I/c.yaml"}, code: 1, want: []string{"c.yaml"}},
	{name: "deep nesting", gen: map[string]func() []byte{"in/c.yaml": func() []byte {
		return []byte(head + "x: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n")
	}},
		args: []string{"validate", V, "@I/c.yaml"}, code: 1, want: []string{"c.yaml"}},
	{name: "5000 unit drop-ins", root: manyDropins(5000),
		args: []string{"effective", V, "--root", "@R"}, code: 0, stdout: []string{"maxPods: 5"}},

	// Reads outside --root.
	{name: "--config=/../../.. in the image's ExecStart", root: map[string]string{
		"usr/lib/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --config=/../../../../../../../../..@O/config.yaml\n"},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"no such file or directory"}},
	{name: "the image's config.yaml an absolute link out", sample: true, root: map[string]string{"var/lib/kubelet/config.yaml": "-> @O/config.yaml"},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"no such file or directory"}},
	{name: "the image's config.yaml a relative link out", sample: true, root: map[string]string{"var/lib/kubelet/config.yaml": "-> ../../../../../../../../../../..@O/config.yaml"},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"no such file or directory"}},
	{name: "diff against the image's config.yaml linked out", sample: true, root: map[string]string{"var/lib/kubelet/config.yaml": "-> @O/config.yaml"},
		args: []string{"diff", V, "--root", "@R", "@R/new-config.yaml"}, code: 2, want: []string{"no such file or directory"}},
	{name: "the image's drop-in directory linked out", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env": "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d":     "-> @O/conf.d"},
		args: []string{"effective", "--kubelet-version=1.37", "--root", "@R"}, code: 2, want: []string{"failed to walk through kubelet dropin directory", "no such file or directory"}},
	{name: "the image's EnvironmentFile linked out", root: map[string]string{
		"usr/lib/systemd/system/kubelet.service": "[Service]\nEnvironmentFile=/etc/default/kubelet\nExecStart=/usr/bin/kubelet $KUBELET_EXTRA_ARGS\n",
		"etc/default/kubelet":                    "-> @O/kubelet.env"},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"/etc/default/kubelet"}},
	{name: "EnvironmentFile=/.. out of the image", root: map[string]string{
		"usr/lib/systemd/system/kubelet.service": "[Service]\nEnvironmentFile=/../../../../../../../..@O/kubelet.env\nExecStart=/usr/bin/kubelet $KUBELET_EXTRA_ARGS\n"},
		args: []string{"effective", V, "--root", "@R"}, code: 0, want: []string{`kubelet.service:2: EnvironmentFile=: path "/../`, `contains "..", ignoring`}},
	{name: "the image's unit linked out", root: map[string]string{"etc/systemd/system/kubelet.service": "-> @O/kubelet.service"},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"kubelet.service"}},
	{name: "--from a node path out of the image", args: []string{"effective", V, "--root", "@R", "--from", "/../../../../../../..@O/kubelet.env"}, code: 2,
		want: []string{"kubelet.env"}},
	{name: "the image's dpkg status linked out", sample: true, root: map[string]string{"var/lib/dpkg/status": "-> @O/var/lib/dpkg/status"},
		args: []string{"effective", "--root", "@R"}, code: 1, want: []string{"no dpkg database", "using kubelet 1.37"}},
	{name: "the image's hostname linked out for %H", root: map[string]string{
		"etc/hostname":                           "-> @O/etc/hostname",
		"usr/lib/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --hostname-override=%H\n"},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"/etc/hostname"}},
	{name: "a link loop", sample: true, root: map[string]string{"var/lib/kubelet/config.yaml": "-> /var/lib/kubelet/loop", "var/lib/kubelet/loop": "-> /var/lib/kubelet/config.yaml"},
		args: []string{"effective", V, "--root", "@R"}, code: 2, want: []string{"too many levels of symbolic links"}},
	{name: "migrate --root does not plan writes out", root: map[string]string{
		"usr/lib/systemd/system/kubelet.service": "[Service]\nEnvironmentFile=/../../../../../../../..@O/kubelet.env\nExecStart=/usr/bin/kubelet $KUBELET_EXTRA_ARGS\n"},
		args: []string{"migrate", V, "--root", "@R", "--output-dir", "@I/out"}, code: 0, want: []string{`contains "..", ignoring`}},

	// Drop-in files that are links: under --root each resolves inside the
	// image (an absolute target from the image's /, a ../ stays in it), for
	// every command that reads the drop-ins.
	{name: "effective: a drop-in file an absolute link out", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> @O/conf.d/50-out.conf"},
		args: []string{"effective", "--kubelet-version=1.37", "--root", "@R"}, code: 2, want: []string{"50-out.conf"}},
	{name: "migrate: a drop-in file an absolute link out", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> @O/conf.d/50-out.conf"},
		args: []string{"migrate", "--kubelet-version=1.37", "--root", "@R"}, code: 2, want: []string{"50-out.conf"}},
	{name: "diff: a drop-in file an absolute link out", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> @O/conf.d/50-out.conf"},
		args: []string{"diff", "--kubelet-version=1.31", "--root", "@R", "--to-version", "1.37"}, code: 2, want: []string{"50-out.conf"}},
	{name: "audit: a drop-in file an absolute link out", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> @O/conf.d/50-out.conf"},
		args: []string{"audit", "--kubelet-version=1.37", "--root", "@R"}, code: 2, want: []string{"50-out.conf"}},
	{name: "apply --dry-run: a drop-in file an absolute link out", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> @O/conf.d/50-out.conf"},
		args: []string{"apply", "--kubelet-version=1.37", "--dry-run", "--root", "@R", "--node", "node-1", "-f", "@R/new-config.yaml"}, code: 2, want: []string{"50-out.conf"}},
	{name: "effective: a drop-in file a relative link out", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> ../../../../../../../../../../..@O/conf.d/50-out.conf"},
		args: []string{"effective", "--kubelet-version=1.37", "--root", "@R"}, code: 2, want: []string{"50-out.conf"}},
	{name: "migrate: a drop-in file a relative link out", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> ../../../../../../../../../../..@O/conf.d/50-out.conf"},
		args: []string{"migrate", "--kubelet-version=1.37", "--root", "@R"}, code: 2, want: []string{"50-out.conf"}},
	{name: "diff: a drop-in file a relative link out", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> ../../../../../../../../../../..@O/conf.d/50-out.conf"},
		args: []string{"diff", "--kubelet-version=1.31", "--root", "@R", "--to-version", "1.37"}, code: 2, want: []string{"50-out.conf"}},
	{name: "audit: a drop-in file a relative link out", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> ../../../../../../../../../../..@O/conf.d/50-out.conf"},
		args: []string{"audit", "--kubelet-version=1.37", "--root", "@R"}, code: 2, want: []string{"50-out.conf"}},
	{name: "apply --dry-run: a drop-in file a relative link out", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> ../../../../../../../../../../..@O/conf.d/50-out.conf"},
		args: []string{"apply", "--kubelet-version=1.37", "--dry-run", "--root", "@R", "--node", "node-1", "-f", "@R/new-config.yaml"}, code: 2, want: []string{"50-out.conf"}},
	{name: "effective: a drop-in file a link to the FIFO outside", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> @O/conf.d/fifo.conf"},
		args: []string{"effective", "--kubelet-version=1.37", "--root", "@R"}, code: 2, want: []string{"50-out.conf"}},
	{name: "migrate: a drop-in file a link to the FIFO outside", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> @O/conf.d/fifo.conf"},
		args: []string{"migrate", "--kubelet-version=1.37", "--root", "@R"}, code: 2, want: []string{"50-out.conf"}},
	{name: "diff: a drop-in file a link to the FIFO outside", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> @O/conf.d/fifo.conf"},
		args: []string{"diff", "--kubelet-version=1.31", "--root", "@R", "--to-version", "1.37"}, code: 2, want: []string{"50-out.conf"}},
	{name: "audit: a drop-in file a link to the FIFO outside", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> @O/conf.d/fifo.conf"},
		args: []string{"audit", "--kubelet-version=1.37", "--root", "@R"}, code: 2, want: []string{"50-out.conf"}},
	{name: "apply --dry-run: a drop-in file a link to the FIFO outside", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> @O/conf.d/fifo.conf"},
		args: []string{"apply", "--kubelet-version=1.37", "--dry-run", "--root", "@R", "--node", "node-1", "-f", "@R/new-config.yaml"}, code: 2, want: []string{"50-out.conf"}},
	{name: "effective 1.28: a drop-in file an absolute link out", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":         "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/default/kubelet":                       "KUBELET_CONFIG_DROPIN_DIR_ALPHA=on\n",
		"etc/kubernetes/kubelet.conf.d/10-in.conf":  head + "maxPods: 66\n",
		"etc/kubernetes/kubelet.conf.d/50-out.conf": "-> @O/conf.d/50-out.conf"},
		args: []string{"effective", "--kubelet-version=1.28", "--root", "@R"}, code: 2, want: []string{"50-out.conf"}},
	{name: "effective: a drop-in file linked inside the image is read there", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env":        "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d/50-in.conf": "-> /etc/kubernetes/real/66.conf",
		"etc/kubernetes/real/66.conf":              head + "maxPods: 66\n",
		"etc/default/kubelet":                      ""},
		args: []string{"effective", "--kubelet-version=1.37", "--root", "@R"}, code: 0, stdout: []string{"maxPods: 66"}},

	// Same path semantics as the kubelet.
	{name: "--config-dir a link with a trailing slash is read", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env": "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d/\"\n",
		"etc/kubernetes/kubelet.conf.d":     "-> /etc/kubernetes/real.d",
		"etc/kubernetes/real.d/10.conf":     head + "maxPods: 66\n",
		"etc/default/kubelet":               ""},
		args: []string{"effective", "--kubelet-version=1.37", "--root", "@R"}, code: 0, stdout: []string{"maxPods: 66"}},

	{name: "--config-dir a link without a trailing slash is not read, and says so", sample: true, root: map[string]string{
		"var/lib/kubelet/kubeadm-flags.env": "KUBELET_KUBEADM_ARGS=\"--config-dir=/etc/kubernetes/kubelet.conf.d\"\n",
		"etc/kubernetes/kubelet.conf.d":     "-> /etc/kubernetes/real.d",
		"etc/kubernetes/real.d/10.conf":     head + "maxPods: 66\n",
		"etc/default/kubelet":               ""},
		args: []string{"effective", "--kubelet-version=1.37", "--root", "@R"}, code: 0, stdout: []string{"maxPods: 110"},
		want: []string{"--config-dir is a symbolic link: the kubelet reads no drop-in through it unless it ends in a slash"}},
	{name: "drop-ins not named *.conf are said to be skipped", in: map[string]string{"c.yaml": head,
		"d/10.yaml": head + "maxPods: 10\n", "d/30.CONF": head + "maxPods: 30\n", "d/20.conf": head + "maxPods: 20\n"},
		args: []string{"effective", "--kubelet-version=1.37", "--config", "@I/c.yaml", "--config-dir", "@I/d"}, code: 0,
		stdout: []string{"maxPods: 20"}, want: []string{"@I/d/10.yaml: not named *.conf", "@I/d/30.CONF: not named *.conf"}},

	// YAML merge keys, checked as the kubelet's YAML reader expands them.
	{name: "an unknown field in a merge key", in: map[string]string{"c.yaml": head + "<<: {maxPodz: 4}\n"},
		args: []string{"validate", V, "@I/c.yaml"}, code: 1, want: []string{`c.yaml:3:6: maxPodz: unknown field "maxPodz" (did you mean "maxPods"?)`}},
	{name: "a merge key overriding a field", in: map[string]string{"c.yaml": head + "maxPods: 5\n<<: {maxPods: 7}\n"},
		args: []string{"validate", V, "@I/c.yaml"}, code: 1, want: []string{"c.yaml:4:6: maxPods: set again by the YAML merge key at line 4 (first at line 3)"}},

	// Silent drops get a warning naming the file and line.
	{name: "export KUBELET_EXTRA_ARGS is dropped by systemd", sample: true, root: map[string]string{
		"etc/default/kubelet": "export KUBELET_EXTRA_ARGS=\"--max-pods=21\"\n"},
		args: []string{"effective", V, "--root", "@R"}, code: 0, want: []string{"warning: /etc/default/kubelet:1: "}},
	{name: "an env file with no kubelet variable", in: map[string]string{"k.env": "FOO=--max-pods=3\n"},
		args: []string{"effective", V, "--from", "@I/k.env"}, code: 0, want: []string{"warning: @I/k.env: sets none of the variables"}},
	{name: "effective -o json carries the warnings", in: map[string]string{"k.env": "export KUBELET_ARGS=--max-pods=3\n"},
		args: []string{"effective", V, "-o", "json", "--from", "@I/k.env"}, code: 0,
		stdout: []string{`"code": "systemd-ignored"`, `"line": 1`}},

	{name: "a second YAML document", in: map[string]string{"c.yaml": head + "---\nmaxPods: 3\n"},
		args: []string{"validate", V, "@I/c.yaml"}, code: 0, want: []string{"warning: @I/c.yaml:3: a second YAML document: the kubelet reads only the first"}},
	{name: "a drop-in's unknown field said once", in: map[string]string{"c.yaml": head, "d/10.conf": head + "bogus: 1\n"},
		args: []string{"validate", "--kubelet-version=1.37", "--allow-unknown-fields", "--config-dir", "@I/d", "@I/c.yaml"}, code: 0,
		want: []string{`10.conf:3:1: bogus: unknown field "bogus"`, "(1 warning)"}},

	{name: "diff -o json carries the command line's warnings", sample: true, root: map[string]string{
		"etc/default/kubelet": "export KUBELET_EXTRA_ARGS=\"--max-pods=21\"\n"},
		args: []string{"diff", V, "--to-version", "1.32", "--root", "@R", "-o", "json"}, code: 0,
		stdout: []string{`"code": "systemd-ignored"`, `"file": "/etc/default/kubelet"`}},

	{name: "validate -o json codes its warnings", in: map[string]string{"c.yaml": head + "bogus: 1\n---\nx: 1\n"},
		args: []string{"validate", V, "-o", "json", "--allow-unknown-fields", "@I/c.yaml"}, code: 0,
		stdout: []string{`"code": "unknown-field"`, `"code": "document-ignored"`}},

	// The same condition, the same exit code in every command.
	{name: "an empty drop-in: validate", in: map[string]string{"c.yaml": head, "d/10.conf": ""},
		args: []string{"validate", "--kubelet-version=1.37", "--config-dir", "@I/d", "@I/c.yaml"}, code: 1, want: []string{"10.conf: the file is empty"}},
	{name: "an empty drop-in: effective", in: map[string]string{"c.yaml": head, "d/10.conf": ""},
		args: []string{"effective", "--kubelet-version=1.37", "--config", "@I/c.yaml", "--config-dir", "@I/d"}, code: 1, want: []string{"10.conf\" was empty"}},
	{name: "a Pod as a drop-in: validate", in: map[string]string{"c.yaml": head, "d/10.conf": "apiVersion: v1\nkind: Pod\n"},
		args: []string{"validate", "--kubelet-version=1.37", "--config-dir", "@I/d", "@I/c.yaml"}, code: 1, want: []string{`10.conf:1:13: apiVersion: is "v1"`}},
	{name: "a Pod as a drop-in: effective", in: map[string]string{"c.yaml": head, "d/10.conf": "apiVersion: v1\nkind: Pod\n"},
		args: []string{"effective", "--kubelet-version=1.37", "--config", "@I/c.yaml", "--config-dir", "@I/d"}, code: 1, want: []string{"unknown apiVersion/kind: v1, Kind=Pod"}},

	// Messages.
	{name: "syncFrequency 1x names field and line", in: map[string]string{"c.yaml": head + "maxPods: 3\nsyncFrequency: 1x\n"},
		args: []string{"validate", V, "@I/c.yaml"}, code: 1, want: []string{`c.yaml:4:1: syncFrequency: "1x" is not a duration`, "invalid for kubelet 1.31: 1 error, 0 warnings"}},
	{name: "syncFrequency -5s says the duration", in: map[string]string{"c.yaml": head + "syncFrequency: -5s\n"},
		args: []string{"validate", V, "@I/c.yaml"}, code: 1, want: []string{"c.yaml:3:1: syncFrequency: invalid sync frequency -5000000000 (-5s: it must be positive)"}},
	{name: "${UNDEF} in ExecStart names the unit line", root: map[string]string{
		"usr/lib/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet ${UNDEF}\n"},
		args: []string{"effective", V, "--root", "@R"}, code: 1,
		want: []string{"kubelet.service:2: ExecStart=: variable UNDEF is not set", "refuses to start: /usr/lib/systemd/system/kubelet.service:2: the kubelet takes no positional arguments"}},
	{name: "a bad flag in an env file names the file, line and variable", in: map[string]string{"k.env": "# x\nKUBELET_EXTRA_ARGS=--max-podz=3\n"},
		args: []string{"effective", V, "--from", "@I/k.env"}, code: 1, want: []string{"refuses to start: @I/k.env:2 ($KUBELET_EXTRA_ARGS): \"--max-podz\""}},
	{name: "migrate of a setup the kubelet refuses writes nothing", args: []string{"migrate", V, "--output-dir", "@I/out", "--", "--max-pods=-5", "--port=99999"}, code: 1,
		want: []string{"maxPods (--max-pods) -5 must not be a negative number", "port (--port) 99999"}, absent: []string{"@I/out"}},
	{name: "diff --to-version to an older kubelet is a downgrade", sample: true, args: []string{"diff", V, "--to-version", "1.28", "--root", "@R"}, code: 1,
		stdout: []string{"downgrade 1.31 -> 1.28"}},
	{name: "negative --health-timeout", sample: true, in: map[string]string{"c.yaml": head},
		args: []string{"apply", V, "--dry-run", "--root", "@R", "--node", "n", "-f", "@I/c.yaml", "--health-timeout", "-5s"}, code: 2, want: []string{"--health-timeout -5s: must not be negative"}},
	{name: "negative --keep-backups", sample: true, in: map[string]string{"c.yaml": head},
		args: []string{"apply", V, "--dry-run", "--root", "@R", "--node", "n", "-f", "@I/c.yaml", "--keep-backups", "-1"}, code: 2, want: []string{"--keep-backups -1: must not be negative"}},
	{name: "root help names every command", args: []string{"--help"}, code: 0, stdout: []string{"effective ", "migrate ", "diff ", "apply ", "rollback "}},
	{name: "completion tcsh", args: []string{"completion", "tcsh"}, code: 2, want: []string{`unknown command "tcsh" for "kubeletcfg completion"`}},
	{name: "defaults --root /nonexistent", args: []string{"defaults", "--root", "/nonexistent"}, code: 2, want: []string{"--root /nonexistent: no such file or directory"}},
	{name: "--kubelet-version empty", args: []string{"defaults", "--kubelet-version", ""}, code: 2, want: []string{`--kubelet-version ""`}},
	// The container runtime's configuration and the credential provider
	// configuration are node files too.
	{name: "effective: containerd's config.toml a FIFO", sample: true, root: map[string]string{"etc/containerd/config.toml": "<fifo>"},
		args: []string{"effective", V, "--root", "@R"}, code: 0, want: []string{"/etc/containerd/config.toml: a FIFO, not a regular file"}},
	{name: "effective: containerd imports the sentinel FIFO through a link", sample: true,
		root: map[string]string{"etc/containerd/config.toml": "version = 3\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n", "etc/containerd/conf.d/x.toml": "-> @O/fifo"},
		args: []string{"effective", V, "--root", "@R"}, code: 0, want: []string{"will not start on its runtime: containerd does not start"}},
	{name: "effective: containerd imports 300 files", sample: true, gen: manyImports(300),
		args: []string{"effective", V, "--root", "@R"}, code: 0, want: []string{"more than 256 files"}},
	{name: "effective: containerd config of an unknown version", sample: true, root: map[string]string{"etc/containerd/config.toml": "version = 9\n"},
		args: []string{"effective", V, "--root", "@R"}, code: 0, want: []string{"containerd configuration version 9: kubeletcfg models containerd 2.4"}},
	{name: "effective: a credential provider config that is /dev/zero", args: []string{"effective", V, "--", "--image-credential-provider-config=/dev/zero", "--image-credential-provider-bin-dir=/"}, code: 2,
		want: []string{"/dev/zero: a character device"}},
	{name: "effective: a credential provider directory with a link out of the root", sample: true,
		root: map[string]string{"etc/kubernetes/credprov.d/a.yaml": "-> ../../../../../../../../../../../etc/shadow", "usr/libexec/kubernetes/p": "x"},
		args: []string{"effective", "--kubelet-version=1.37", "--root", "@R", "--", "--image-credential-provider-config=/etc/kubernetes/credprov.d", "--image-credential-provider-bin-dir=/usr/libexec/kubernetes"}, code: 2,
		want: []string{"leaves --root: refused"}},

	// kubeadm render: the patches directory and instance-config.yaml are
	// read inside the root; what kubeadm refuses is refused, naming the file.
	{name: "kubeadm render: a patch that is a link out of the root", sample: true, in: map[string]string{"cm.yaml": head},
		root: map[string]string{"etc/kubernetes/patches/kubeletconfiguration.yaml": "-> @O/config.yaml"},
		args: []string{"kubeadm", "render", "--kubeadm-version", "1.37", "--root", "@R", "--configmap", "@I/cm.yaml", "--patches", "/etc/kubernetes/patches"}, code: 2,
		want: []string{"/etc/kubernetes/patches/kubeletconfiguration.yaml: kubeadm 1.37 fails: could not read the file"}},
	{name: "kubeadm render: a patch that is a FIFO", sample: true, in: map[string]string{"cm.yaml": head},
		root: map[string]string{"etc/kubernetes/patches/kubeletconfiguration+merge.yaml": "<fifo>"},
		args: []string{"kubeadm", "render", "--kubeadm-version", "1.37", "--root", "@R", "--configmap", "@I/cm.yaml", "--patches", "/etc/kubernetes/patches"}, code: 2,
		want: []string{"kubeletconfiguration+merge.yaml", "a FIFO"}},
	{name: "kubeadm render: the patches directory a link out of the root", sample: true, in: map[string]string{"cm.yaml": head},
		root: map[string]string{"etc/kubernetes/patches": "-> @O/conf.d"},
		args: []string{"kubeadm", "render", "--kubeadm-version", "1.37", "--root", "@R", "--configmap", "@I/cm.yaml", "--patches", "/etc/kubernetes/patches"}, code: 2,
		want: []string{"patches directory /etc/kubernetes/patches: a symbolic link"}},
	// Inside the root the link leads nowhere: the file is missing, as the
	// node's own kubeadm finds it, and the file outside stays unread.
	{name: "kubeadm render: instance-config.yaml a link out of the root", sample: true, in: map[string]string{"cm.yaml": head},
		root: map[string]string{"var/lib/kubelet/instance-config.yaml": "-> @O/config.yaml"},
		args: []string{"kubeadm", "render", "--kubeadm-version", "1.37", "--root", "@R", "--configmap", "@I/cm.yaml"}, code: 0,
		want: []string{"/var/lib/kubelet/instance-config.yaml is missing: kubeadm 1.37 creates it"}},
	{name: "kubeadm render: a 5 MiB patch", sample: true, in: map[string]string{"cm.yaml": head},
		gen:  map[string]func() []byte{"root/etc/kubernetes/patches/kubeletconfiguration.yaml": repeat("#2345678\n", 5<<20/9)},
		args: []string{"kubeadm", "render", "--kubeadm-version", "1.37", "--root", "@R", "--configmap", "@I/cm.yaml", "--patches", "/etc/kubernetes/patches"}, code: 2,
		want: []string{"kubeletcfg reads at most 4 MiB of a kubeadm patch file"}},
	{name: "kubeadm render: a ConfigMap that is not a KubeletConfiguration", sample: true, in: map[string]string{"cm.yaml": "apiVersion: v1\nkind: Secret\n"},
		args: []string{"kubeadm", "render", "--kubeadm-version", "1.37", "--root", "@R", "--configmap", "@I/cm.yaml"}, code: 2,
		want: []string{"@I/cm.yaml:1: kubeadm refuses it: a document needs apiVersion GROUP/VERSION and kind"}},
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

const laughs = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`

func manyDropins(n int) map[string]string {
	m := map[string]string{"usr/lib/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --max-pods=1\n"}
	for i := range n {
		m["etc/systemd/system/kubelet.service.d/"+itoa(10000+i)+".conf"] = "[Service]\nEnvironment=X" + itoa(i) + "=1\n"
	}
	m["etc/systemd/system/kubelet.service.d/99999.conf"] = "[Service]\nExecStart=\nExecStart=/usr/bin/kubelet --max-pods=5\n"
	return m
}

// manyLabels is an env file whose one flag sets 100,000 node labels.
func manyLabels() []byte {
	var b strings.Builder
	b.WriteString("KUBELET_EXTRA_ARGS=--node-labels=")
	for i := range 100000 {
		b.WriteString("k" + itoa(i) + "=v,")
	}
	b.WriteString("last=v\n")
	return []byte(b.String())
}

// manyImports is a containerd configuration importing n files.
func manyImports(n int) map[string]func() []byte {
	m := map[string]func() []byte{"root/etc/containerd/config.toml": func() []byte {
		return []byte("version = 3\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n")
	}}
	for i := range n {
		m["root/etc/containerd/conf.d/"+itoa(1000+i)+".toml"] = func() []byte { return []byte("version = 3\n") }
	}
	return m
}
