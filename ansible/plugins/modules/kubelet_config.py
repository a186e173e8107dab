#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeletcfg authors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
module: kubelet_config
short_description: Change a node's kubelet configuration safely with kubeletcfg
version_added: 0.1.0
description:
  - Runs C(kubeletcfg apply) on the node. kubeletcfg validates the new configuration for the node's kubelet version,
    computes the change of the I(effective) configuration (config file, drop-ins and command-line flags layered as the
    kubelet layers them) and classifies it (restart, drain, registration, security). Unless nothing changes it then
    backs the config file up, writes it atomically, restarts the kubelet, watches its health over a stability window
    and, if the kubelet does not stay healthy, puts the old file back and restarts it again.
  - All configuration knowledge is kubeletcfg's; this module passes options and reads its JSON output.
  - The comparison is semantic, so a second run with the same input reports no change and restarts nothing, whatever
    the key order, comments, or defaults written out.
  - A change that is applied, fails and is rolled back fails the task with the kubelet's own error and
    I(rolled_back=true). A change refused before anything is written (invalid for the kubelet version, wrong node,
    needs a drain, node locked) fails with kubeletcfg's error, I(changed=false) and no I(writes).
  - Changing a real node needs root there (C(become)); an offline tree under I(root) needs write access to it.
requirements:
  - kubeletcfg on the node (see the C(kubeletcfg.kubelet.install) role)
attributes:
  check_mode:
    support: full
    description: kubeletcfg's dry run; the classified change list is returned and nothing is touched.
  diff_mode:
    support: full
    description:
      - Before and after of the effective configuration the kubelet runs, in YAML.
      - With I(migrate), or when only the file changes (a value a flag masks), also the before and after of every
        file written.
  action:
    support: full
    description: An action plugin sets I(node_name) to the inventory hostname and reads I(src) on the controller.
  async:
    support: full
    description: A long apply (a drain, a slow kubelet) can run with C(async) and C(poll), beyond the connection's timeout.
