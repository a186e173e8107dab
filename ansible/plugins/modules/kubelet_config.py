#!/usr/bin/python
# -*- coding: utf-8 -*-

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
    needs a drain, node locked) fails with kubeletcfg's error and I(changed=false).
requirements:
  - kubeletcfg on the node (see the C(kubeletcfg.kubelet.install) role)
attributes:
  check_mode:
    support: full
    description: kubeletcfg's dry run; the classified change list is returned and nothing is touched.
  diff_mode:
    support: full
    description: Before and after of the effective configuration the kubelet runs, in YAML.
  action:
    support: full
    description: An action plugin sets I(node_name) to the inventory hostname and reads I(src) on the controller.
options:
  config:
    description:
      - The desired KubeletConfiguration as a dict, written as the kubelet's C(--config) file.
      - I(kind) and I(apiVersion) are added when missing.
      - Mutually exclusive with I(content), I(src) and I(migrate).
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
  dropins:
    description:
      - Drop-ins of the kubelet's C(--config-dir) to create or replace, in the same transaction as the config file,
        from file name (ending in C(.conf)) to a dict (a KubeletConfiguration fragment) or to the path of a file on the node.
      - "C({state: absent}) removes that drop-in (C(kubeletcfg apply --remove-dropin)); one that is not there is no change."
    type: dict
  migrate:
    description:
      - Move the node's legacy kubelet flags into the config file (C(kubeletcfg apply --from-migrate)); the environment
        files the flags live in are rewritten in the same transaction.
    type: bool
    default: false
  config_path:
    description: With I(migrate), the config file to create when the kubelet runs without C(--config).
    type: path
  kubelet_version:
    description: The node's kubelet version (C(1.31), C(v1.31.4)). Default, what C(kubelet --version) on the node says.
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
    description: The kubelet's command line, when it is not read from the node.
    type: list
    elements: str
  restart_command:
    description: Shell command that restarts the kubelet. Default, restart I(unit) over systemd's D-Bus API.
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
    description: The kubeconfig context to use (default its current context).
    type: str
  drain:
    description:
      - With I(kubeconfig), cordon and drain the node before the change (Eviction API, PodDisruptionBudgets respected,
        DaemonSet and static pods left) and uncordon it once healthy. A drain that cannot finish fails the task with
        nothing written. Changes classified C(drain) are then allowed without I(drained).
    type: bool
    default: false
  drain_timeout:
    description: Seconds the drain may take (evictions a PodDisruptionBudget refuses are retried until then).
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
    description: Seconds the restarted kubelet has to become healthy. Default, kubeletcfg's.
    type: int
  stable_for:
    description: Seconds it must then stay healthy. Default, kubeletcfg's.
    type: int
  verify_configz:
    description: Once stable, the kubelet's C(/configz) must serve the intended configuration, else the change is rolled back.
    type: bool
    default: false
  kubelet_url:
    description: The kubelet's C(/configz) URL, for I(verify_configz).
    type: str
  client_cert:
    description: Client certificate the kubelet accepts, for I(verify_configz).
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
    description: How many backups of the config file to keep (0, all). Default, kubeletcfg's.
    type: int
  state_dir:
    description: kubeletcfg's own directory on the node (lock, journal, backup records). Default, kubeletcfg's (C(/var/lib/kubeletcfg), inside I(root) when given).
    type: path
  kubeletcfg_binary:
    description: Path of kubeletcfg on the node. Default, C(kubeletcfg) on C(PATH) or in C(/usr/local/bin).
    type: path
notes:
  - Exactly one of I(config), I(content), I(src), I(dropins) or I(migrate) says what to change (I(dropins) may go with
    one of the first three).
seealso:
  - name: kubeletcfg
    description: The tool this module runs.
    link: https://github.com/kubeletcfg/kubeletcfg
author:
  - kubeletcfg authors
"""

EXAMPLES = r"""
- name: Raise maxPods, restart the kubelet, roll back if it does not stay healthy
  kubeletcfg.kubelet.kubelet_config:
    config:
      apiVersion: kubelet.config.k8s.io/v1beta1
      kind: KubeletConfiguration
      cgroupDriver: systemd
      maxPods: 150

- name: The config file from the controller, verified on /configz once stable
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
        apiVersion: kubelet.config.k8s.io/v1beta1
        kind: KubeletConfiguration
        systemReserved:
          memory: 500Mi

- name: Move legacy flags into the config file
  kubeletcfg.kubelet.kubelet_config:
    migrate: true
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
  returned: always
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
  description: Every file the change writes (in check mode, would write).
  returned: always
  type: list
  elements: str
removes:
  description: The drop-ins the change removes (in check mode, would remove).
  returned: always
  type: list
  elements: str
backup_file:
  description: The backup of the file changed.
  returned: when a file was changed
  type: str
  sample: /var/lib/kubelet/config.yaml.bak.20261201T060000Z
rolled_back:
  description: The change was applied, the kubelet did not stay healthy, and the old configuration is back.
  returned: always
  type: bool
kubelet_version:
  description: The kubelet minor the change was judged for.
  returned: when kubeletcfg got that far
  type: str
  sample: "1.31"
restart_to_healthy_s:
  description: Seconds from the restart to the kubelet's first healthy answer (the stability window excluded).
  returned: when the kubelet was restarted
  type: float
  sample: 1.42
msg:
  description: What happened, and on failure kubeletcfg's error or the kubelet's own.
  returned: always
  type: str
  sample: "rolled back: the kubelet (pid 4242) exited 0.61s after the restart: failed to run Kubelet: ..."
