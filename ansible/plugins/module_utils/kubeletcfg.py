# -*- coding: utf-8 -*-
# Copyright: kubeletcfg authors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
#
# The kubeletcfg binary as the modules of this collection run it: one table
# maps module options to its flags, its JSON output is read (never its
# text), and every failure message is built in one place (failure_message).
# No kubelet knowledge lives here; kubeletcfg has all of it.

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import re
import signal


INSTALL_HINT = (
    "install it on the node with the kubeletcfg.kubelet.install role "
    "(from a file on the controller: make build, then kubeletcfg_src=bin/kubeletcfg), "
    "or give its path in kubeletcfg_binary"
)

BECOME_HINT = (
    "kubeletcfg runs as uid %d on the node: changing the kubelet's configuration needs root "
    "(become: true; the rollout playbook's kubelet_become)"
)

# The keys of `kubeletcfg apply -o json` this collection needs: a binary
# whose output lacks one is too old.
REQUIRED_KEYS = ("changes", "configFile", "applied", "rolledBack", "kubeletVersion", "writes")

# The versions of kubeletcfg's JSON shapes this collection reads: the
# "version" key of every -o json document (0: a binary from before it had one).
JSON_VERSIONS = (0, 1)


def _opt(flag):
    return lambda v: [flag, str(v)]


def _bool(flag):
    return lambda v: [flag] if v else []


def _seconds(flag):
    return lambda v: [flag, "%ss" % v]


def _repeat(flag):
    return lambda vs: [a for v in vs for a in (flag, str(v))]


# Module option -> kubeletcfg apply flag.
APPLY_FLAGS = {
    "node_name": ("--node", _opt),
    "kubelet_version": ("--kubelet-version", _opt),
    "root": ("--root", _opt),
    "from_files": ("--from", _repeat),
    "migrate": ("--from-migrate", _bool),
    "config_path": ("--config-path", _opt),
    "from_kubeadm": ("--from-kubeadm", _bool),
    "persist": ("--persist", _opt),
    "patches_dir": ("--patches", _opt),
    "force_unmanaged": ("--force-unmanaged", _bool),
    "kubeadm_configmap": ("--kubeadm-configmap", _opt),
    "kubeadm_version": ("--kubeadm-version", _opt),
    "drained": ("--drained", _bool),
    "allow_insecure": ("--allow-insecure", _bool),
    "skip_preflight": ("--skip-preflight", _bool),
    "restart_command": ("--restart-command", _opt),
    "unit": ("--unit", _opt),
    "pid_file": ("--pid-file", _opt),
    "kubelet_log": ("--kubelet-log", _opt),
    "keep_backups": ("--keep-backups", _opt),
    "state_dir": ("--state-dir", _opt),
    "verify_configz": ("--verify-configz", _bool),
    "kubelet_url": ("--kubelet-url", _opt),
    "client_cert": ("--client-cert", _opt),
    "client_key": ("--client-key", _opt),
    "kubelet_ca": ("--kubelet-ca", _opt),
    "insecure_skip_tls_verify": ("--insecure", _bool),
    "health_timeout": ("--health-timeout", _seconds),
    "stable_for": ("--stable-for", _seconds),
    "kubeconfig": ("--kubeconfig", _opt),
    "context": ("--context", _opt),
    "drain": ("--drain", _bool),
    "drain_timeout": ("--drain-timeout", _seconds),
    "delete_emptydir_data": ("--delete-emptydir-data", _bool),
    "force": ("--force", _bool),
    "grace_period": ("--grace-period", _opt),
}

# kubeletcfg's flags as the module's options, for messages. --kubeconfig is
# left alone: the kubelet has a flag of that name too, which kubeletcfg's
# messages about the kubelet's command line name.
FLAG_OPTIONS = dict((flag, name) for name, (flag, fmt) in APPLY_FLAGS.items() if flag != "--kubeconfig")
FLAG_OPTIONS.update({
    "--patch": "config_patch",
    "--dropin": "dropins",
    "--remove-dropin": "dropins (state: absent)",
    "--dry-run": "check mode",
})
_FLAG_RE = re.compile(r"(?<![\w-])(%s)(?![\w-])" % "|".join(
    re.escape(f) for f in sorted(FLAG_OPTIONS, key=len, reverse=True)))


