# -*- coding: utf-8 -*-
# The kubeletcfg binary as the modules of this collection run it: one table
# maps module options to its flags, and its JSON output is read, never its
# text. No kubelet knowledge lives here; kubeletcfg has all of it.

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os


INSTALL_HINT = (
    "install it on the node with the kubeletcfg.kubelet.install role "
    "(from a file on the controller: make build, then kubeletcfg_src=bin/kubeletcfg), "
    "or give its path in kubeletcfg_binary"
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
    "node_name": _opt("--node"),
    "kubelet_version": _opt("--kubelet-version"),
    "root": _opt("--root"),
    "from_files": _repeat("--from"),
    "migrate": _bool("--from-migrate"),
    "config_path": _opt("--config-path"),
    "drained": _bool("--drained"),
    "allow_insecure": _bool("--allow-insecure"),
    "restart_command": _opt("--restart-command"),
    "unit": _opt("--unit"),
    "pid_file": _opt("--pid-file"),
    "kubelet_log": _opt("--kubelet-log"),
    "keep_backups": _opt("--keep-backups"),
    "state_dir": _opt("--state-dir"),
    "verify_configz": _bool("--verify-configz"),
    "kubelet_url": _opt("--kubelet-url"),
    "client_cert": _opt("--client-cert"),
    "client_key": _opt("--client-key"),
    "kubelet_ca": _opt("--kubelet-ca"),
    "insecure_skip_tls_verify": _bool("--insecure"),
    "health_timeout": _seconds("--health-timeout"),
    "stable_for": _seconds("--stable-for"),
    "kubeconfig": _opt("--kubeconfig"),
    "context": _opt("--context"),
    "drain": _bool("--drain"),
    "drain_timeout": _seconds("--drain-timeout"),
    "delete_emptydir_data": _bool("--delete-emptydir-data"),
    "force": _bool("--force"),
    "grace_period": _opt("--grace-period"),
}


class KubeletcfgError(Exception):
    """kubeletcfg could not be run, or answered in a way this collection does not understand."""


class Kubeletcfg(object):
    """Runs kubeletcfg for an AnsibleModule."""

    def __init__(self, module, binary=None):
        self.module = module
        self.binary = self._find(binary)

    def _find(self, binary):
        if binary:
            if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
                raise KubeletcfgError("kubeletcfg_binary %s is not an executable file: %s" % (binary, INSTALL_HINT))
            return binary
        found = self.module.get_bin_path("kubeletcfg", opt_dirs=["/usr/local/bin", "/usr/bin"])
        if not found:
            raise KubeletcfgError("kubeletcfg is not installed on this node (not on PATH nor in /usr/local/bin): " + INSTALL_HINT)
        return found

    def apply_argv(self, params, files=(), dropins=(), absent=(), check=False):
        """The argv of `kubeletcfg apply` for the module's params."""
        argv = [self.binary, "apply", "-o", "json"]
        for name, fmt in APPLY_FLAGS.items():
            value = params.get(name)
            if value is not None and value != [] and value is not False:
                argv.extend(fmt(value))
        for f in files:
            argv.extend(["-f", f])
        for name, path in dropins:
            argv.extend(["--dropin", "%s=%s" % (name, path)])
        for name in absent:
            argv.extend(["--remove-dropin", name])
        if check:
            argv.append("--dry-run")
        if params.get("kubelet_args"):
            argv.append("--")
            argv.extend(params["kubelet_args"])
        return argv

    def apply(self, argv):
        """Runs an apply; returns (rc, outcome or None, error or "", stderr).

        With -o json kubeletcfg prints the outcome (once it has planned), and
        on an error also {"error": ...}: a stream of JSON documents.
        """
        rc, out, err = self.module.run_command(argv, environ_update={"LC_ALL": "C", "NO_COLOR": "1"})
        if rc == 2 and ("unknown flag" in err or "unknown shorthand flag" in err or 'unknown command "apply"' in err):
            raise KubeletcfgError("%s is too old for this collection (%s): %s" % (self.binary, err.strip().splitlines()[-1], INSTALL_HINT))
        try:
            docs = json_documents(out)
        except ValueError:
            raise KubeletcfgError("%s apply -o json printed no JSON (too old?): %s" % (self.binary, out.strip()[:200]))
        outcome, error = None, ""
        for doc in docs:
            if isinstance(doc, dict) and doc.get("version", 0) not in JSON_VERSIONS:
                raise KubeletcfgError("%s answers in JSON version %s, this collection reads versions %s: "
                                      "install the collection that goes with it" % (self.binary, doc.get("version"), JSON_VERSIONS))
            if isinstance(doc, dict) and "error" in doc and set(doc) <= set(("error", "version")):
                error = doc["error"]
            elif outcome is None:
                outcome = doc
        if outcome is not None:
            missing = [k for k in REQUIRED_KEYS if k not in outcome]
            if missing:
                raise KubeletcfgError("%s is too old for this collection (its JSON lacks %s): %s" % (self.binary, ", ".join(missing), INSTALL_HINT))
        return rc, outcome, error or last_error(err), err


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
    lines = [l for l in stderr.strip().splitlines() if l.strip()]
    for line in reversed(lines):
        if line.startswith("kubeletcfg: "):
            return line[len("kubeletcfg: "):]
    return lines[-1] if lines else ""