rc:
  description: kubeletcfg's exit code (2 refused, 3 rolled back).
  returned: on failure
  type: int
cmd:
  description: The kubeletcfg command that was run.
  returned: always
  type: list
  elements: str
stderr:
  description: kubeletcfg's progress lines and error.
  returned: always
  type: str
"""

import os
import json
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubeletcfg.kubelet.plugins.module_utils.kubeletcfg import (
    Kubeletcfg, KubeletcfgError,
)

try:
    import yaml
    HAS_YAML = True
except ImportError:
    HAS_YAML = False

CONFIG_HEAD = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}


def argument_spec():
    return dict(
        config=dict(type="dict"),
        content=dict(type="str"),
        src=dict(type="path"),
        remote_src=dict(type="bool", default=False),
        dropins=dict(type="dict"),
        migrate=dict(type="bool", default=False),
        config_path=dict(type="path"),
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


def write_temp(module, text, name):
    fd, path = tempfile.mkstemp(prefix="kubeletcfg-", suffix="-" + name, dir=module.tmpdir)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def fragment(doc):
    out = dict(CONFIG_HEAD)
    out.update(doc)
    return out


def inputs(module):
    """The files kubeletcfg apply reads: (-f files, [(drop-in name, file)])."""
    p = module.params
    files = []
    if p["config"] is not None:
        files.append(write_temp(module, render(fragment(p["config"])), "config.yaml"))
    elif p["content"] is not None:
        files.append(write_temp(module, p["content"], "config.yaml"))
    elif p["src"] is not None:
        if not os.path.isfile(p["src"]):
            module.fail_json(msg="src %s: no such file on the node" % p["src"], changed=False)
        files.append(p["src"])
    dropins, absent = [], []
    for name, value in sorted((p["dropins"] or {}).items()):
        if isinstance(value, dict) and value.get("state") == "absent":
            if len(value) != 1:
                module.fail_json(msg="dropins.%s: state: absent takes no other keys" % name, changed=False)
            absent.append(name)
        elif isinstance(value, dict):
            dropins.append((name, write_temp(module, render(fragment(value)), name)))
        elif isinstance(value, str):
            dropins.append((name, value))
        else:
            module.fail_json(msg="dropins.%s: a dict (a KubeletConfiguration fragment) or the path of a file on the node" % name, changed=False)
    return files, dropins, absent


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        mutually_exclusive=[("config", "content", "src", "migrate"), ("dropins", "migrate")],
        required_one_of=[("config", "content", "src", "dropins", "migrate")],
        required_by={"client_key": "client_cert", "context": "kubeconfig"},
        required_if=[("drain", True, ("kubeconfig",))],
        supports_check_mode=True,
    )
    p = module.params
    try:
        kc = Kubeletcfg(module, p["kubeletcfg_binary"])
        files, dropins, absent = inputs(module)
        argv = kc.apply_argv(p, files, dropins, absent, check=module.check_mode)
        rc, out, error, stderr = kc.apply(argv)
    except KubeletcfgError as e:
        module.fail_json(msg=str(e), changed=False)

    # No rc in a result that succeeds: Ansible fails any result whose rc is
    # not 0, and a dry run that would change exits 1.
    result = dict(cmd=argv, stderr=stderr, changes=[], writes=[], rolled_back=False, changed=False)
    if out is None:
        # Refused before anything was written: no plan to show.
        module.fail_json(msg=error or "kubeletcfg apply failed (exit %d)" % rc, rc=rc, **result)

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
    if out.get("breaks"):
        result["breaks"] = out["breaks"]
        for b in out["breaks"]:
            module.warn("CIS %s would fail: %s (%s)" % (b.get("id"), b.get("title"), b.get("value")))
    if out.get("healthyAfterNs"):
        result["restart_to_healthy_s"] = round(out["healthyAfterNs"] / 1e9, 3)
    if module._diff:
        header = "%s (effective, kubelet %s)" % (out["configFile"], out["kubeletVersion"])
        result["diff"] = dict(before=as_yaml(out.get("before")), after=as_yaml(out.get("after")),
                              before_header=header, after_header=header)
    for w in out.get("warnings") or []:
        module.warn(w if isinstance(w, str) else w.get("message", json.dumps(w)))
    for c in out["changes"]:
        if "security" in c.get("classes", []):
            module.warn("security: %s %s -> %s changes the kubelet API's exposure" % (c["path"], json.dumps(c.get("old")), json.dumps(c.get("new"))))
        if "drain" in c.get("classes", []) and module.check_mode and not p["drained"]:
            module.warn("drain: the change of %s needs the node drained first (drained: true)" % c["path"])

    if module.check_mode:
        result["changed"] = len(out["writes"]) > 0 or len(out.get("removes") or []) > 0
        result["msg"] = "would change %d fields" % len(out["changes"]) if result["changed"] else "no change"
        if rc not in (0, 1):
            module.fail_json(msg=error, rc=rc, **result)
        module.exit_json(**result)

    result["changed"] = bool(out["applied"])
    if out["rolledBack"]:
        module.fail_json(msg="rolled back: " + (out.get("cause") or error), rc=rc, **result)
    if rc != 0:
        module.fail_json(msg=error, rc=rc, **result)
    if out["applied"]:
        result["msg"] = "applied %s (backup %s); healthy %.2fs after the restart" % (
            out["configFile"], out.get("backup", "none"), out.get("healthyAfterNs", 0) / 1e9)
    else:
        result["msg"] = "no change"
    module.exit_json(**result)


if __name__ == "__main__":
    main()