class KubeletcfgError(Exception):
    """kubeletcfg could not be run, or answered in a way this collection does
    not understand. result holds what is known of the run (cmd, rc, stderr)."""

    def __init__(self, msg, **result):
        super(KubeletcfgError, self).__init__(msg)
        self.result = result


class Answer(object):
    """One kubeletcfg apply: its exit code, its outcome (None when it
    refused before planning), its error ({"error": ...}, "" if none) and its
    stderr."""

    def __init__(self, rc, outcome, error, stderr):
        self.rc, self.outcome, self.error, self.stderr = rc, outcome, error, stderr

    def failure(self):
        """The error of a failed run: kubeletcfg's own, else its last line."""
        return self.error or last_error(self.stderr) or "kubeletcfg apply failed (exit %d)" % self.rc


class Kubeletcfg(object):
    """Runs kubeletcfg for an AnsibleModule."""

    def __init__(self, module, binary=None):
        self.module = module
        self.binary = self._find(binary)

    def _find(self, binary):
        if binary:
            if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
                hint = INSTALL_HINT
                if os.path.exists(binary) and os.geteuid() != 0:
                    hint = BECOME_HINT % os.geteuid() + "; or " + INSTALL_HINT
                raise KubeletcfgError("kubeletcfg_binary %s is not an executable file: %s" % (binary, hint))
            return binary
        found = self.module.get_bin_path("kubeletcfg", opt_dirs=["/usr/local/bin", "/usr/bin"])
        if not found:
            raise KubeletcfgError("kubeletcfg is not installed on this node (not on PATH nor in /usr/local/bin): " + INSTALL_HINT)
        return found

    def apply_argv(self, params, files=(), patch=None, dropins=(), absent=(), check=False):
        """The argv of `kubeletcfg apply` for the module's params."""
        argv = [self.binary, "apply", "-o", "json"]
        for name, (flag, fmt) in APPLY_FLAGS.items():
            value = params.get(name)
            if value is not None and value != [] and value is not False:
                argv.extend(fmt(flag)(value))
        for f in files:
            argv.extend(["-f", f])
        if patch:
            argv.extend(["--patch", patch])
        for name, path in dropins:
            argv.extend(["--dropin", "%s=%s" % (name, path)])
        for name in absent:
            argv.extend(["--remove-dropin", name])
        if check:
            argv.append("--dry-run")
        if params.get("kubelet_args") is not None:
            argv.append("--")
            argv.extend(params["kubelet_args"])
        return argv

    def apply(self, argv):
        """Runs an apply and returns its Answer.

        With -o json kubeletcfg prints the outcome (once it has planned), and
        on an error also {"error": ...}: a stream of JSON documents. Anything
        else (a signal, a crash, no JSON, a binary too old) raises
        KubeletcfgError with the command, its exit code and its stderr.
        """
        rc, out, err = self.module.run_command(argv, environ_update={"LC_ALL": "C", "NO_COLOR": "1"})
        ran = dict(cmd=argv, rc=rc, stderr=err)
        if rc < 0:
            raise KubeletcfgError(killed_message(-rc, err), **ran)
        try:
            docs = json_documents(out)
        except ValueError:
            raise KubeletcfgError("%s apply -o json printed no JSON (exit %d): %s" % (
                self.binary, rc, crash_summary(out, err)), **ran)
        if not docs:
            missing = self._unknown_flags(argv, err)
            if missing:
                raise KubeletcfgError("%s is too old for this collection (it has no %s): %s" % (
                    self.binary, ", ".join(missing), INSTALL_HINT), **ran)
            if rc != 0:
                raise KubeletcfgError("%s apply exited %d without its JSON answer: %s" % (
                    self.binary, rc, crash_summary(out, err)), **ran)
            raise KubeletcfgError("%s apply -o json printed no JSON (exit 0)" % self.binary, **ran)
        outcome, error = None, ""
        for doc in docs:
            if isinstance(doc, dict) and doc.get("version", 0) not in JSON_VERSIONS:
                raise KubeletcfgError("%s answers in JSON version %s, this collection reads versions %s: "
                                      "install the collection that goes with it" % (self.binary, doc.get("version"), JSON_VERSIONS), **ran)
            if isinstance(doc, dict) and "error" in doc and set(doc) <= set(("error", "version")):
                error = doc["error"]
            elif outcome is None:
                outcome = doc
        if outcome is not None:
            missing = [k for k in REQUIRED_KEYS if not isinstance(outcome, dict) or k not in outcome]
            if missing:
                raise KubeletcfgError("%s is too old for this collection (its JSON lacks %s): %s" % (
                    self.binary, ", ".join(missing), INSTALL_HINT), **ran)
        return Answer(rc, outcome, error, err)

    @staticmethod
    def _unknown_flags(argv, stderr):
        """kubeletcfg's own flags of argv that the binary refused as unknown
        (cobra's words); a kubelet flag after -- never counts."""
        ours = argv[:argv.index("--")] if "--" in argv else argv
        refused = []
        for m in re.finditer(r"unknown (?:shorthand )?flag: (?:'(\w)' in )?(-{1,2}[\w-]+)", stderr):
            flag = m.group(2)
            if flag in ours or ("-" + (m.group(1) or "")) in ours:
                refused.append(flag)
        if re.search(r'unknown command "apply"', stderr):
            refused.append("apply command")
        return refused