options:
  config:
    description:
      - The desired KubeletConfiguration as a dict, written as the kubelet's C(--config) file. It is the whole file;
        every field it does not name goes back to its default. To set some fields only, use I(config_patch).
      - I(kind) and I(apiVersion) are added when missing.
      - Mutually exclusive with I(content), I(src), I(config_patch), I(dropins) and I(migrate).
    type: dict
  content:
    description:
      - The desired config file as text (YAML), for example C(lookup('file', 'kubelet-config.yaml')).
    type: str
  src:
    description:
      - A file holding the desired config file. Read on the controller (as C(copy) does, searching C(files/)), or on
        the node with I(remote_src=true).
    type: path
  remote_src:
    description: I(src) is a file on the node.
    type: bool
    default: false
  config_patch:
    description:
      - Fields to set in the node's current config file, as a JSON merge patch (RFC 7386) onto it
        (C(kubeletcfg apply --patch)); a field set to C(null) is removed (back to its default). Every field the patch
        does not name stays as the file has it.
      - The result is validated as a whole for the kubelet's version; the diff is that of the effective configuration.
        Applying the same patch again changes nothing.
      - On a kubeadm node, a change kubeadm would revert at its next upgrade goes through I(persist) (a kubeadm patch
        or a drop-in), or is refused.
    type: dict
  dropins:
    description:
      - Drop-ins of the kubelet's C(--config-dir) to create or replace, from file name (a plain name ending in
        C(.conf)) to a dict (a KubeletConfiguration fragment) or to the path of a file on the node.
      - "C({state: absent}) removes that drop-in (C(kubeletcfg apply --remove-dropin)); one that is not there is no change."
      - Changed in their own transaction; not with I(config), I(content), I(src), I(config_patch) or I(migrate).
    type: dict
  migrate:
    description:
      - Move the node's legacy kubelet flags into the config file (C(kubeletcfg apply --from-migrate)); the environment
        files the flags live in are rewritten in the same transaction. Default C(false).
    type: bool
  config_path:
    description: With I(migrate), the config file to create when the kubelet runs without C(--config).
    type: path
  from_kubeadm:
    description:
      - On a node kubeadm set up, write what C(kubeadm upgrade node) would write there from the cluster's
        C(kube-system/kubelet-config) ConfigMap (I(kubeconfig), or I(kubeadm_configmap)), the node's patches
        (I(patches_dir)) and C(instance-config.yaml) (C(kubeletcfg apply --from-kubeadm)). That is the ConfigMap rolled
        out to this node, with nothing for the next upgrade to revert. Default C(false).
    type: bool
  persist:
    description:
      - On a node kubeadm set up, where to keep a change of C(/var/lib/kubelet/config.yaml) so that the next
        C(kubeadm upgrade node), which rewrites that file, keeps it too (C(kubeletcfg apply --persist)).
      - C(patch) writes kubeletcfg's kubeadm patch in I(patches_dir); C(kubeadm upgrade) must then be run with
        C(--patches) that directory. C(dropin) writes the change as a drop-in of the kubelet's C(--config-dir), which
        kubeadm leaves alone.
      - Without it (nor I(force_unmanaged)) a change the next upgrade reverts is refused, naming its fields; so is any
        change of that file when kubeadm's ConfigMap is not known (no I(kubeconfig), no I(kubeadm_configmap)).
      - I(config_patch), I(config), I(content), I(src) and I(migrate) on a kubeadm node all go through it.
    type: str
    choices: [patch, dropin]
  patches_dir:
    description: The C(--patches) directory C(kubeadm upgrade) is run with. Default, kubeletcfg's (C(/etc/kubernetes/patches)).
    type: path
  force_unmanaged:
    description:
      - On a kubeadm node, apply a change the next C(kubeadm upgrade node) reverts (or may revert, kubeadm's ConfigMap not
        given or not readable), saying so.
    type: bool
    default: false
  kubeadm_configmap:
    description:
      - On the node, a file holding kubeadm's C(kubelet-config) ConfigMap (its C(kubelet) value, or the ConfigMap as
        C(kubectl get -o yaml) prints it). Default, read it through the API server with I(kubeconfig).
    type: path
  kubeadm_version:
    description: The kubeadm that runs the node's next upgrade (C(1.34)). Default, the kubelet's minor.
    type: str
  kubelet_version:
    description:
      - The node's kubelet version (C(1.31), C(v1.31.4)).
      - Default, what the node's kubelet says (C(kubelet --version); under I(root), the kubelet binary or the package
        database of the tree). When neither can be read, kubeletcfg assumes the newest kubelet it knows and the task
        warns so; set I(kubelet_version) then.
    type: str
  node_name:
    description:
      - The node to change; kubeletcfg refuses to touch a node of another name (its C(--hostname-override), else its
        hostname, or C(etc/hostname) under I(root)).
      - Default, the inventory hostname.
    type: str
  root:
    description: An offline node tree (an image, a chroot) to change instead of this node.
    type: path
  from_files:
    description:
      - Where the kubelet's command line is read from (a unit C(*.service), or env files such as C(kubeadm-flags.env)),
        in command-line order. Default, the node's C(kubelet.service), its drop-ins and the env files they name.
    type: list
    elements: path
  kubelet_args:
    description: The kubelet's command line, when it is not read from the node (an empty list is an empty command line).
    type: list
    elements: str
  restart_command:
    description:
      - Shell command that restarts the kubelet, with I(pid_file). Default, restart I(unit) over systemd's D-Bus API.
    type: str
  unit:
    description: The kubelet's systemd unit, restarted and watched when there is no I(restart_command). Default, kubeletcfg's (C(kubelet.service)).
    type: str
  pid_file:
    description: With I(restart_command), the file where it leaves the kubelet's process ID (a kubelet that exits is seen at once).
    type: path
  kubelet_log:
    description: With I(restart_command), the kubelet's log file, read for the cause of a failure.
    type: path
  allow_insecure:
    description:
      - Apply a change that makes a CIS kubelet check fail that passes now (C(kubeletcfg audit)); without it such a change
        is refused before anything is written. The checks it breaks are returned in I(breaks) either way.
    type: bool
    default: false
  skip_preflight:
    description:
      - Apply a change kubeletcfg's preflight says the kubelet will refuse to start with on this host (C(kubeletcfg
        preflight)); without it such a change is refused before anything is written, with the refusal's field and
        origin. The watch and the rollback still guard the node, and a rollback's failure explains the kubelet's own
        error (I(cause)).
    type: bool
    default: false
  drained:
    description: The node is drained (changes classified C(drain), such as the CPU manager policy, need it).
    type: bool
    default: false
  kubeconfig:
    description:
      - A kubeconfig on the node with access to the API server (C(kubeletcfg apply --kubeconfig)). The restarted kubelet
        must then also report to it (Node Ready with a heartbeat and its Lease renewed after the restart), and
        I(verify_configz) reads C(/configz) through the API server's node proxy.
    type: path
  context:
    description: With I(kubeconfig), the context to use (default its current context).
    type: str
  drain:
    description:
      - With I(kubeconfig), cordon and drain the node before the change (Eviction API, PodDisruptionBudgets respected,
        DaemonSet and static pods left) and uncordon it once healthy. A drain that cannot finish fails the task with
        nothing written. Changes classified C(drain) are then allowed without I(drained).
    type: bool
    default: false
  drain_timeout:
    description: With I(drain), seconds the drain may take (evictions a PodDisruptionBudget refuses are retried until then). Default, kubeletcfg's (300).
    type: int
  delete_emptydir_data:
    description: With I(drain), evict pods with emptyDir volumes too (their data is lost).
    type: bool
    default: false
  force:
    description: With I(drain), evict pods no controller recreates too.
    type: bool
    default: false
  grace_period:
    description: With I(drain), seconds each evicted pod has to stop (default, the pod's own).
    type: int
  health_timeout:
    description: Seconds the restarted kubelet has to become healthy. Default, kubeletcfg's (30).
    type: int
  stable_for:
    description: Seconds it must then stay healthy. Default, kubeletcfg's (10).
    type: int
  verify_configz:
    description: Once stable, the kubelet's C(/configz) must serve the intended configuration, else the change is rolled back.
    type: bool
    default: false
  kubelet_url:
    description: The kubelet's C(/configz) URL, for I(verify_configz). Default, kubeletcfg's (C(https://127.0.0.1:10250/configz)).
    type: str
  client_cert:
    description: Client certificate the kubelet accepts, for I(verify_configz) and the health watch on the kubelet's API.
    type: path
  client_key:
    description: Key of I(client_cert).
    type: path
  kubelet_ca:
    description: CA of the kubelet's serving certificate, for I(verify_configz).
    type: path
  insecure_skip_tls_verify:
    description: Do not verify the kubelet's serving certificate, for I(verify_configz).
    type: bool
    default: false
  keep_backups:
    description: How many backups of the config file to keep (0, all). Default, kubeletcfg's (10).
    type: int
  state_dir:
    description:
      - kubeletcfg's own directory on the node (lock, journal, backup records).
      - Default, kubeletcfg's (C(/var/lib/kubeletcfg), inside I(root) when given).
    type: path
  kubeletcfg_binary:
    description: Path of kubeletcfg on the node. Default, C(kubeletcfg) on C(PATH) or in C(/usr/local/bin).
    type: path
notes:
  - Exactly one of I(config), I(content), I(src), I(config_patch), I(dropins), I(migrate=true) or I(from_kubeadm=true)
    says what to change.
  - On a node kubeadm set up, kubeadm owns C(/var/lib/kubelet/config.yaml); see I(persist).
  - Ansible's own argument checks refuse a task before kubeletcfg runs; such a failure returns I(msg) only.
seealso:
  - name: kubeletcfg
    description: The tool this module runs.
    link: https://github.com/kubeletcfg/kubeletcfg
author:
  - kubeletcfg authors (@kubeletcfg)
"""

EXAMPLES = r"""
- name: Raise maxPods only, leaving the rest of the file as it is
  kubeletcfg.kubelet.kubelet_config:
    config_patch:
      maxPods: 150
      containerLogMaxSize: null  # back to its default

- name: The whole config file, verified on /configz once stable
  kubeletcfg.kubelet.kubelet_config:
    src: kubelet-config.yaml
    verify_configz: true
    client_cert: /etc/kubernetes/pki/apiserver-kubelet-client.crt
    client_key: /etc/kubernetes/pki/apiserver-kubelet-client.key
    insecure_skip_tls_verify: true

- name: Plan only (check and diff mode), on an offline node image
  kubeletcfg.kubelet.kubelet_config:
    src: /srv/images/node-1/new-config.yaml
    remote_src: true
    root: /srv/images/node-1
    kubelet_version: "1.31"
  check_mode: true
  diff: true
  register: plan

- name: A drop-in of the kubelet's --config-dir
  kubeletcfg.kubelet.kubelet_config:
    dropins:
      50-reserved.conf:
        systemReserved:
          memory: 500Mi

- name: Move legacy flags into the config file
  kubeletcfg.kubelet.kubelet_config:
    migrate: true

- name: On a kubeadm node, keep the change where kubeadm upgrade keeps it too
  kubeletcfg.kubelet.kubelet_config:
    config_patch:
      maxPods: 150
    persist: patch   # kubeadm upgrade node must then get --patches /etc/kubernetes/patches
    kubeconfig: /etc/kubernetes/kubelet.conf

- name: Roll the cluster's kubelet-config ConfigMap out to this node
  kubeletcfg.kubelet.kubelet_config:
    from_kubeadm: true
    kubeconfig: /etc/kubernetes/kubelet.conf

- name: A change that needs a drain, through the API server, beyond the SSH timeout
  kubeletcfg.kubelet.kubelet_config:
    config_patch:
      cpuManagerPolicy: static
      reservedSystemCPUs: "0"
    kubeconfig: /etc/kubernetes/kubelet.conf
    drain: true
    drain_timeout: 600
  async: 900
  poll: 10
"""

RETURN = r"""
changes:
  description: The classified changes of the effective configuration (empty when nothing changes).
  returned: always
  type: list
  elements: dict
  sample:
    - path: maxPods
      old: 110
      new: 150
      classes: [restart]
    - path: cpuManagerPolicy
      old: none
      new: static
      classes: [drain]
      stateFile: cpu_manager_state
config_file:
  description: The file the change writes (the config file, or the first drop-in).
  returned: when kubeletcfg planned the change
  type: str
  sample: /var/lib/kubelet/config.yaml
breaks:
  description: The CIS kubelet checks that pass now and would fail after the change (see I(allow_insecure)).
  returned: when the change breaks one
  type: list
  elements: dict
  sample:
    - id: "4.2.1"
      section: cis
      title: Ensure that the --anonymous-auth argument is set to false (Automated)
      status: fail
      value: "true"
writes:
  description: Every file the change wrote (in check mode, would write); empty when nothing was written (no change, or refused).
  returned: always
  type: list
  elements: str
  sample: [/var/lib/kubelet/config.yaml]
removes:
  description: The drop-ins the change removed (in check mode, would remove); empty when nothing was removed.
  returned: always
  type: list
  elements: str
backup_file:
  description:
    - The backup of the file changed, beside it, named with the time of the change (UTC, to the nanosecond) so that
      the names of a file's backups sort as they age.
  returned: when a file was changed
  type: str
  sample: /var/lib/kubelet/config.yaml.bak.20261201T060000.123456789Z
rolled_back:
  description: The change was applied, the kubelet did not stay healthy, and the old configuration was put back.
  returned: always
  type: bool
masked:
  description:
    - The fields the new config file changes that the kubelet does not run, because a flag or a drop-in sets them
      (also warned about). The file is written all the same, so the next run is no change.
  returned: when there are
  type: list
  elements: dict
  sample:
    - path: maxPods
      file: 120
      runs: 150
      from: flag --max-pods (from /etc/default/kubelet:1 ($KUBELET_EXTRA_ARGS))
cause:
  description:
    - Why the change was rolled back, in one line, in kubeletcfg's words (C(apply -o json)'s C(cause)) - what the
      watch saw and, when the kubelet said why, the explanation's summary - the class of the refusal, the field or
      flag with its value and origin (the node's file and line, or the flag and the unit line it came from), and
      the fix. The same words as C(kubeletcfg why).
  returned: when the change was rolled back
  type: str
  sample: "the kubelet (pid 4242) exited 0.52s after the restart: reserved resources beyond the node's capacity:
    kubeReserved.memory=100Ti from /var/lib/kubelet/config.yaml:7; fix: lower the reservation of memory ..."
explanation:
  description:
    - Why the restarted kubelet failed, as C(kubeletcfg why -o json) says it, read from the kubelet's own process
      only (its journal records, or its log file's lines) since the restart.
    - C(class) is the start-up refusal (or C(unknown), shown verbatim, never guessed; C(killed-signal),
      C(killed-oom), C(stopped) - not the configuration), C(field) or C(flag) what it is about, C(value) its
      effective value, C(origin) where it was set (C(kind), C(file), C(line), C(flag), C(variable), C(text)),
      C(fix) what to change where, C(words) the kubelet's own.
  returned: when the change was rolled back and kubeletcfg read the kubelet's words or its end
  type: dict
  sample:
    version: 1
    kubeletVersion: "1.37"
    class: reserved-beyond-capacity
    kind: refusal
    title: reserved resources beyond the node's capacity
    field: kubeReserved.memory
    value: 100Ti
    origin: {kind: file, file: /var/lib/kubelet/config.yaml, line: 7, text: "/var/lib/kubelet/config.yaml:7"}
    fix: "lower the reservation of memory (kubeReserved + systemReserved + evictionHard) below the node's capacity ..."
    words: "Failed to start ContainerManager: invalid Node Allocatable configuration. ..."
kubeadm:
  description:
    - On a kubeadm node, what the next C(kubeadm upgrade node) does with the change (I(reverted), the fields it would
      undo) and where it was kept (I(persist), I(patchFile)).
  returned: on a node kubeadm set up, for a change of its config.yaml
  type: dict
  sample:
    kubeadmVersion: "1.37"
    reverted: []
    persist: patch
    patchFile: /etc/kubernetes/patches/kubeletconfigurationzz-kubeletcfg+merge.yaml
kubelet_version:
  description: The kubelet minor the change was judged for.
  returned: when kubeletcfg planned the change
  type: str
  sample: "1.31"
restart_to_healthy_s:
  description: Seconds from the restart to the kubelet's first healthy answer (the stability window excluded).
  returned: when the change was applied and the kubelet stayed healthy
  type: float
  sample: 1.42
msg:
  description:
    - What happened; on failure kubeletcfg's error or the kubelet's own, in the module's words (options, not
      kubeletcfg's flags; the operator's input, not the module's temporary files).
    - After a rollback, whether the kubelet is healthy on the old configuration (C(rolled back to ...)) or not
      (C(... but the kubelet is not healthy on it either)), and why it failed (see I(cause)) - the field and
      where it was set.
  returned: always
  type: str
  sample: "rolled back to /var/lib/kubelet/config.yaml.bak.20261201T060000.123456789Z: the kubelet (pid 4242) exited 0.61s
    after the restart: systemd not running on this host: cgroupDriver=systemd from /var/lib/kubelet/config.yaml:4;
    fix: set cgroupDriver: cgroupfs at /var/lib/kubelet/config.yaml:4"
rc:
  description:
    - kubeletcfg's exit code. 2, refused before anything was written, or an error (also a rollback after which the
      kubelet is not healthy on the old configuration either, with I(rolled_back=true)); 3, rolled back and healthy on
      the old configuration; below 0, killed by that signal.
  returned: when kubeletcfg ran and failed
  type: int
  sample: 3
cmd:
  description: The kubeletcfg command that was run.
  returned: when kubeletcfg ran
  type: list
  elements: str
stderr:
  description: kubeletcfg's progress lines and error.
  returned: when kubeletcfg ran
  type: str
"""

import json
import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubeletcfg.kubelet.plugins.module_utils.kubeletcfg import (
    Kubeletcfg, KubeletcfgError, failure_message, node_warnings, speak_options,
)

try:
    import yaml
    HAS_YAML = True
except ImportError:
    HAS_YAML = False

CONFIG_HEAD = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}

# What to change: exactly one of these (migrate only when true).
WHAT = ("config", "content", "src", "config_patch", "dropins", "migrate", "from_kubeadm")
DRAIN_OPTIONS = ("drain_timeout", "delete_emptydir_data", "force", "grace_period")


def argument_spec():
    return dict(
        config=dict(type="dict"),
        content=dict(type="str"),
        src=dict(type="path"),
        remote_src=dict(type="bool", default=False),
        config_patch=dict(type="dict"),
        dropins=dict(type="dict"),
        migrate=dict(type="bool"),
        config_path=dict(type="path"),
        from_kubeadm=dict(type="bool"),
        persist=dict(type="str", choices=["patch", "dropin"]),
        patches_dir=dict(type="path"),
        force_unmanaged=dict(type="bool", default=False),
        kubeadm_configmap=dict(type="path"),
        kubeadm_version=dict(type="str"),
        kubelet_version=dict(type="str"),
        node_name=dict(type="str"),
        root=dict(type="path"),
        from_files=dict(type="list", elements="path"),
        kubelet_args=dict(type="list", elements="str"),
        restart_command=dict(type="str"),
        unit=dict(type="str"),
        pid_file=dict(type="path"),
        kubelet_log=dict(type="path"),
        allow_insecure=dict(type="bool", default=False),
        skip_preflight=dict(type="bool", default=False),
        drained=dict(type="bool", default=False),
        health_timeout=dict(type="int"),
        stable_for=dict(type="int"),
        verify_configz=dict(type="bool", default=False),
        kubelet_url=dict(type="str"),
        client_cert=dict(type="path"),
        client_key=dict(type="path"),
        kubelet_ca=dict(type="path"),
        insecure_skip_tls_verify=dict(type="bool", default=False),
        keep_backups=dict(type="int"),
        kubeconfig=dict(type="path"),
        context=dict(type="str"),
        drain=dict(type="bool", default=False),
        drain_timeout=dict(type="int"),
        delete_emptydir_data=dict(type="bool", default=False),
        force=dict(type="bool", default=False),
        grace_period=dict(type="int"),
        state_dir=dict(type="path"),
        kubeletcfg_binary=dict(type="path"),
    )


def render(doc):
    """A dict as a config file: YAML when PyYAML is there (JSON is YAML too)."""
    if HAS_YAML:
        return yaml.safe_dump(doc, default_flow_style=False, sort_keys=False)
    return json.dumps(doc, indent=2) + "\n"


def as_yaml(raw):
    if raw is None:
        return ""
    if HAS_YAML:
        return yaml.safe_dump(raw, default_flow_style=False, sort_keys=True)
    return json.dumps(raw, indent=2, sort_keys=True) + "\n"


def fragment(doc):
    out = dict(CONFIG_HEAD)
    out.update(doc)
    return out


class Inputs(object):
    """The files kubeletcfg apply reads, written for it, and what the
    operator calls each (for messages)."""

    def __init__(self, module):
        self.module = module
        self.files, self.patch, self.dropins, self.absent = [], None, [], []
        self.labels = {}

    def temp(self, text, name, label, keep_position):
        fd, path = tempfile.mkstemp(prefix="kubeletcfg-", suffix="-" + name, dir=self.module.tmpdir)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.labels[path] = (label, keep_position)
        return path


def problems(p):
    """The combinations of options kubeletcfg would refuse (or ignore), found
    before it runs, in check mode too."""
    out = []
    files = WHAT[:-2]
    if not p["migrate"] and not p["from_kubeadm"] and not any(p[k] is not None for k in files):
        out.append("one of the following is required: %s (migrate: true, from_kubeadm: true)" % ", ".join(WHAT))
    if p["migrate"]:
        given = [k for k in files if p[k] is not None] + (["from_kubeadm"] if p["from_kubeadm"] else [])
        if given:
            out.append("migrate: true takes the flags from the node: not with %s" % ", ".join(given))
    elif p["config_path"] is not None:
        out.append("config_path goes with migrate: true")
    if p["from_kubeadm"]:
        given = [k for k in files if p[k] is not None]
        if given:
            out.append("from_kubeadm: true takes the file from kubeadm's ConfigMap: not with %s" % ", ".join(given))
        if p["kubeconfig"] is None and p["kubeadm_configmap"] is None:
            out.append("from_kubeadm: true needs kubeadm's ConfigMap: kubeconfig, or kubeadm_configmap")
    if not p["drain"]:
        given = [k for k in DRAIN_OPTIONS if p[k] not in (None, False)]
        if given:
            out.append("%s only with drain: true (and kubeconfig)" % ", ".join(given))
    for name in sorted(p["dropins"] or {}):
        if name != os.path.basename(name) or not name.endswith(".conf") or name.startswith(".") or name == ".conf":
            out.append("dropins: %r is not a drop-in's file name (a plain name ending in .conf, no directory)" % name)
    return out


def inputs(module, fail):
    """Writes the module's inputs to files for kubeletcfg apply."""
    p = module.params
    n = Inputs(module)
    if p["config"] is not None:
        n.files.append(n.temp(render(fragment(p["config"])), "config.yaml", "config", False))
    elif p["content"] is not None:
        # Named content:LINE:COLUMN in messages; the action plugin renames
        # it to the src it read on the controller.
        n.files.append(n.temp(p["content"], "config.yaml", "content", True))
    elif p["src"] is not None:
        if os.path.isdir(p["src"]):
            fail("src %s is a directory on the node: give a file" % p["src"])
        if not os.path.isfile(p["src"]):
            fail("src %s: no such file on the node" % p["src"])
        n.files.append(p["src"])
    elif p["config_patch"] is not None:
        n.patch = n.temp(json.dumps(p["config_patch"], indent=2) + "\n", "patch.json", "config_patch", False)
    for name, value in sorted((p["dropins"] or {}).items()):
        if isinstance(value, dict) and value.get("state") == "absent":
            if len(value) != 1:
                fail("dropins.%s: state: absent takes no other keys" % name)
            n.absent.append(name)
        elif isinstance(value, dict):
            n.dropins.append((name, n.temp(render(fragment(value)), name, "dropins.%s" % name, False)))
        elif isinstance(value, str):
            n.dropins.append((name, value))
        else:
            fail("dropins.%s: a dict (a KubeletConfiguration fragment), the path of a file on the node, or {state: absent}" % name)
    return n


def file_diffs(files):
    """Ansible diffs of the files kubeletcfg writes (its "files" answer)."""
    out = []
    for f in files or []:
        out.append(dict(before=f.get("before") or "", after=f.get("after") or "",
                        before_header=f.get("path"), after_header=f.get("path")))
    return out


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        mutually_exclusive=[("config", "content", "src", "config_patch"),
                            ("dropins", "config"), ("dropins", "content"), ("dropins", "src"), ("dropins", "config_patch")],
        required_one_of=[WHAT],
        required_by={"client_key": "client_cert", "context": "kubeconfig", "restart_command": "pid_file",
                     "pid_file": "restart_command", "kubelet_log": "restart_command"},
        required_if=[("drain", True, ("kubeconfig",)), ("remote_src", True, ("src",))],
        supports_check_mode=True,
    )
    p = module.params
    # Every result, failed or not, carries these (RETURN: always).
    result = dict(changed=False, changes=[], writes=[], removes=[], rolled_back=False)
    labels = {}

    def fail(msg, **more):
        result.update(more)
        result["msg"] = failure_message(msg, labels, ran="cmd" in result)
        module.fail_json(**result)

    for problem in problems(p):
        fail(problem)
    try:
        kc = Kubeletcfg(module, p["kubeletcfg_binary"])
        n = inputs(module, fail)
        labels = n.labels
        argv = kc.apply_argv(p, n.files, n.patch, n.dropins, n.absent, check=module.check_mode)
        answer = kc.apply(argv)
    except KubeletcfgError as e:
        fail(str(e), **e.result)
    result.update(cmd=argv, stderr=answer.stderr)
    for w in node_warnings(answer.stderr):
        module.warn(speak_options(w, labels))
    out, rc = answer.outcome, answer.rc
    if out is None:
        # Refused before anything was planned.
        fail(answer.failure(), rc=rc)

    result.update(
        changes=out["changes"],
        writes=out["writes"],
        removes=out.get("removes") or [],
        config_file=out["configFile"],
        rolled_back=out["rolledBack"],
        kubelet_version=out["kubeletVersion"],
    )
    if out.get("backup"):
        result["backup_file"] = out["backup"]
    if out.get("masked"):
        result["masked"] = out["masked"]
    if out.get("kubeadm"):
        result["kubeadm"] = out["kubeadm"]
        for n in out["kubeadm"].get("notes") or []:
            module.warn("kubeadm: %s" % n)
    if out.get("breaks"):
        result["breaks"] = out["breaks"]
        for b in out["breaks"]:
            module.warn("CIS %s would fail: %s (%s)" % (b.get("id"), b.get("title"), b.get("value")))
    if out.get("healthyAfterNs") and not out["rolledBack"]:
        result["restart_to_healthy_s"] = round(out["healthyAfterNs"] / 1e9, 3)
    if module._diff:
        header = "%s (effective, kubelet %s)" % (out["configFile"], out["kubeletVersion"])
        effective = dict(before=as_yaml(out.get("before")), after=as_yaml(out.get("after")),
                         before_header=header, after_header=header)
        files = file_diffs(out.get("files"))
        if files and (p["migrate"] or effective["before"] == effective["after"]):
            result["diff"] = [effective] + files
        else:
            result["diff"] = effective
    for m in out.get("masked") or []:
        module.warn("%s: the file now sets %s, but the kubelet runs %s from %s; the file's value takes effect once that is gone" % (
            m.get("path"), json.dumps(m.get("file")), json.dumps(m.get("runs")), m.get("from")))
    for w in out.get("warnings") or []:
        module.warn(speak_options(w if isinstance(w, str) else w.get("message", json.dumps(w)), labels))
    for c in out["changes"]:
        if "security" in c.get("classes", []):
            module.warn("security: %s %s -> %s changes the kubelet API's exposure" % (c["path"], json.dumps(c.get("old")), json.dumps(c.get("new"))))
        if "drain" in c.get("classes", []) and module.check_mode and not (p["drained"] or p["drain"]):
            module.warn("drain: the change of %s needs the node drained first (drained: true, or drain: true with kubeconfig)" % c["path"])

    if module.check_mode:
        result["changed"] = len(result["writes"]) > 0 or len(result["removes"]) > 0
        if rc not in (0, 1):
            result["writes"], result["removes"] = [], []
            fail(answer.failure(), rc=rc)
        result["msg"] = "would change %d fields" % len(out["changes"]) if result["changed"] else "no change"
        module.exit_json(**result)

    result["changed"] = bool(out["applied"])
    if not out["applied"]:
        # Nothing was written: a refusal, or no change.
        result["writes"], result["removes"] = [], []
    if out["rolledBack"]:
        # Why: kubeletcfg's explanation of the kubelet's own words (the
        # field, its origin, the fix), summed up in cause.
        if out.get("cause"):
            result["cause"] = out["cause"]
        if out.get("explanation"):
            result["explanation"] = out["explanation"]
        # rc 3: rolled back, the kubelet healthy on the old configuration;
        # rc 2: kubeletcfg's error says what is wrong with the old one too
        # (and the cause of the rollback).
        fail(answer.error or "rolled back to %s: %s" % (out.get("backup", "the old configuration"), out.get("cause", "")), rc=rc)
    if rc != 0:
        fail(answer.failure(), rc=rc)
    if out["applied"]:
        result["msg"] = "applied %s (backup %s); healthy %.2fs after the restart" % (
            out["configFile"], out.get("backup", "none"), out.get("healthyAfterNs", 0) / 1e9)
    else:
        result["msg"] = "no change"
    module.exit_json(**result)


if __name__ == "__main__":
    main()