def killed_message(signum, stderr):
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = "signal %d" % signum
    last = last_line(stderr)
    msg = "kubeletcfg was killed by signal %s (%d)" % (name, signum)
    if last:
        msg += "; its last words: %s" % last
    return msg + (". If it was changing the node, its guard puts the old configuration back; "
                  "see kubeletcfg recover and kubeletcfg backups on the node")


def crash_summary(stdout, stderr):
    """A crash in a line: a Go panic's first line, else the last of stderr,
    else the start of stdout."""
    for line in stderr.splitlines():
        if line.startswith("panic: ") or line.startswith("fatal error: "):
            return line.strip()
    return last_line(stderr) or stdout.strip()[:200]


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def json_documents(text):
    """The JSON documents of text, one after the other."""
    dec = json.JSONDecoder()
    docs, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return docs
        doc, i = dec.raw_decode(text, i)
        docs.append(doc)


def last_error(stderr):
    """kubeletcfg's error line (it prints it last, prefixed with kubeletcfg:)."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("kubeletcfg: "):
            return line[len("kubeletcfg: "):]
    return lines[-1] if lines else ""


def node_warnings(stderr):
    """What kubeletcfg warned about on stderr (what the kubelet or systemd
    does silently), and its note of a kubelet version it had to assume."""
    out = []
    for line in stderr.splitlines():
        if line.startswith("warning: "):
            out.append(line[len("warning: "):])
        elif line.startswith("note: ") and "--kubelet-version" in line:
            out.append(line[len("note: "):])
    return out


def failure_message(error, labels=None, ran=False):
    """The message of a failure, in the module's words: kubeletcfg's flags
    named as the module's options, the module's temporary files as what the
    operator gave (labels: path -> (label, keep line:column)), and, when
    kubeletcfg ran (or was denied) without root, that it needs root. Every
    failure message of the module goes through here."""
    msg = speak_options(error, labels)
    denied = re.search(r"permission denied|operation not permitted", msg, re.I)
    if (ran or denied) and os.geteuid() != 0:
        msg += " (%s)" % (BECOME_HINT % os.geteuid())
    return msg


def speak_options(text, labels=None):
    """text with kubeletcfg's flags named as the module's options and the
    module's temporary files as what the operator gave."""
    for path, (label, keep_position) in (labels or {}).items():
        if keep_position:
            text = text.replace(path, label)
        else:
            text = re.sub(re.escape(path) + r"(:\d+(:\d+)?)?", label, text)
    return _FLAG_RE.sub(lambda m: FLAG_OPTIONS[m.group(1)], text)
